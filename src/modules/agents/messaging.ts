import type { Principal } from '../../core/auth/principal.js';
import { AppError, isAppError } from '../../core/errors.js';
import type {
  AgentEvent,
  AgentMessaging,
  MessageView,
  SendInput,
  SourceView,
  Usage,
} from './agent-events.js';
import { type RunnerDeps, runTurn, type TurnEvent, type TurnResult } from './agent-runner.js';
import type { AgentService } from './agent-service.js';
import type { AgentStore } from './agent-store.js';
import { type ConversationService, userOf } from './conversation-service.js';

/** A turn whose user message is stored: run it for its events and its stored answer. */
interface Turn {
  conversationId: string;
  userMessage: MessageView;
  run(
    signal: AbortSignal,
  ): AsyncGenerator<TurnEvent, { message: MessageView; usage: Usage; sources: SourceView[] }>;
}

/**
 * Sending a message to an agent, for the HTTP route (JSON and SSE) and the WebSocket alike: the
 * conversation (found, adopted or created), the user's message stored, the agent's turn, its answer
 * stored with its steps, sources and usage.
 */
export class AgentMessenger implements AgentMessaging {
  constructor(
    private readonly agents: AgentService,
    private readonly conversations: ConversationService,
    private readonly store: AgentStore,
    private readonly runner: RunnerDeps,
    private readonly historyLimit: number,
    /** Failures that are not the platform's errors (bugs, broken connections) are logged. */
    private readonly onUnexpected: (error: unknown) => void,
  ) {}

  async begin(principal: Principal, agentId: string, input: SendInput): Promise<Turn> {
    const { definition } = await this.agents.load(principal.accountId, agentId);
    let conversationId: string;
    let userId: string | null;
    if (input.conversationId !== undefined) {
      const row = await this.conversations.mustGet(principal, input.conversationId);
      if (row.agent_id !== null && row.agent_id !== agentId)
        throw new AppError('CONFLICT', `Conversation '${row.id}' belongs to agent '${row.agent_id}'`, {
          conversationId: row.id,
          agentId: row.agent_id,
        });
      if (row.agent_id === null) await this.store.adoptConversation(row.id, agentId);
      conversationId = row.id;
      userId = row.user_id;
    } else {
      userId = userOf(principal);
      const row = await this.conversations.insert(principal.accountId, {
        agentId,
        userId,
        title: input.content.slice(0, 80),
        metadata: {},
      });
      conversationId = row.id;
    }
    const history = (await this.store.recentMessages(conversationId, this.historyLimit)).flatMap((m) =>
      m.role === 'user' || m.role === 'assistant'
        ? [{ role: m.role as 'user' | 'assistant', content: m.content }]
        : [],
    );
    const userMessage = await this.conversations.addMessage(conversationId, {
      role: 'user',
      content: input.content,
      steps: [],
      sources: [],
      usage: null,
    });
    const runner = this.runner;
    const conversations = this.conversations;
    return {
      conversationId,
      userMessage,
      async *run(signal) {
        const result: TurnResult = yield* runTurn(runner, {
          principal,
          agent: definition,
          userId,
          history,
          content: input.content,
          signal,
        });
        const message = await conversations.addMessage(conversationId, {
          role: 'assistant',
          content: result.content,
          steps: result.steps,
          sources: result.sources,
          usage: result.usage,
        });
        return { message, usage: result.usage, sources: result.sources };
      },
    };
  }

  async send(principal: Principal, agentId: string, input: SendInput, signal: AbortSignal) {
    const turn = await this.begin(principal, agentId, input);
    return events(turn, signal, this.onUnexpected);
  }
}

/** A turn as the API's events: `message.created` first, `message.completed` or `error` last. */
export async function* events(
  turn: Turn,
  signal: AbortSignal,
  onUnexpected: (error: unknown) => void,
): AsyncGenerator<AgentEvent> {
  const conversationId = turn.conversationId;
  yield { type: 'message.created', conversationId, message: turn.userMessage };
  try {
    const run = turn.run(signal);
    for (;;) {
      const next = await run.next();
      if (next.done) {
        yield { type: 'message.completed', conversationId, ...next.value };
        return;
      }
      const e = next.value;
      if (e.type === 'delta') yield { type: 'message.delta', conversationId, delta: e.delta };
      else yield { ...e, conversationId };
    }
  } catch (error) {
    if (signal.aborted) return;
    if (!isAppError(error)) onUnexpected(error);
    const appError = isAppError(error)
      ? error
      : new AppError('UPSTREAM_ERROR', 'The agent failed mid-answer');
    yield { type: 'error', conversationId, code: appError.code, message: appError.message };
  }
}
