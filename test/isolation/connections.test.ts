import type { IncomingMessage } from 'node:http';
import { createRequire } from 'node:module';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { processStreamCap, StreamSlots } from '../../src/core/http/stream-slots.js';
import { until } from '../helpers/until.js';
import { type LlmTestbed, startLlmTestbed } from '../llm/support.js';

/**
 * Long-lived connections are bounded per key and per process (issue: ~20,000 agent WebSockets of one
 * Reader key exhausted the file limit and /health was refused). The excess is a 429 with
 * Retry-After, a slot comes back when its connection closes, and /health always answers.
 */

interface WsClient {
  readyState: number;
  close(): void;
  terminate(): void;
  on(event: 'open', listener: () => void): unknown;
  on(event: 'close', listener: () => void): unknown;
  on(event: 'error', listener: (error: Error) => void): unknown;
  on(event: 'unexpected-response', listener: (req: unknown, res: IncomingMessage) => void): unknown;
}
type WsConstructor = new (
  url: string,
  protocols?: string[],
  options?: { headers?: Record<string, string> },
) => WsClient;
const { WebSocket } = createRequire(import.meta.url)('ws') as { WebSocket: WsConstructor };

/** Opens an agents WebSocket: the client once open, or the HTTP status that refused the upgrade. */
function upgrade(
  origin: string,
  key: string,
): Promise<{ client: WsClient } | { status: number; retryAfter?: string }> {
  return new Promise((resolve, reject) => {
    const client = new WebSocket(`${origin.replace(/^http/, 'ws')}/api/agents/ws`, undefined, {
      headers: { authorization: `Bearer ${key}` },
    });
    client.on('open', () => resolve({ client }));
    client.on('unexpected-response', (_req, res) => {
      resolve({ status: res.statusCode ?? 0, retryAfter: res.headers['retry-after'] as string | undefined });
      res.resume();
    });
    client.on('error', (error) => reject(error));
  });
}

/** A streamed /api/chat whose upstream stalls after two lines: it holds its slot until aborted. */
async function openStream(
  bed: LlmTestbed,
  key: string,
): Promise<{ status: number; abort(): void; body: string; retryAfter: string | null }> {
  const controller = new AbortController();
  const res = await fetch(`${bed.url}/api/chat`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'llama3.2', messages: [{ role: 'user', content: 'hi' }], stream: true }),
    signal: controller.signal,
  });
  const body = res.status === 200 ? '' : await res.text();
  if (res.status === 200)
    res.body
      ?.getReader()
      .read()
      .catch(() => undefined);
  return {
    status: res.status,
    abort: () => controller.abort(),
    body,
    retryAfter: res.headers.get('retry-after'),
  };
}

async function health(bed: LlmTestbed): Promise<number> {
  return (await fetch(`${bed.url}/health`)).status;
}

describe('stream slots (unit)', () => {
  it('counts per holder and per process and gives slots back once', () => {
    const slots = new StreamSlots(2, 3);
    const a1 = slots.acquire('a');
    slots.acquire('a');
    expect(() => slots.acquire('a')).toThrow(/at most 2/);
    slots.acquire('b');
    expect(() => slots.acquire('c')).toThrow(/no stream slot/);
    a1();
    a1();
    expect(slots.open()).toBe(2);
    expect(slots.open('a')).toBe(1);
    expect(() => slots.acquire('c')).not.toThrow();
  });

  it('keeps a reserve below the open-file limit', () => {
    expect(processStreamCap(0, 512, 20_000)).toBe(10_000);
    expect(processStreamCap(0, 512, 1_024)).toBe(512);
    expect(processStreamCap(300, 512, 1_024)).toBe(300);
    expect(processStreamCap(5_000, 512, 1_024)).toBe(512);
    expect(processStreamCap(0, 512, null)).toBe(9_488);
  });
});

describe('long-lived connections are bounded per key and per process', () => {
  let bed: LlmTestbed;
  let keyA: string;
  let keyB: string;

  beforeAll(async () => {
    bed = await startLlmTestbed(
      'sqlite',
      { STREAMS_PER_KEY: '2', STREAMS_PER_PROCESS: '3' },
      { timeoutMs: 60_000 },
    );
    bed.ollama.stallAfterChunks = 2;
    const reader = { type: 'development', services: ['agent', 'llm'], role: 'Reader' };
    keyA = (await bed.p.createKey({ name: 'a', ...reader })).key;
    // Reading an LLM stream is a POST: Writer.
    keyB = (await bed.p.createKey({ name: 'b', ...reader, role: 'Writer' })).key;
  });
  afterAll(async () => {
    await bed?.close();
  });

  it('refuses a key past its WebSockets with 429, and the process past its total; /health still answers', async () => {
    const open: WsClient[] = [];
    try {
      for (let i = 0; i < 2; i++) {
        const r = await upgrade(bed.url, keyA);
        expect('client' in r).toBe(true);
        if ('client' in r) open.push(r.client);
      }
      const third = await upgrade(bed.url, keyA);
      expect(third).toMatchObject({ status: 429, retryAfter: '5' });

      // Key B has slots of its own, but the process has one left.
      const b1 = await upgrade(bed.url, keyB);
      expect('client' in b1).toBe(true);
      if ('client' in b1) open.push(b1.client);
      expect(await upgrade(bed.url, keyB)).toMatchObject({ status: 429 });
      expect(await health(bed)).toBe(200);

      // A closed socket gives its slot back.
      open.shift()?.close();
      const again = await until(async () => {
        const r = await upgrade(bed.url, keyA);
        return 'client' in r ? r.client : undefined;
      }, 'a freed WebSocket slot');
      open.push(again);
    } finally {
      for (const c of open) c.terminate();
      await until(async () => (bed.p.ctx.streams?.open() === 0 ? true : undefined), 'all slots back');
    }
  });

  it('refuses a streamed answer past the key bound with 429 in the route format, before any upstream call', async () => {
    const streams: Array<{ abort(): void }> = [];
    try {
      for (let i = 0; i < 2; i++) {
        const s = await openStream(bed, keyB);
        expect(s.status).toBe(200);
        streams.push(s);
      }
      const calls = bed.ollama.requests.length;
      const refused = await openStream(bed, keyB);
      expect(refused.status).toBe(429);
      expect(refused.retryAfter).toBe('5');
      // Ollama's error shape with the platform's fields beside it.
      expect(JSON.parse(refused.body)).toMatchObject({
        code: 'RATE_LIMIT_EXCEEDED',
        error: expect.any(String),
      });
      expect(await health(bed)).toBe(200);
      // The refused stream's producer was never read: no upstream call for it.
      expect(bed.ollama.requests.length).toBe(calls);

      streams.shift()?.abort();
      const next = await until(async () => {
        const s = await openStream(bed, keyB);
        return s.status === 200 ? s : undefined;
      }, 'a freed stream slot');
      streams.push(next);
    } finally {
      for (const s of streams) s.abort();
      await until(async () => (bed.p.ctx.streams?.open() === 0 ? true : undefined), 'all slots back');
    }
  });
});
