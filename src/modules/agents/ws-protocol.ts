/**
 * The agents' WebSocket protocol (docs/agents-websocket.md): what a client may send, the frames the
 * server answers with, and the close codes. Parsing is by hand: every refusal names its field, and
 * a refused message is an `error` frame on a connection that stays open.
 */

/** Close codes the server uses. */
export const CLOSE = {
  /** Idle for AGENT_WS_IDLE_TIMEOUT_MS with nothing in flight. */
  normal: 1000,
  /** The server is shutting down. */
  goingAway: 1001,
  /** The client does not read: more than AGENT_WS_MAX_BUFFERED_BYTES waiting to be sent. */
  policy: 1008,
  /** A message over AGENT_WS_MAX_MESSAGE_BYTES (sent by `ws` itself, from its maxPayload). */
  tooBig: 1009,
  /** An unexpected server error on the connection. */
  internal: 1011,
  /** The credential stopped working (key revoked or expired, token expired, grant withdrawn). */
  unauthorized: 4001,
} as const;

/** Subprotocol entries that carry a credential: `bearer.<API key or customer token>`. */
export const BEARER_PROTOCOL_PREFIX = 'bearer.';

const ID_MAX = 128;
const CONTENT_MAX = 32_000;

export type ClientMessage =
  | {
      type: 'message.send';
      clientMessageId: string;
      agentId: string;
      conversationId?: string;
      content: string;
    }
  | { type: 'message.cancel'; clientMessageId: string }
  | {
      type: 'run.approve';
      clientMessageId: string;
      agentId: string;
      runId: string;
      approvals: Array<{ toolCallId: string; approve: boolean; reason?: string }>;
    }
  | { type: 'ping' };

/** A refused client message: what the `error` frame says, with the clientMessageId when one was readable. */
interface ProtocolRefusal {
  message: string;
  clientMessageId?: string;
}

type Parsed = { ok: true; value: ClientMessage } | { ok: false; refusal: ProtocolRefusal };

const FIELDS: Record<ClientMessage['type'], readonly string[]> = {
  'message.send': ['type', 'clientMessageId', 'agentId', 'conversationId', 'content'],
  'message.cancel': ['type', 'clientMessageId'],
  'run.approve': ['type', 'clientMessageId', 'agentId', 'runId', 'approvals'],
  ping: ['type'],
};

const isType = (value: unknown): value is ClientMessage['type'] =>
  typeof value === 'string' && Object.hasOwn(FIELDS, value);

/** A string field of 1..max characters (code points, as the HTTP schemas count), or why not. */
function stringField(body: Record<string, unknown>, name: string, max: number): string | ProtocolRefusal {
  const value = body[name];
  if (value === undefined) return { message: `${name} is required` };
  if (typeof value !== 'string') return { message: `${name} must be a string` };
  const length = [...value].length;
  if (length === 0) return { message: `${name} must not be empty` };
  if (length > max) return { message: `${name} must be at most ${max} characters` };
  return value;
}

/** Parses one text message of a client. */
export function parseClientMessage(text: string): Parsed {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return { ok: false, refusal: { message: 'The message is not valid JSON' } };
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    return { ok: false, refusal: { message: 'The message must be a JSON object' } };
  const fields = body as Record<string, unknown>;
  // Echoed on the refusal when readable, so the client knows which of its sends failed.
  const echo =
    typeof fields.clientMessageId === 'string' && fields.clientMessageId.length <= ID_MAX
      ? { clientMessageId: fields.clientMessageId }
      : {};
  const refuse = (message: string): Parsed => ({ ok: false, refusal: { message, ...echo } });

  if (!isType(fields.type))
    return refuse(
      `type must be one of ${Object.keys(FIELDS).join(', ')}; got ${JSON.stringify(fields.type)}`,
    );
  const type = fields.type;
  const unknown = Object.keys(fields).filter((k) => !FIELDS[type].includes(k));
  if (unknown.length > 0) return refuse(`Unknown field(s) for ${type}: ${unknown.join(', ')}`);
  if (type === 'ping') return { ok: true, value: { type } };

  const clientMessageId = stringField(fields, 'clientMessageId', ID_MAX);
  if (typeof clientMessageId !== 'string') return refuse(clientMessageId.message);
  if (type === 'message.cancel') return { ok: true, value: { type, clientMessageId } };

  const agentId = stringField(fields, 'agentId', ID_MAX);
  if (typeof agentId !== 'string') return refuse(agentId.message);
  if (type === 'run.approve') {
    const runId = stringField(fields, 'runId', ID_MAX);
    if (typeof runId !== 'string') return refuse(runId.message);
    const approvals = approvalsField(fields.approvals);
    if (!Array.isArray(approvals)) return refuse(approvals.message);
    return { ok: true, value: { type, clientMessageId, agentId, runId, approvals } };
  }
  const content = stringField(fields, 'content', CONTENT_MAX);
  if (typeof content !== 'string') return refuse(content.message);
  // null is "no conversation" as much as an absent field: a new one is opened.
  if (fields.conversationId === undefined || fields.conversationId === null)
    return { ok: true, value: { type, clientMessageId, agentId, content } };
  const conversationId = stringField(fields, 'conversationId', ID_MAX);
  if (typeof conversationId !== 'string') return refuse(conversationId.message);
  return { ok: true, value: { type, clientMessageId, agentId, conversationId, content } };
}

const MAX_APPROVALS = 64;
const REASON_MAX = 1_000;

/** `approvals: [{toolCallId, approve, reason?}]` (1..64), or why not (naming the field). */
function approvalsField(
  value: unknown,
): Array<{ toolCallId: string; approve: boolean; reason?: string }> | ProtocolRefusal {
  if (!Array.isArray(value) || value.length === 0 || value.length > MAX_APPROVALS)
    return { message: `approvals must be an array of 1..${MAX_APPROVALS} decisions` };
  const out: Array<{ toolCallId: string; approve: boolean; reason?: string }> = [];
  for (const [i, item] of value.entries()) {
    const field = `approvals[${i}]`;
    if (typeof item !== 'object' || item === null || Array.isArray(item))
      return { message: `${field} must be an object` };
    const d = item as Record<string, unknown>;
    const extra = Object.keys(d).filter((k) => !['toolCallId', 'approve', 'reason'].includes(k));
    if (extra.length > 0) return { message: `Unknown field(s) in ${field}: ${extra.join(', ')}` };
    const toolCallId = stringField(d, 'toolCallId', ID_MAX);
    if (typeof toolCallId !== 'string') return { message: `${field}.${toolCallId.message}` };
    if (typeof d.approve !== 'boolean') return { message: `${field}.approve must be a boolean` };
    if (d.reason !== undefined && (typeof d.reason !== 'string' || [...d.reason].length > REASON_MAX))
      return { message: `${field}.reason must be a string of at most ${REASON_MAX} characters` };
    out.push({
      toolCallId,
      approve: d.approve,
      ...(typeof d.reason === 'string' && d.reason !== '' ? { reason: d.reason } : {}),
    });
  }
  return out;
}

/** The `bearer.<token>` entry of a `Sec-WebSocket-Protocol` header, if any. */
export function bearerProtocol(header: string | string[] | undefined): string | null {
  if (header === undefined) return null;
  const entries = (Array.isArray(header) ? header.join(',') : header).split(',').map((p) => p.trim());
  return (
    entries.find((p) => p.startsWith(BEARER_PROTOCOL_PREFIX) && p.length > BEARER_PROTOCOL_PREFIX.length) ??
    null
  );
}
