import type { Principal } from '../../core/auth/principal.js';
import type { Clock } from '../../core/clock.js';
import { AppError, isAppError, notFound } from '../../core/errors.js';
import { newId } from '../../core/ids.js';
import type { FileInput, ToolCall } from '../llm/index.js';
import type {
  AgentEvent,
  AgentMessaging,
  MessageView,
  SendInput,
  TurnOutcome,
  TurnRequest,
} from './agent-events.js';
import { type RunnerDeps, runTurn, type TurnEvent, type TurnState } from './agent-runner.js';
import type { AgentDefinition, AgentService } from './agent-service.js';
import type { AgentStore, RunRow } from './agent-store.js';
import { partsRefused } from './content-parts.js';
import { type ConversationService, userOf } from './conversation-service.js';
import { type MemoryService, memoryPrompt } from './memory-service.js';
import {
  allAnswered,
  approvalDeadline,
  continuation,
  type Decision,
  requiredAction,
  type StoredCall,
  withDecisions,
  withExpired,
  withOutputs,
} from './run-actions.js';
import { checkTurnRequest, type ToolOutput } from './turn-request.js';

/** A turn whose user message is stored: run it for its events and how it ended. */
export interface Turn {
  conversationId: string;
  runId: string;
  /** The user's message; null when the turn continues a paused run. */
  userMessage: MessageView | null;
  run(signal: AbortSignal): AsyncGenerator<TurnEvent, TurnOutcome>;
}

/** What a run row keeps of its request. */
interface RunOptions extends TurnRequest {
  content: string;
  /** The message's images (base64) and documents: a background run reads them from here. */
  images?: string[];
  files?: FileInput[];
  /** The user's message: a background run's history is what came before it. */
  userMessageId?: string;
}

/** Queues a background run (the agents module's job queue). */
export type EnqueueRun = (runId: string, accountId: string) => Promise<void>;

type History = Array<{ role: 'user' | 'assistant'; content: string }>;

const historyOf = (rows: Array<{ role: string; content: string }>): History =>
  rows.flatMap((m) =>
    m.role === 'user' || m.role === 'assistant'
      ? [{ role: m.role as 'user' | 'assistant', content: m.content }]
      : [],
  );

/**
 * Sending a message to an agent, for the HTTP route (JSON and SSE) and the WebSocket alike: the
 * conversation (found, adopted or created), the user's message stored, the agent's turn as a run,
 * its answer stored with its steps, sources and usage — or the run paused on a client's tool calls,
 * continued when their outputs arrive.
 */
export class AgentMessenger implements AgentMessaging {
  constructor(
    private readonly agents: AgentService,
    private readonly conversations: ConversationService,
    private readonly store: AgentStore,
    private readonly memory: MemoryService,
    private readonly runner: RunnerDeps,
    private readonly historyLimit: number,
    private readonly clock: Clock,
    /** Failures that are not the platform's errors (bugs, broken connections) are logged. */
    private readonly onUnexpected: (error: unknown) => void,
    /** Seconds a call waits for approval when its agent sets none (AGENT_APPROVAL_TIMEOUT_SECONDS). */
    private readonly approvalTimeoutSeconds = 86_400,
  ) {}

  /** Where background runs go; null until the module's queue is up (then `background` is refused). */
  enqueueRun: EnqueueRun | null = null;

