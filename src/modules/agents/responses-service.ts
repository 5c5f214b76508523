import type { Principal } from '../../core/auth/principal.js';
import type { Clock } from '../../core/clock.js';
import { notFound } from '../../core/errors.js';
import { newId } from '../../core/ids.js';
import type { ChatMessage } from '../llm/index.js';
import { type RunnerDeps, runTurn, type TurnEvent } from './agent-runner.js';
import type { AgentDefinition } from './agent-service.js';
import type { AgentStore } from './agent-store.js';
import { type FileRef, type PartRef, partsRefused, withoutAttachments } from './content-parts.js';
import {
  clientToolsOf,
  functionCallItem,
  inputMessages,
  messageItem,
  responseFormatOf,
  toolChoiceOf,
} from './responses-format.js';
import type { ResponsesBodyT } from './responses-schemas.js';
import { conversationWindow } from './responses-window.js';
import { checkTurnRequest } from './turn-request.js';

type Item = Record<string, unknown>;

/** Model calls one response may make (its tools are the client's: the first call of one ends it). */
const MAX_ROUNDS = 10;

/** A response under way: run it for the turn's events and the response object. */
export interface ResponseTurn {
  /** The response object before it ran (`in_progress`, no output): the stream's first event. */
  started: Item;
  /** The id its text answer's message item has (streamed before the answer ends). */
  messageId: string;
  run(signal: AbortSignal): AsyncGenerator<TurnEvent, Item>;
}

/**
 * OpenAI's Responses API over the agent runtime: the request is a one-off agent (its instructions,
 * model and the client's function tools); `previous_response_id` continues a stored conversation.
 */
export class ResponsesService {
  constructor(
    private readonly store: AgentStore,
    private readonly runner: RunnerDeps,
    private readonly clock: Clock,
  ) {}

  async get(principal: Principal, id: string): Promise<Item> {
    const row = await this.store.getResponse(principal.accountId, id);
    if (!row) throw notFound('NOT_FOUND', 'Response', id);
    return JSON.parse(row.response) as Item;
  }

  async start(principal: Principal, body: ResponsesBodyT): Promise<ResponseTurn> {
    let earlier: ChatMessage[] = [];
    if (body.previous_response_id) {
      const row = await this.store.getResponse(principal.accountId, body.previous_response_id);
      if (!row) throw notFound('NOT_FOUND', 'Response', body.previous_response_id);
      earlier = JSON.parse(row.messages) as ChatMessage[];
    }
    const seen: { firstImage?: PartRef; firstFile?: FileRef } = {};
    const added = inputMessages(body.input, earlier, seen);
    const refused = partsRefused(body.model, this.runner.inputs(principal.accountId, body.model), seen);
    if (refused) throw refused;
    const clientTools = clientToolsOf(body.tools);
    const toolChoice = toolChoiceOf(body.tool_choice);
    const responseFormat = responseFormatOf(body.text);
    const agent: AgentDefinition = {
      name: 'responses',
      instructions: body.instructions ?? '',
      model: body.model,
      knowledgeTopics: [],
      tools: [],
      temperature: body.temperature ?? null,
      maxToolCalls: MAX_ROUNDS,
    };
    checkTurnRequest(agent, {
      tools: clientTools,
      ...(toolChoice ? { toolChoice } : {}),
      ...(responseFormat ? { responseFormat } : {}),
    });
    const id = newId('resp');
    const createdAt = Math.floor(this.clock.now().getTime() / 1000);
    const truncation = body.truncation === 'auto' ? 'auto' : 'disabled';
    const conversation = conversationWindow(earlier, added, truncation);
    const base: Item = {
      id,
      object: 'response',
      created_at: createdAt,
      status: 'in_progress',
      error: null,
      incomplete_details: null,
      instructions: body.instructions ?? null,
      max_output_tokens: body.max_output_tokens ?? null,
      model: body.model,
      output: [],
      parallel_tool_calls: body.parallel_tool_calls ?? true,
      previous_response_id: body.previous_response_id ?? null,
      reasoning: { effort: null, summary: null },
      store: true,
      temperature: body.temperature ?? null,
      text: { format: body.text?.format ?? { type: 'text' } },
      tool_choice: body.tool_choice ?? 'auto',
      tools: body.tools ?? [],
      top_p: body.top_p ?? null,
      truncation,
      usage: null,
      metadata: {},
    };
    const { store, runner } = this;
    const messageId = newId('msg');
    const now = () => this.clock.now().toISOString();
    return {
      started: base,
      messageId,
      async *run(signal) {
        const messages: ChatMessage[] = [
          ...(agent.instructions.trim() !== ''
            ? [{ role: 'system' as const, content: agent.instructions }]
            : []),
          ...conversation,
        ];
        const result = yield* runTurn(runner, {
          principal,
          agent,
          userId: null,
          history: [],
          content: '',
          signal,
          messages,
          endpoint: 'responses',
          clientTools,
          ...(toolChoice ? { toolChoice } : {}),
          ...(responseFormat ? { responseFormat } : {}),
          chatOptions: {
            ...(body.top_p != null ? { topP: body.top_p } : {}),
            ...(body.max_output_tokens != null ? { maxTokens: body.max_output_tokens } : {}),
          },
        });
        const output: Item[] = [];
        if (result.content !== '') output.push(messageItem(result.content, messageId));
        for (const call of result.pending ?? [])
          output.push(
            functionCallItem({ id: call.id as string, name: call.name, arguments: call.arguments }),
          );
        // Stored for previous_response_id without image or file bytes: a later turn reads their notes.
        const transcript = messages.filter((m) => m.role !== 'system').map(withoutAttachments);
        if (!result.pending) transcript.push({ role: 'assistant', content: result.content });
        const { promptTokens, completionTokens } = result.usage;
        const response: Item = {
          ...base,
          status: 'completed',
          output,
          usage: {
            input_tokens: promptTokens,
            input_tokens_details: { cached_tokens: 0 },
            output_tokens: completionTokens,
            output_tokens_details: { reasoning_tokens: 0 },
            total_tokens: promptTokens + completionTokens,
          },
        };
        await store.insertResponse({
          id,
          account_id: principal.accountId,
          model: body.model,
          messages: JSON.stringify(transcript),
          response: JSON.stringify(response),
          created_at: now(),
        });
        return response;
      },
    };
  }
}
