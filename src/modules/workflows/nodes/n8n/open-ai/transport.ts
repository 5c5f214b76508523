import { NodeOperationError } from '../../../engine/node-type.js';
import type { EngineDeps, OutboundResponse, WorkflowNode } from '../../../engine/types.js';
import { credentialRefOf } from '../../../engine/types.js';
import { type PreparedRequest, toOutbound } from '../http-request/build.js';

const DEFAULT_URL = 'https://api.openai.com/v1';
/** n8n's OpenAI node waits as its HTTP helper does; a model call may take minutes. */
const TIMEOUT_MS = 300_000;
export const CREDENTIAL_HEADERS = ['authorization', 'openai-organization'];

/**
 * Where the node's calls go: the `openAiApi` credential's `url` (OpenAI itself by default, any
 * compatible server, or this platform's gateway — then the calls are charged to the key the credential
 * holds and logged in `GET /v1/llm/requests`) with its key and organization.
 */
export interface OpenAiTarget {
  base: string;
  headers: Record<string, string>;
}

export async function openAiTarget(
  node: WorkflowNode,
  credential: (id: string) => Promise<Record<string, string>>,
  /** A node's own base URL option (the OpenAI Chat Model's `baseURL`), before the credential's. */
  baseURL?: string,
): Promise<OpenAiTarget> {
  const id = credentialRefOf(node.credentials?.openAiApi);
  if (!id) throw new NodeOperationError('No openAiApi credential is set on the node');
  const cred = await credential(id);
  const base = (baseURL || cred.url || DEFAULT_URL).replace(/\/+$/, '');
  if (!/^https?:\/\//.test(base)) throw new NodeOperationError(`The base URL '${base}' is not http(s)`);
  const headers: Record<string, string> = {};
  if (cred.apiKey) headers.authorization = `Bearer ${cred.apiKey}`;
  if (cred.organizationId) headers['openai-organization'] = cred.organizationId;
  return { base, headers };
}

/** A POST of JSON answered with JSON; a refusal is the node's error with the provider's message. */
export async function postJson(
  deps: EngineDeps,
  target: OpenAiTarget,
  path: string,
  body: Record<string, unknown>,
): Promise<Record<string, unknown>> {
  const res = await deps.http({
    method: 'POST',
    url: `${target.base}${path}`,
    headers: { ...target.headers, 'content-type': 'application/json', accept: 'application/json' },
    body: JSON.stringify(body),
    timeoutMs: TIMEOUT_MS,
    credentialHeaders: CREDENTIAL_HEADERS,
  });
  return checked(res);
}

/** A multipart POST (an audio file and its fields), answered with JSON. */
export async function postMultipart(
  deps: EngineDeps,
  target: OpenAiTarget,
  path: string,
  fields: Array<[string, unknown]>,
): Promise<Record<string, unknown>> {
  const req: PreparedRequest = {
    method: 'POST',
    url: `${target.base}${path}`,
    qs: {},
    headers: { ...target.headers, accept: 'application/json' },
    body: { kind: 'multipart', fields },
    timeoutMs: TIMEOUT_MS,
    credentialHeaders: CREDENTIAL_HEADERS,
    arrayFormat: 'repeat',
  };
  return checked(await deps.http(toOutbound(req)));
}

/** A POST of JSON answered with bytes (generated speech). */
export async function postForBytes(
  deps: EngineDeps,
  target: OpenAiTarget,
  path: string,
  body: Record<string, unknown>,
): Promise<Buffer> {
  const res = await deps.http({
    method: 'POST',
    url: `${target.base}${path}`,
    headers: { ...target.headers, 'content-type': 'application/json' },
    body: JSON.stringify(body),
    timeoutMs: TIMEOUT_MS,
    credentialHeaders: CREDENTIAL_HEADERS,
    responseType: 'bytes',
  });
  if (res.status < 200 || res.status >= 300)
    checked({ ...res, body: (res.bytes ?? Buffer.alloc(0)).toString() });
  return res.bytes ?? Buffer.from(res.body);
}

function checked(res: OutboundResponse): Record<string, unknown> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(res.body);
  } catch {
    parsed = undefined;
  }
  if (res.status < 200 || res.status >= 300)
    throw new NodeOperationError(`OpenAI refused the request (${res.status}): ${messageOf(parsed)}`, {
      description: res.body.slice(0, 1000),
    });
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed))
    throw new NodeOperationError('OpenAI answered with a body that is not a JSON object');
  return parsed as Record<string, unknown>;
}

/** OpenAI's error body: `{error: {message}}` (or a bare string). */
function messageOf(body: unknown): string {
  const error = (body as { error?: unknown } | null | undefined)?.error;
  if (typeof error === 'string') return error;
  const message = (error as { message?: unknown } | null | undefined)?.message;
  return typeof message === 'string' ? message : 'no error message';
}