  async begin(principal: Principal, agentId: string, input: SendInput): Promise<Turn>;
  async begin(
    principal: Principal,
    agentId: string,
    input: SendInput,
    options: { background: true },
  ): Promise<QueuedTurn>;
  /**
   * Stores the user's message and the turn's run. In the background (`background: true`) the run is
   * queued (the caller polls it); else the caller runs the turn.
   */
  async begin(
    principal: Principal,
    agentId: string,
    input: SendInput,
    mode: { background?: true } = {},
  ): Promise<Turn | QueuedTurn> {
    const { definition } = await this.agents.load(principal.accountId, agentId);
    checkTurnRequest(definition, input);
    const refused = partsRefused(
      definition.model,
      this.runner.inputs(principal.accountId, definition.model),
      input,
    );
    if (refused) throw refused;
    const background = mode.background ? this.enqueueRun : null;
    if (mode.background && !background)
      throw new AppError('SERVICE_UNAVAILABLE', 'Background runs are not available on this server');
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
        title: (input.content || (input.attachmentNotes?.[0] ?? '')).slice(0, 80),
        metadata: {},
      });
      conversationId = row.id;
    }
    const history = historyOf(await this.store.recentMessages(conversationId, this.historyLimit));
    // The question and its run are stored together on the locked conversation: a reset racing the
    // turn either comes first or sees the run (409), never deletes a question whose run then answers.
    // The queue and the memory are reached after it commits (a worker must find the run's row).
    const { userMessage, run, options } = await this.store.withConversationLocked(
      conversationId,
      async (store) => {
        const userMessage = await this.conversations.addMessage(
          conversationId,
          {
            role: 'user',
            // The transcript keeps what the images and files were, not their bytes: later turns read the notes.
            content: [input.content, ...(input.attachmentNotes ?? [])].filter((t) => t !== '').join('\n'),
            steps: [],
            sources: [],
            usage: null,
          },
          store,
        );
        const now = this.clock.now().toISOString();
        const options: RunOptions = {
          content: input.content,
          ...(input.images?.length ? { images: input.images } : {}),
          ...(input.files?.length ? { files: input.files } : {}),
          userMessageId: userMessage.id,
          ...(input.tools ? { tools: input.tools } : {}),
          ...(input.toolChoice ? { toolChoice: input.toolChoice } : {}),
          ...(input.responseFormat ? { responseFormat: input.responseFormat } : {}),
        };
        const run: RunRow = {
          id: newId('run'),
          account_id: principal.accountId,
          agent_id: agentId,
          conversation_id: conversationId,
          user_id: userId,
          status: background ? 'queued' : 'in_progress',
          options: JSON.stringify(options),
          state: null,
          pending: null,
          message_id: null,
          error: null,
          background: background ? 1 : 0,
          attempts: background ? 0 : 1,
          principal: background ? JSON.stringify(runPrincipal(principal)) : null,
          approval_deadline: null,
          created_at: now,
          updated_at: now,
        };
        await store.insertRun(run);
        return { userMessage, run, options };
      },
    );
    if (background) {
      await background(run.id, principal.accountId);
      return { conversationId, runId: run.id, userMessage, queued: run };
    }
    const memory = memoryPrompt(await this.memory.list(principal.accountId, agentId, conversationId, userId));
    return {
      conversationId,
      runId: run.id,
      userMessage,
      run: (signal) => this.drive(principal, run, definition, options, signal, { history, memory }),
    };
  }

  /**
   * A queued background run's turn, from its row (a worker runs it): the history before its user
   * message, the memory blocks as they are now. The caller has moved the run to in_progress.
   */
  async stored(principal: Principal, row: RunRow): Promise<Turn> {
    const { definition } = await this.agents.load(row.account_id, row.agent_id);
    const options = JSON.parse(row.options) as RunOptions;
    const before = options.userMessageId
      ? await this.store.messagesBefore(row.conversation_id, options.userMessageId, this.historyLimit)
      : [];
    // A paused run whose approvals expired continues from where it paused (every call answered).
    if (row.state && row.pending)
      return this.continued(principal, row, JSON.parse(row.pending) as StoredCall[]);
    const history = historyOf(before);
    const memory = memoryPrompt(
      await this.memory.list(row.account_id, row.agent_id, row.conversation_id, row.user_id),
    );
    return {
      conversationId: row.conversation_id,
      runId: row.id,
      userMessage: null,
      run: (signal) => this.drive(principal, row, definition, options, signal, { history, memory }),
    };
  }

  async send(principal: Principal, agentId: string, input: SendInput, signal: AbortSignal) {
    const turn = await this.begin(principal, agentId, input);
    return events(turn, signal, this.onUnexpected);
  }

  /** A run of the principal's (a customer token: of its customer), or 404. */
  async mustGetRun(principal: Principal, agentId: string, runId: string): Promise<RunRow> {
    const row = await this.store.getRun(principal.accountId, runId);
    const customer = userOf(principal);
    if (!row || row.agent_id !== agentId || (customer !== null && row.user_id !== customer))
      throw notFound('NOT_FOUND', 'Run', runId);
    return row;
  }

  /**
   * Answers a paused run's client tool calls with their outputs: each must answer a waiting call, and
   * all of them must be answered. The turn continues once no call waits (approvals too).
   */
  async submitToolOutputs(
    principal: Principal,
    agentId: string,
    runId: string,
    outputs: ToolOutput[],
  ): Promise<Turn> {
    const row = await this.paused(principal, agentId, runId);
    return this.answer(
      principal,
      row,
      withOutputs(JSON.parse(row.pending as string) as StoredCall[], outputs),
    );
  }

  /**
   * Approves or rejects a paused run's calls to tools that need approval (a caller who may see the
   * run: its account's keys and members; a customer token, its own runs). The turn continues once no
   * call waits: approved calls run, rejected ones answer the model with why.
   */
  async approve(principal: Principal, agentId: string, runId: string, decisions: Decision[]): Promise<Turn> {
    const row = await this.paused(principal, agentId, runId);
    const by = principal.keyId ?? principal.memberId ?? principal.kind;
    return this.answer(
      principal,
      row,
      withDecisions(JSON.parse(row.pending as string) as StoredCall[], decisions, by),
    );
  }

  async approveRun(
    principal: Principal,
    agentId: string,
    runId: string,
    decisions: Decision[],
    signal: AbortSignal,
  ): Promise<AsyncGenerator<AgentEvent>> {
    const turn = await this.approve(principal, agentId, runId, decisions);
    return events(turn, signal, this.onUnexpected);
  }

  /** A run of the principal's waiting for answers, or 404/409. */
  private async paused(principal: Principal, agentId: string, runId: string): Promise<RunRow> {
    const row = await this.mustGetRun(principal, agentId, runId);
    if (row.status !== 'requires_action' || !row.state || !row.pending)
      throw new AppError(
        'CONFLICT',
        `Run '${runId}' is ${row.status}, not waiting for tool outputs or approvals`,
        {
          runId,
          status: row.status,
        },
      );
    return row;
  }

  /**
   * Records a paused run's new answers. Calls still waiting: the run stays paused (the turn is its
   * remaining action). None: the turn continues. Of two answers racing, one is recorded (the other 409).
   */
  private async answer(principal: Principal, row: RunRow, calls: StoredCall[]): Promise<Turn> {
    const pending = JSON.stringify(calls);
    const done = allAnswered(calls);
    const moved = await this.store.answerRun(row.id, row.pending as string, {
      ...(done ? { status: 'in_progress' } : {}),
      pending,
      approval_deadline: done ? null : approvalDeadline(calls),
      updated_at: this.clock.now().toISOString(),
    });
    if (!moved)
      throw new AppError('CONFLICT', `Run '${row.id}' was answered or continued already`, { runId: row.id });
    const waiting = { conversationId: row.conversation_id, runId: row.id, userMessage: null };
    if (!done) {
      const action = requiredAction(calls);
      return {
        ...waiting,
        // biome-ignore lint/correctness/useYield: the run stays paused: nothing runs
        run: async function* () {
          return {
            status: 'requires_action',
            runId: row.id,
            toolCalls: action.toolCalls,
            approvals: action.approvals,
            usage: { promptTokens: 0, completionTokens: 0 },
            sources: [],
          } satisfies TurnOutcome;
        },
      };
    }
    return this.continued(principal, { ...row, status: 'in_progress', pending }, calls);
  }

  /** The turn of a run (moved to in_progress) whose calls are all answered, from its stored state. */
  private async continued(principal: Principal, paused: RunRow, calls: StoredCall[]): Promise<Turn> {
    const { definition } = await this.agents.load(paused.account_id, paused.agent_id);
    const state = JSON.parse(paused.state as string) as TurnState;
    const next = continuation(calls);
    state.messages.push(...next.messages);
    state.steps.push(...next.steps);
    const options = JSON.parse(paused.options) as RunOptions;
    return {
      conversationId: paused.conversation_id,
      runId: paused.id,
      userMessage: null,
      run: (signal) =>
        this.drive(principal, paused, definition, options, signal, {
          resume: state,
          approved: next.approved,
        }),
    };
  }

  /**
   * Rejects the approvals past their time (`by: 'timeout'`). A run that then waits for nothing more is
   * queued to continue in the background (`enqueue`); one still waiting for others keeps waiting.
   * Of two workers sweeping at once, one records each run (compare-and-set on its pending calls).
   */
  async expireApprovals(
    enqueue: (runId: string, accountId: string) => Promise<void>,
    limit = 100,
  ): Promise<number> {
    const now = this.clock.now().toISOString();
    let expired = 0;
    for (const row of await this.store.expiredApprovals(now, limit)) {
      if (!row.pending) continue;
      const calls = withExpired(JSON.parse(row.pending) as StoredCall[], now);
      const done = allAnswered(calls);
      const moved = await this.store.answerRun(row.id, row.pending, {
        pending: JSON.stringify(calls),
        approval_deadline: done ? null : approvalDeadline(calls),
        updated_at: now,
        // A worker continues it from its state, as a background run's next leg.
        ...(done ? { status: 'queued', background: 1, attempts: 0 } : {}),
      });
      if (!moved) continue;
      expired++;
      if (done) await enqueue(row.id, row.account_id);
    }
    return expired;
  }

  /**
   * Cancels a run waiting for tool outputs, or a background run not yet ended (its turn never
   * continues; the conversation keeps the user's message without an answer). Else a 409.
   */
  async cancel(principal: Principal, agentId: string, runId: string): Promise<RunRow> {
    const row = await this.mustGetRun(principal, agentId, runId);
    const values = {
      status: 'cancelled',
      state: null,
      pending: null,
      updated_at: this.clock.now().toISOString(),
    };
    // A background run in progress stops too: its worker watches the row (background-runs.ts).
    const from =
      row.background === 1 ? ['requires_action', 'queued', 'in_progress'] : ['requires_action', 'queued'];
    if (!(await this.store.moveRun(row.id, from, values)))
      throw new AppError('CONFLICT', `Run '${runId}' is ${row.status}: only a waiting run can be cancelled`, {
        runId,
        status: row.status,
      });
    return { ...row, ...values };
  }

  /** Runs the turn and records how it ended on the run (and the answer in the conversation). */
  private async *drive(
    principal: Principal,
    run: RunRow,
    definition: AgentDefinition,
    options: RunOptions,
    signal: AbortSignal,
    start:
      | { history: Array<{ role: 'user' | 'assistant'; content: string }>; memory: string }
      | { resume: TurnState; approved: ToolCall[] },
  ): AsyncGenerator<TurnEvent, TurnOutcome> {
    const finish = (values: Partial<RunRow>) =>
      this.store.moveRun(run.id, ['in_progress'], { ...values, updated_at: this.clock.now().toISOString() });
    try {
      const result = yield* runTurn(this.runner, {
        principal,
        agent: definition,
        userId: run.user_id,
        history: 'history' in start ? start.history : [],
        agentId: run.agent_id,
        conversationId: run.conversation_id,
        ...('memory' in start ? { memory: start.memory } : {}),
        content: options.content,
        ...(options.images ? { images: options.images } : {}),
        ...(options.files ? { files: options.files } : {}),
        signal,
        ...('resume' in start ? { resume: start.resume, approved: start.approved } : {}),
        ...(options.tools ? { clientTools: options.tools } : {}),
        ...(options.toolChoice ? { toolChoice: options.toolChoice } : {}),
        ...(options.responseFormat ? { responseFormat: options.responseFormat } : {}),
      });
      if (result.pending && result.state) {
        const approvals = new Set(result.approvals ?? []);
        const now = this.clock.now().getTime();
        const calls: StoredCall[] = result.pending.map((c) => {
          const id = c.id as string;
          if (!approvals.has(id)) return { id, name: c.name, arguments: c.arguments, kind: 'client' };
          const seconds = result.approvalTimeouts?.[id] ?? this.approvalTimeoutSeconds;
          const expiresAt = new Date(now + seconds * 1000).toISOString();
          return { id, name: c.name, arguments: c.arguments, kind: 'approval', expiresAt };
        });
        await finish({
          status: 'requires_action',
          state: JSON.stringify(result.state),
          pending: JSON.stringify(calls),
          approval_deadline: approvalDeadline(calls),
          // Whoever started the run continues it when its approvals expire (in the background).
          ...(approvals.size > 0 && run.principal === null
            ? { principal: JSON.stringify(runPrincipal(principal)) }
            : {}),
        });
        const action = requiredAction(calls);
        return {
          status: 'requires_action',
          runId: run.id,
          toolCalls: action.toolCalls,
          approvals: action.approvals,
          usage: result.usage,
          sources: result.sources,
        };
      }
      const message = await this.conversations.addMessage(run.conversation_id, {
        role: 'assistant',
        content: result.content,
        steps: result.steps,
        sources: result.sources,
        usage: result.usage,
      });
      await finish({ status: 'completed', message_id: message.id, state: null, pending: null });
      return {
        status: 'completed',
        runId: run.id,
        message,
        usage: result.usage,
        sources: result.sources,
        ...(result.output !== undefined ? { output: result.output } : {}),
      };
    } catch (error) {
      // However the turn ends, its run does not stay in_progress.
      const appError = isAppError(error) ? error : null;
      // The caller learns which run failed (its status stays readable).
      if (appError && appError.details.runId === undefined) appError.details.runId = run.id;
      await finish(
        signal.aborted
          ? { status: 'cancelled', state: null, pending: null }
          : {
              status: 'failed',
              state: null,
              pending: null,
              error: JSON.stringify({
                code: appError?.code ?? 'UPSTREAM_ERROR',
                message: appError?.message ?? 'The agent failed mid-answer',
              }),
            },
      ).catch(this.onUnexpected);
      throw error;
    } finally {
      // A consumer that stops reading (a WebSocket cancel) ends the turn here: the run is cancelled
      // (a no-op when it already ended: only an in_progress run moves).
      await finish({ status: 'cancelled', state: null, pending: null }).catch(this.onUnexpected);
    }
  }
}

