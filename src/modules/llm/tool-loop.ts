import type { ChatEvent, ChatMessage, ToolCall, ToolSpec } from './types.js';

/**
 * The one agent loop: the model answers, the tools it calls run, their results go back, until it answers
 * without calling any or the rounds run out. The platform's agents and n8n's AI Agent node are adapters
 * around it (their own prompts, tools and step records); how a model is reached is the caller's.
 */

/** One model answer as it streams. */
export interface LoopModelAnswer {
  /** The model that answered (after any fallback). */
  model: string;
  events: AsyncIterable<ChatEvent>;
}

export interface ToolLoopHooks {
  /** One model call on the conversation so far; `tools` absent: this round offers none. */
  chat(messages: ChatMessage[], tools: ToolSpec[] | undefined): Promise<LoopModelAnswer>;
  /**
   * Runs one tool call and answers its output; what it throws is given to the model as the result
   * (`{error}`), so a bad call costs a round, not the run. `index` is the call's place in its answer.
   */
  execute(call: ToolCall, id: string, index: number): Promise<unknown>;
}

export interface ToolLoopOptions {
  tools: ToolSpec[];
  /** Rounds that offer the tools. */
  maxRounds: number;
  /**
   * After `maxRounds` rounds of tool calls, one more answer without tools (the platform's agents); false:
   * the loop ends `exhausted` instead (n8n's max iterations).
   */
  answerAfterTools: boolean;
  /** Calls run from one answer; the rest are answered with an error, not run. */
  maxCallsPerRound?: number;
  /** A tool's output as the model sees it, at most this long (JSON text). */
  maxToolOutputChars?: number;
  /** Called with each round's assembled calls before they run; a value ends the loop with it (n8n's output parser tool). */
  finish?(calls: ToolCall[]): unknown;
  /** Makes up a call id when the provider sent none. */
  newId(): string;
  /**
   * Calls for which this is true are not run here (a client's tools): the others of the round run,
   * then the loop ends with these in `pending`, the conversation ready for their results.
   */
  defer?(call: ToolCall): boolean;
}

export type LoopEvent =
  | { type: 'delta'; delta: string }
  | {
      type: 'model';
      model: string;
      finishReason: string;
      chars: number;
      messages: number;
      toolCalls: string[];
      offered: string[];
      ms: number;
    }
  | { type: 'tool.call'; id: string; name: string; arguments: unknown }
  | { type: 'tool.result'; id: string; name: string; arguments: unknown; output: unknown; ms: number };

export interface LoopResult {
  content: string;
  usage: { promptTokens: number; completionTokens: number };
  /** Model calls made. */
  calls: number;
  /** True when the model still called tools after the last round that offered them. */
  exhausted: boolean;
  /** What `finish` returned, when it ended the loop. */
  finished?: unknown;
  /** The calls `defer` kept back (with their ids): the loop ended waiting for their results. */
  pending?: ToolCall[];
}

export const DEFAULT_MAX_CALLS_PER_ROUND = 8;
export const DEFAULT_MAX_TOOL_OUTPUT_CHARS = 20_000;

const elapsed = (since: number) => Math.round((performance.now() - since) * 100) / 100;

/** A tool's output, cut to `max` characters of JSON when longer. */
export function boundedOutput(output: unknown, max = DEFAULT_MAX_TOOL_OUTPUT_CHARS): unknown {
  const text = typeof output === 'string' ? output : (JSON.stringify(output) ?? 'null');
  if (text.length <= max) return output;
  return { truncated: true, preview: text.slice(0, max) };
}

/** Runs the loop on `messages` (changed in place: the conversation grows with each round). */
export async function* runToolLoop(
  hooks: ToolLoopHooks,
  messages: ChatMessage[],
  options: ToolLoopOptions,
): AsyncGenerator<LoopEvent, LoopResult, undefined> {
  const usage = { promptTokens: 0, completionTokens: 0 };
  const perRound = options.maxCallsPerRound ?? DEFAULT_MAX_CALLS_PER_ROUND;
  const canCall = options.tools.length > 0 && options.maxRounds > 0;
  let content = '';
  let calls = 0;
  for (let round = 0; ; round++) {
    const offer = canCall && round < options.maxRounds;
    const started = performance.now();
    const answer = await hooks.chat([...messages], offer ? options.tools : undefined);
    calls++;
    let text = '';
    const toolCalls: ToolCall[] = [];
    let finish = 'stop';
    for await (const event of answer.events) {
      if (event.type === 'delta') {
        if (event.content) {
          text += event.content;
          yield { type: 'delta', delta: event.content };
        }
        if (event.toolCalls) toolCalls.push(...event.toolCalls);
      } else {
        finish = event.doneReason;
        if (event.usage) {
          usage.promptTokens += event.usage.promptTokens;
          usage.completionTokens += event.usage.completionTokens;
        }
      }
    }
    content += text;
    yield {
      type: 'model',
      model: answer.model,
      finishReason: finish,
      chars: text.length,
      messages: messages.length,
      toolCalls: toolCalls.map((c) => c.name),
      offered: offer ? options.tools.map((t) => t.function.name) : [],
      ms: elapsed(started),
    };
    if (toolCalls.length === 0) return { content, usage, calls, exhausted: false };
    if (!offer) return { content, usage, calls, exhausted: canCall };
    const finished = options.finish?.(toolCalls);
    if (finished !== undefined) return { content, usage, calls, exhausted: false, finished };

    const withIds = toolCalls.map((call) => ({ ...call, id: call.id ?? options.newId() }));
    messages.push({ role: 'assistant', content: text, toolCalls: withIds });
    const pending: ToolCall[] = [];
    for (const [index, call] of withIds.entries()) {
      if (index < perRound && options.defer?.(call)) {
        pending.push(call);
        continue;
      }
      yield { type: 'tool.call', id: call.id, name: call.name, arguments: call.arguments };
      const toolStarted = performance.now();
      let output: unknown;
      if (index >= perRound) output = { error: `at most ${perRound} tool calls run per answer` };
      else {
        try {
          output = await hooks.execute(call, call.id, index);
        } catch (error) {
          output = { error: error instanceof Error ? error.message : String(error) };
        }
      }
      const shown = boundedOutput(output, options.maxToolOutputChars);
      yield {
        type: 'tool.result',
        id: call.id,
        name: call.name,
        arguments: call.arguments,
        output: shown,
        ms: elapsed(toolStarted),
      };
      messages.push({
        role: 'tool',
        content: typeof shown === 'string' ? shown : JSON.stringify(shown),
        toolCallId: call.id,
        toolName: call.name,
      });
    }
    if (pending.length > 0) return { content, usage, calls, exhausted: false, pending };
    if (!options.answerAfterTools && round + 1 >= options.maxRounds)
      return { content, usage, calls, exhausted: true };
  }
}
