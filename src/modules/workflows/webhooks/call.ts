import type { IncomingHttpHeaders } from 'node:http';
import type { Json } from '../engine/index.js';

/**
 * An inbound call of a webhook (or of a resume URL) as a plain value, built once at the route.
 * Authentication, binary parsing, dedupe and the resumer take this; nothing below the routes sees
 * the HTTP framework's request.
 */
export interface WebhookCall {
  method: string;
  /** The path after `/webhook/` (or `/webhook-test/`, `/webhook-waiting/`), as called. */
  path: string;
  headers: IncomingHttpHeaders;
  query: Record<string, unknown>;
  /** The body's bytes as read, within the webhook's limit (signatures and binary data need them). */
  rawBody: Buffer;
  /** The body parsed by its content type (JSON, form, text); null for a type kept as bytes only. */
  body: unknown;
  /** The client's address as the server sees it (behind a trusted proxy: the forwarded one). */
  clientAddress: string;
}

/** Request headers never stored in execution data: they hold secrets. */
const SECRET_HEADERS: ReadonlySet<string> = new Set([
  'authorization',
  'cookie',
  'x-api-key',
  'x-workflow-api-key',
  'proxy-authorization',
]);

/** A header's first value (header names are lower case in `headers`). */
export function headerOf(call: Pick<WebhookCall, 'headers'>, name: string): string | undefined {
  const value = call.headers[name.toLowerCase()];
  return Array.isArray(value) ? value[0] : value;
}

/** The call's headers as execution data: secrets and the names in `redacted` left out. */
export function headersAsData(
  call: Pick<WebhookCall, 'headers'>,
  redacted: readonly string[] = [],
): Record<string, Json> {
  const headers: Record<string, Json> = {};
  for (const [name, value] of Object.entries(call.headers)) {
    if (SECRET_HEADERS.has(name) || redacted.includes(name) || value === undefined) continue;
    headers[name] = Array.isArray(value) ? value : String(value);
  }
  return headers;
}
