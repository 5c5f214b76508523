import { randomBytes } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

const SAFE_ID = /^[\w.:-]{1,128}$/;

// 128 random bits per id, as hex, cut from a pool refilled 256 ids at a time: a tenth of the
// cost of formatting a UUID and stripping its dashes.
const ID_HEX = 32;
const POOL_IDS = 256;
let pool = '';
let offset = 0;

/** Honours a well-formed incoming X-Request-Id; otherwise makes one. */
export function requestIdFrom(req: IncomingMessage): string {
  const incoming = req.headers['x-request-id'];
  if (typeof incoming === 'string' && SAFE_ID.test(incoming)) return incoming;
  if (offset + ID_HEX > pool.length) {
    pool = randomBytes((ID_HEX / 2) * POOL_IDS).toString('hex');
    offset = 0;
  }
  const id = pool.slice(offset, offset + ID_HEX);
  offset += ID_HEX;
  return `req_${id}`;
}

/** Headers that carry secrets; never logged. */
export const REDACTED_HEADERS = [
  'authorization',
  'cookie',
  'x-api-key',
  'x-workflow-api-key',
  'x-n8n-api-key',
  'x-webhook-key',
  'x-store-hmac-sha256',
];
