import { OutboundBlockedError, type OutboundResponse } from '../../../../../core/http/outbound.js';
import { NodeOperationError } from '../../../engine/node-type.js';
import type { EngineDeps } from '../../../engine/types.js';

export const SHEETS_BASE = 'https://sheets.googleapis.com';
export const DRIVE_BASE = 'https://www.googleapis.com';
/** One call's time (n8n's request helper has no bound; a hanging Google must not hold the run). */
export const GOOGLE_TIMEOUT_MS = 60_000;
/** One answer's size: 32 MB holds a values.get of the largest sheet the node reads (MAX_CELLS). */
export const MAX_RESPONSE_BYTES = 32 * 1024 * 1024;

/** Where the node's calls go and with what token. */
export interface GoogleTarget {
  http: EngineDeps['http'];
  deadlineAt?: number | undefined;
  /** The Authorization header's token; `renew` after Google answered 401 to the last one. */
  bearer(renew: boolean): Promise<string>;
  /** An OAuth2 token may be renewed once on a 401; a service account's is fresh already. */
  renewable: boolean;
}

export interface GoogleCall {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  /** The URL without its query (SHEETS_BASE or DRIVE_BASE + path). */
  url: string;
  query?: Record<string, string>;
  body?: unknown;
  /** What the call does, for error messages ("reading 'Sheet1'"). */
  what: string;
}

export const parseJson = (text: string): unknown => {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
};

/** Google's error body `{error: {code, message, status}}` as the node's error, naming all three. */
export function googleError(res: OutboundResponse, what: string): NodeOperationError {
  const body = parseJson(res.body) as
    | {
        error?: { code?: unknown; message?: unknown; status?: unknown } | string;
        error_description?: unknown;
      }
    | undefined;
  const error = body?.error;
  if (error && typeof error === 'object') {
    const status = typeof error.status === 'string' ? ` ${error.status}` : '';
    const message = typeof error.message === 'string' ? error.message : 'no message';
    return new NodeOperationError(`Google Sheets refused ${what} (${res.status}${status}): ${message}`, {
      description: hintOf(res.status),
    });
  }
  const text = res.body.slice(0, 200).trim() || 'no message';
  return new NodeOperationError(`Google Sheets refused ${what} (${res.status}): ${text}`, {
    description: hintOf(res.status),
  });
}

function hintOf(status: number): string | undefined {
  if (status === 404) return 'Check the spreadsheet (document) and the sheet the node names';
  if (status === 403)
    return 'The credential may not reach this spreadsheet: share it with the service account';
  if (status === 429)
    return "Google's per-minute quota is used up: run the workflow again later, or with fewer items";
  return undefined;
}

/** One call to a Google API through the outbound client (so through its address guard), as JSON. */
export async function googleCall(t: GoogleTarget, call: GoogleCall): Promise<Record<string, unknown>> {
  let res = await send(t, call, await t.bearer(false));
  if (res.status === 401 && t.renewable) res = await send(t, call, await t.bearer(true));
  if (res.status < 200 || res.status >= 300) throw googleError(res, call.what);
  if (res.body.trim() === '') return {};
  const parsed = parseJson(res.body);
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed))
    throw new NodeOperationError(`Google Sheets answered ${call.what} with a body that is not a JSON object`);
  return parsed as Record<string, unknown>;
}

async function send(t: GoogleTarget, call: GoogleCall, token: string): Promise<OutboundResponse> {
  const left = t.deadlineAt !== undefined ? t.deadlineAt - Date.now() : GOOGLE_TIMEOUT_MS;
  if (left <= 0) throw new NodeOperationError('The execution has no time left for a Google Sheets call');
  const qs = call.query ? new URLSearchParams(call.query).toString() : '';
  try {
    return await t.http({
      method: call.method,
      url: qs ? `${call.url}?${qs}` : call.url,
      headers: {
        authorization: `Bearer ${token}`,
        accept: 'application/json',
        ...(call.body !== undefined ? { 'content-type': 'application/json' } : {}),
      },
      ...(call.body !== undefined ? { body: JSON.stringify(call.body) } : {}),
      timeoutMs: Math.min(GOOGLE_TIMEOUT_MS, left),
      maxRedirects: 0,
      maxResponseBytes: MAX_RESPONSE_BYTES,
    });
  } catch (err) {
    if (err instanceof OutboundBlockedError) throw new NodeOperationError(err.message);
    throw new NodeOperationError(`The Google Sheets call (${call.what}) failed: ${(err as Error).message}`);
  }
}
