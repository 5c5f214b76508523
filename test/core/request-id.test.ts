import type { IncomingMessage } from 'node:http';
import { describe, expect, it } from 'vitest';
import { requestIdFrom } from '../../src/core/http/request-id.js';

const bare = { headers: {} } as IncomingMessage;

describe('request ids', () => {
  it('are 32 hex digits, distinct, and sort in the order of the milliseconds they were made in', () => {
    const first = requestIdFrom(bare);
    const sameMs = requestIdFrom(bare);
    expect(first).toMatch(/^req_[0-9a-f]{32}$/);
    expect(sameMs).not.toBe(first);
    // The time leads: an id made in a later millisecond sorts after (the log's index grows at its end).
    const started = Date.now();
    while (Date.now() === started) {
      // wait for the clock to tick (a condition, not a fixed sleep)
    }
    const later = requestIdFrom(bare);
    expect(later > first).toBe(true);
    expect(Number.parseInt(later.slice(4, 16), 16)).toBeGreaterThan(started);
    expect(Math.abs(Number.parseInt(later.slice(4, 16), 16) - Date.now())).toBeLessThan(1000);
  });

  it('keep 80 random bits within one millisecond', () => {
    const ids = new Set(Array.from({ length: 2000 }, () => requestIdFrom(bare).slice(16)));
    expect(ids.size).toBe(2000);
  });

  it('honour a well-formed incoming X-Request-Id and replace a malformed one', () => {
    expect(requestIdFrom({ headers: { 'x-request-id': 'trace-42:a.b' } } as unknown as IncomingMessage)).toBe(
      'trace-42:a.b',
    );
    expect(requestIdFrom({ headers: { 'x-request-id': 'bad id\\n' } } as unknown as IncomingMessage)).toMatch(
      /^req_[0-9a-f]{32}$/,
    );
  });
});
