import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

const SAFE_ID = /^[\w.:-]{1,128}$/;

/** Honours a well-formed incoming X-Request-Id; otherwise makes one. */
export function requestIdFrom(req: IncomingMessage): string {
  const incoming = req.headers['x-request-id'];
  if (typeof incoming === 'string' && SAFE_ID.test(incoming)) return incoming;
  // randomUUID draws from a pooled entropy buffer: far cheaper per request than a ULID.
  return `req_${randomUUID().replaceAll('-', '')}`;
}

/** Headers that carry secrets; never logged. */
export const REDACTED_HEADERS = [
  'authorization',
  'cookie',
  'x-api-key',
  'x-workflow-api-key',
  'x-webhook-key',
  'x-store-hmac-sha256',
];
