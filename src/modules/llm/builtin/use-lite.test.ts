import { afterAll, describe, expect, it } from 'vitest';
import { until } from '../../../../test/helpers/until.js';
import type { ModelEntry } from '../types.js';
import { cosine } from './hashed-ngrams.js';
import { BuiltinProvider } from './index.js';
import { USE_LITE_DIMENSIONS, USE_LITE_MISSING, UseLiteEmbedder } from './use-lite.js';

// Each embedding costs tens of milliseconds and each worker start loads the model (~0.5 s), so the
// tests share workers where they can.
const signal = new AbortController().signal;
const norm = (v: number[]): number => Math.hypot(...v);

describe('builtin/use-lite', () => {
  const embedder = new UseLiteEmbedder();
  afterAll(() => embedder.close());

  it('starts no worker until the first request', () => {
    expect(embedder.workersStarted).toBe(0);
    expect(embedder.workerAlive).toBe(false);
  });

  it('embeds in 512 normalised dimensions, meaning over wording', async () => {
    const [cat, kitten, market, blank] = await embedder.embed(
      [
        'The cat is sleeping on the sofa.',
        'A kitten naps on the couch.',
        'Stock prices fell sharply today.',
        '',
      ],
      signal,
    );
    for (const v of [cat!, kitten!, market!]) {
      expect(v).toHaveLength(USE_LITE_DIMENSIONS);
      expect(norm(v)).toBeCloseTo(1, 5);
    }
    // Almost no words in common, yet closer than the unrelated sentence.
    expect(cosine(cat!, kitten!)).toBeGreaterThan(cosine(cat!, market!) + 0.2);
    expect(blank).toEqual(new Array(USE_LITE_DIMENSIONS).fill(0));
  });

  it('reuses its worker across calls, queueing concurrent ones', async () => {
    const [a, b] = await Promise.all([embedder.embed(['first'], signal), embedder.embed(['second'], signal)]);
    expect(a).toHaveLength(1);
    expect(b).toHaveLength(1);
    expect(embedder.workersStarted).toBe(1);
    expect(embedder.workerAlive).toBe(true);
  });

  it('ends the worker on close, and refuses work afterwards', async () => {
    await embedder.close();
    expect(embedder.workerAlive).toBe(false);
    await expect(embedder.embed(['again'], signal)).rejects.toMatchObject({
      name: 'UpstreamError',
      status: 503,
    });
  });

  it('times out with a retryable error, and the next request gets a fresh worker', async () => {
    const slow = new UseLiteEmbedder({ timeoutMs: 5 });
    try {
      await expect(slow.embed(['needs the model loaded first'], signal)).rejects.toMatchObject({
        name: 'UpstreamError',
        retryable: true,
      });
      expect(slow.workerAlive).toBe(false);
      await expect(slow.embed(['again'], signal)).rejects.toMatchObject({ retryable: true });
      expect(slow.workersStarted).toBe(2);
    } finally {
      await slow.close();
    }
  });

  it('ends an idle worker', async () => {
    const idle = new UseLiteEmbedder({ idleMs: 50 });
    try {
      await idle.embed(['hello'], signal);
      expect(idle.workerAlive).toBe(true);
      await until(() => !idle.workerAlive, 'the idle worker to end', 20_000);
      await idle.embed(['hello again'], signal);
      expect(idle.workersStarted).toBe(2);
    } finally {
      await idle.close();
    }
  });

  it('says how to install the optional packages when they are missing', async () => {
    const missing = new UseLiteEmbedder({
      packages: { embeddings: '@energetic-ai/not-installed', model: '@energetic-ai/also-not-installed' },
    });
    try {
      const error = { name: 'UpstreamError', retryable: false, status: 503, message: USE_LITE_MISSING };
      await expect(missing.embed(['x'], signal)).rejects.toMatchObject(error);
      await expect(missing.embed(['x'], signal)).rejects.toMatchObject(error);
      expect(missing.workersStarted).toBe(1);
      expect(missing.workerAlive).toBe(false);
    } finally {
      await missing.close();
    }
  });

  it('serves the provider as builtin/use-lite', async () => {
    const provider = new BuiltinProvider();
    const entry: ModelEntry = {
      name: 'builtin/use-lite',
      provider: 'builtin',
      upstreamModel: 'use-lite',
      kind: 'embedding',
      contextWindow: 8192,
      fallbacks: [],
      timeoutMs: 30_000,
      dimensions: 512,
    };
    try {
      const result = await provider.embed({ model: 'use-lite', input: ['hello world'] }, entry, signal);
      expect(result.embeddings[0]).toHaveLength(512);
      expect(result.promptTokens).toBeNull();
    } finally {
      await provider.close();
    }
  });
});
