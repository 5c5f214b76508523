import { AppError, type ErrorCode, type ErrorDetails } from '../../../core/errors.js';
import { queueUnavailable } from '../../../core/queue/queue-unavailable.js';
import type { ExecutionOutcome, WebhookNodeInfo, WorkflowDefinition } from '../engine/index.js';
import { CRASH_MESSAGE, type ExecutionRow, QUEUE_OUTAGE_MESSAGE } from '../executions/store.js';

/** What a webhook call answers: a reply the workflow chose, or an error in the platform's shape. */
export type StoredResponse =
  | { kind: 'reply'; statusCode: number; headers: Record<string, string>; body: unknown; bodyBase64?: string }
  | { kind: 'error'; code: ErrorCode; message: string; details: ErrorDetails };

export function startedResponse(hook: WebhookNodeInfo, executionId: string): StoredResponse {
  const custom = hook.reply?.receivedBody;
  return {
    kind: 'reply',
    statusCode: hook.responseCode,
    headers: { ...hook.reply?.headers },
    body:
      hook.responseData === 'noData'
        ? null
        : custom
          ? custom
          : { message: 'Workflow was started', executionId },
  };
}

/** The answer of a `lastNode` or `responseNode` webhook once its execution stopped. */
export function finishedResponse(
  def: WorkflowDefinition,
  hook: WebhookNodeInfo,
  outcome: ExecutionOutcome,
  executionId: string,
): StoredResponse {
  if (outcome.webhookResponse) return { kind: 'reply', ...outcome.webhookResponse };
  if (outcome.status === 'error') return errorResponse(def, outcome, executionId);
  if (outcome.status === 'canceled')
    return {
      kind: 'error',
      code: 'UNPROCESSABLE',
      message: `The execution was stopped before it answered: ${outcome.state.error?.message ?? 'canceled'}`,
      details: { executionId },
    };
  if (outcome.status === 'waiting') {
    return {
      kind: 'reply',
      statusCode: 202,
      headers: {},
      body: { message: 'Workflow is waiting', executionId },
    };
  }
  if (hook.responseMode === 'responseNode') {
    return {
      kind: 'reply',
      statusCode: hook.responseCode,
      headers: {},
      body: { message: 'Workflow executed successfully', executionId },
    };
  }
  if (hook.responseData === 'firstEntryBinary') {
    const property = hook.responseBinaryPropertyName;
    const binary = outcome.lastItems[0]?.binary?.[property];
    if (!binary)
      return {
        kind: 'error',
        code: 'UNPROCESSABLE',
        message: `The last node's first item has no binary property '${property}' to answer with`,
        details: { executionId },
      };
    return {
      kind: 'reply',
      statusCode: hook.responseCode,
      headers: { ...hook.reply?.headers, 'content-type': binary.mimeType },
      body: null,
      bodyBase64: binary.data,
    };
  }
  const items = outcome.lastItems.map((i) => i.json);
  const headers: Record<string, string> = { ...hook.reply?.headers };
  let body: unknown =
    hook.responseData === 'noData' ? null : hook.responseData === 'allEntries' ? items : (items[0] ?? {});
  if (hook.responseData === 'firstEntryJson') {
    // n8n's options for the first entry: one property of it, and a content type of the author's choosing.
    const property = hook.reply?.propertyName;
    if (property) body = propertyOf(items[0] ?? {}, property) ?? null;
    const type = hook.reply?.contentType;
    if (type) {
      // As n8n: a string goes out as it is, anything else as indented JSON, under the author's type.
      headers['content-type'] = type;
      const text = typeof body === 'string' ? body : body === null ? '' : JSON.stringify(body, null, 2);
      return {
        kind: 'reply',
        statusCode: hook.responseCode,
        headers,
        body: null,
        bodyBase64: Buffer.from(text).toString('base64'),
      };
    }
  }
  return { kind: 'reply', statusCode: hook.responseCode, headers, body };
}

/**
 * A failed run: a `validate` node's problems are the caller's fault (400); a failed outbound call is
 * a downstream's (502); any other failure the workflow raised is 422 with the node and message.
 */
function errorResponse(
  def: WorkflowDefinition,
  outcome: ExecutionOutcome,
  executionId: string,
): StoredResponse {
  const error = outcome.state.error ?? { message: 'Workflow failed' };
  const node = error.node ? def.nodes.find((n) => n.name === error.node) : undefined;
  if (error.problems && error.problems.length > 0) {
    return {
      kind: 'error',
      code: 'VALIDATION_ERROR',
      message: error.message,
      details: {
        executionId,
        fields: error.problems.map((p) => ({ field: p.path, message: p.message })),
      },
    };
  }
  const details = { executionId, node: error.node ?? null, reason: error.message };
  if (node?.type === 'n8n-nodes-platform.httpRequest') {
    return {
      kind: 'error',
      code: 'UPSTREAM_ERROR',
      message: `A downstream call failed: ${error.message}`,
      details,
    };
  }
  return { kind: 'error', code: 'UNPROCESSABLE', message: `The workflow failed: ${error.message}`, details };
}

/**
 * The answer of an execution that stored none (a webhook call's or a direct run's, once its waiter
 * gave up or was told "no answer"): stopped (422, or 503 when it was canceled for want of the
 * queue), failed outside any node (422; 502 when its worker crashed), or still running (504).
 */
export function unansweredResponse(executionId: string, row: ExecutionRow | undefined): StoredResponse {
  if (row?.status === 'canceled') {
    if (row.error_message === QUEUE_OUTAGE_MESSAGE) throw queueUnavailable('unreachable');
    return {
      kind: 'error',
      code: 'UNPROCESSABLE',
      message: 'The execution was stopped before it answered',
      details: { executionId },
    };
  }
  if (row?.status === 'error') {
    // The worker died mid-run (recorded by the stalled-job check): the platform failed, not the
    // caller's request or the workflow; 502 as from a gateway whose upstream went away.
    if (row.error_message === CRASH_MESSAGE) {
      return {
        kind: 'error',
        code: 'UPSTREAM_ERROR',
        message: 'The worker running the execution stopped (crashed) before it answered; retry the call',
        details: { executionId, reason: 'worker-crashed' },
      };
    }
    return {
      kind: 'error',
      code: 'UNPROCESSABLE',
      message: row.error_message ?? 'The workflow failed',
      details: { executionId },
    };
  }
  throw new AppError('GATEWAY_TIMEOUT', 'The workflow did not answer in time; it keeps running', {
    executionId,
  });
}

/** A dotted path into an item's JSON (n8n reads `responsePropertyName` with lodash's `get`). */
function propertyOf(json: Record<string, unknown>, path: string): unknown {
  let value: unknown = json;
  for (const key of path.split('.')) {
    if (value === null || typeof value !== 'object' || !Object.hasOwn(value, key)) return undefined;
    value = (value as Record<string, unknown>)[key];
  }
  return value;
}