/** A background turn as queued: its run (the caller polls it) and the user's message. */
export interface QueuedTurn {
  conversationId: string;
  runId: string;
  userMessage: MessageView;
  queued: RunRow;
}

/** Who started a background run, as stored on it: no secrets, nothing a function holds. */
export interface RunPrincipal {
  kind: Principal['kind'];
  accountId: string;
  keyId: string | null;
  customerId: string | null;
  role: Principal['role'];
  scopes: string[];
  services: string[];
  models: string[] | null;
  memberId?: string;
}

function runPrincipal(p: Principal): RunPrincipal {
  return {
    kind: p.kind,
    accountId: p.accountId,
    keyId: p.keyId,
    customerId: p.customerId,
    role: p.role,
    scopes: [...p.scopes],
    services: [...p.services],
    models: p.models ? [...p.models] : null,
    ...(p.memberId ? { memberId: p.memberId } : {}),
  };
}

/** A run as the API shows it. */
export function runView(row: RunRow) {
  const pending =
    row.status === 'requires_action' && row.pending ? (JSON.parse(row.pending) as StoredCall[]) : null;
  return {
    id: row.id,
    agentId: row.agent_id,
    conversationId: row.conversation_id,
    status: row.status as 'queued' | 'in_progress' | 'requires_action' | 'completed' | 'failed' | 'cancelled',
    requiredAction: pending ? requiredAction(pending) : null,
    background: row.background === 1,
    messageId: row.message_id,
    error: row.error ? (JSON.parse(row.error) as { code: string; message: string }) : null,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

/** A turn as the API's events: `message.created` first, `message.completed`, `run.requires_action` or `error` last. */
export async function* events(
  turn: Turn,
  signal: AbortSignal,
  onUnexpected: (error: unknown) => void,
): AsyncGenerator<AgentEvent> {
  const conversationId = turn.conversationId;
  if (turn.userMessage) yield { type: 'message.created', conversationId, message: turn.userMessage };
  const run = turn.run(signal);
  let finished = false;
  try {
    for (;;) {
      const next = await run.next();
      if (next.done) {
        finished = true;
        const outcome = next.value;
        if (outcome.status === 'completed') {
          const { status: _, ...rest } = outcome;
          yield { type: 'message.completed', conversationId, ...rest };
        } else {
          const { status: _, ...rest } = outcome;
          yield { type: 'run.requires_action', conversationId, ...rest };
        }
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
  } finally {
    // A consumer that stops between events ends the turn's run too (its model call records itself
    // and gives its token hold back).
    if (!finished) await run.return(undefined as never).catch(() => undefined);
  }
}
