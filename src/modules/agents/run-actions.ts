import { validationError } from '../../core/errors.js';
import { boundedOutput, type ChatMessage, type ToolCall } from '../llm/index.js';
import type { PendingCall, StepView } from './agent-events.js';
import { clientOutputMessages, type ToolOutput } from './turn-request.js';

/**
 * A paused run's calls as stored: a client's tool (its output submitted) or a server tool that
 * waits for approval (approved: the server runs it when the turn continues; rejected: the model
 * reads why). The turn continues once every call is answered, whichever answer comes last.
 */
export interface StoredCall extends PendingCall {
  kind?: 'client' | 'approval';
  /** The client's output (bounded), once submitted. */
  output?: unknown;
  /** The approval decision, once made: who made it (a key or a member id, or `timeout`) and why. */
  decision?: { approved: boolean; by: string; reason?: string };
  /** A call waiting for approval: when it is rejected if nobody decided (ISO time). */
  expiresAt?: string;
}

/** An approval decision on one call. */
export interface Decision {
  toolCallId: string;
  approve: boolean;
  reason?: string;
}

const MAX_TOOL_OUTPUT_CHARS = 20_000;

const isApproval = (c: StoredCall) => c.kind === 'approval';
const answered = (c: StoredCall) => (isApproval(c) ? c.decision !== undefined : 'output' in c);
const plain = ({ id, name, arguments: args }: StoredCall): PendingCall => ({ id, name, arguments: args });

/** What a paused run waits for: client outputs (OpenAI's `submit_tool_outputs`), then approvals. */
export function requiredAction(calls: StoredCall[]) {
  const toolCalls = calls.filter((c) => !isApproval(c) && !answered(c)).map(plain);
  const approvals = calls
    .filter((c) => isApproval(c) && !answered(c))
    .map((c) => ({ ...plain(c), ...(c.expiresAt ? { expiresAt: c.expiresAt } : {}) }));
  return {
    type: toolCalls.length > 0 ? ('submit_tool_outputs' as const) : ('approve_tool_calls' as const),
    toolCalls,
    approvals,
  };
}

/** The calls with a client's outputs recorded: each must answer a waiting client call, all of them. */
export function withOutputs(calls: StoredCall[], outputs: ToolOutput[]): StoredCall[] {
  const waiting = calls.filter((c) => !isApproval(c) && !answered(c));
  // Checks the outputs against the waiting calls (400 naming the field).
  clientOutputMessages(waiting, outputs);
  const byId = new Map(outputs.map((o) => [o.toolCallId, o.output]));
  return calls.map((c) =>
    byId.has(c.id) ? { ...c, output: boundedOutput(byId.get(c.id), MAX_TOOL_OUTPUT_CHARS) } : c,
  );
}

/** The calls with approval decisions recorded: each must name a call waiting for approval, once. */
export function withDecisions(calls: StoredCall[], decisions: Decision[], by: string): StoredCall[] {
  const problems: Array<{ field: string; message: string }> = [];
  const waiting = new Set(calls.filter((c) => isApproval(c) && !answered(c)).map((c) => c.id));
  const byId = new Map<string, Decision>();
  for (const [i, d] of decisions.entries()) {
    const field = `approvals[${i}].toolCallId`;
    if (!waiting.has(d.toolCallId))
      problems.push({ field, message: `'${d.toolCallId}' is not a tool call waiting for approval` });
    else if (byId.has(d.toolCallId)) problems.push({ field, message: `'${d.toolCallId}' is decided twice` });
    else byId.set(d.toolCallId, d);
  }
  if (problems.length > 0) throw validationError('Invalid approvals', problems);
  return calls.map((c) => {
    const d = byId.get(c.id);
    if (!d) return c;
    return { ...c, decision: { approved: d.approve, by, ...(d.reason ? { reason: d.reason } : {}) } };
  });
}

export const allAnswered = (calls: StoredCall[]): boolean => calls.every(answered);

/** When the first undecided approval of `calls` expires, or null. */
export function approvalDeadline(calls: StoredCall[]): string | null {
  let first: string | null = null;
  for (const c of calls)
    if (isApproval(c) && !answered(c) && c.expiresAt && (first === null || c.expiresAt < first))
      first = c.expiresAt;
  return first;
}

/** The calls with every approval past its time by `now` rejected (`by: 'timeout'`). */
export function withExpired(calls: StoredCall[], now: string): StoredCall[] {
  return calls.map((c) =>
    isApproval(c) && !answered(c) && c.expiresAt && c.expiresAt <= now
      ? {
          ...c,
          decision: { approved: false, by: 'timeout', reason: `nobody decided by ${c.expiresAt}` },
        }
      : c,
  );
}

/**
 * How the turn continues from its answered calls: the tool results the model reads (client outputs,
 * rejections) and the approved calls the server now runs.
 */
export function continuation(calls: StoredCall[]): {
  messages: ChatMessage[];
  steps: StepView[];
  approved: ToolCall[];
} {
  const messages: ChatMessage[] = [];
  const steps: StepView[] = [];
  const approved: ToolCall[] = [];
  for (const call of calls) {
    if (isApproval(call) && call.decision?.approved) {
      approved.push({ id: call.id, name: call.name, arguments: call.arguments });
      continue;
    }
    const output = isApproval(call)
      ? {
          error: `The call was rejected by ${call.decision?.by ?? 'the caller'}${call.decision?.reason ? `: ${call.decision.reason}` : ''}`,
        }
      : call.output;
    messages.push({
      role: 'tool',
      content: typeof output === 'string' ? output : JSON.stringify(output),
      toolCallId: call.id,
      toolName: call.name,
    });
    steps.push({ type: 'tool_call', name: call.name, input: call.arguments, output, ms: 0 });
  }
  return { messages, steps, approved };
}
