import { once } from 'node:events';
import { describe, expect, it } from 'vitest';
import { pumped } from '../../src/core/http/stream-reply.js';

/** Resolves when `check` holds, polling each turn of the event loop (no fixed sleep). */
async function until(check: () => boolean): Promise<void> {
  for (let i = 0; i < 10_000 && !check(); i++) await new Promise((r) => setImmediate(r));
  expect(check()).toBe(true);
}

describe('streamed answers: the line pump', () => {
  it('passes every line in order, then ends', async () => {
    async function* lines() {
      for (let i = 0; i < 100; i++) yield `data: ${i}\n\n`;
    }
    const stream = pumped(lines());
    let text = '';
    for await (const chunk of stream) text += chunk.toString('utf8');
    expect(text).toBe(Array.from({ length: 100 }, (_, i) => `data: ${i}\n\n`).join(''));
  });

  it('stops pulling lines while nobody reads, within its buffer', async () => {
    let pulled = 0;
    const line = `${'x'.repeat(1023)}\n`;
    async function* endless() {
      for (;;) {
        pulled++;
        yield line;
      }
    }
    const stream = pumped(endless());
    // Paused (nothing reads): the pump must wait for a drain, never pull the generator unbounded.
    await until(() => stream.writableNeedDrain);
    const settled = pulled;
    for (let i = 0; i < 50; i++) await new Promise((r) => setImmediate(r));
    expect(pulled).toBe(settled);
    // The readable and writable sides hold at most 16 KiB each (plus the line that filled them).
    expect(pulled * line.length).toBeLessThanOrEqual(2 * 16 * 1024 + line.length);
    stream.destroy();
  });

  it('returns the lines when the stream is destroyed (the client went), so their cleanup runs', async () => {
    let cleanedUp = false;
    async function* lines() {
      try {
        for (;;) yield `${'y'.repeat(4095)}\n`;
      } finally {
        cleanedUp = true;
      }
    }
    const stream = pumped(lines());
    await until(() => stream.writableNeedDrain);
    stream.destroy();
    await until(() => cleanedUp);
  });

  it('fails the stream with the error the lines threw', async () => {
    async function* lines() {
      yield 'data: 1\n\n';
      throw new Error('the model failed');
    }
    const stream = pumped(lines());
    stream.resume();
    const [error] = await once(stream, 'error');
    expect((error as Error).message).toBe('the model failed');
  });
});
