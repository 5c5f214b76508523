/**
 * What several bench scenarios share: number formatting, a small JSON client that fails the bench on an
 * unexpected status, and loading the synthetic corpus into a topic through the documents API.
 */
import { corpusDocument } from './knowledge-corpus.js';

export const fmt = (n, d = 0) =>
  n.toLocaleString('en-US', { maximumFractionDigits: d, minimumFractionDigits: d });
export const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
export const signed = (n) => `${n >= 0 ? '+' : '−'}${fmt(Math.abs(n), 1)}`;
export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
/** Nearest-rank percentile of sorted samples. */
export const percentile = (sorted, p) =>
  sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(p * sorted.length) - 1))];

/** A small JSON client for one platform and key; any unexpected status fails the bench. */
export function client(baseUrl, key) {
  const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
  return async (method, urlPath, body, expected) => {
    const res = await fetch(`${baseUrl}${urlPath}`, {
      method,
      headers,
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await res.text();
    if (!expected.includes(res.status))
      throw new Error(`${method} ${urlPath}: ${res.status} ${text.slice(0, 300)}`);
    return JSON.parse(text);
  };
}

/**
 * Loads, processes and waits for corpus documents `state.next`, `state.next + 1`, … (`inFlight` at a time)
 * until `state.chunks` reaches `target`. `state.base` is the chunk count this call started from (for the
 * rate). Returns the wall-clock seconds and the chunks per second.
 */
export async function ingestCorpus(call, words, state, target, options) {
  const { topic, docChars, chunkSize, chunkOverlap, model, inFlight } = options;
  const started = performance.now();
  let pending = 0;
  let perDoc = 100;
  let docs = 0;
  const worker = async () => {
    // Another document only while the chunks done plus those on the way still fall short.
    while (state.chunks + pending * perDoc < target) {
      const n = state.next++;
      pending++;
      const doc = await call(
        'POST',
        '/api/documents/load',
        { source: 'text', content: corpusDocument(words, n, docChars), title: `Bench document ${n}`, topic },
        [201],
      );
      await call(
        'POST',
        `/api/documents/${doc.id}/process`,
        { chunkSize, chunkOverlap, embeddingModel: model },
        [202],
      );
      for (;;) {
        const view = await call(
          'GET',
          `/api/documents/${doc.id}?fields=status,processing,chunkCount,error`,
          undefined,
          [200],
        );
        if (!view.processing && view.status === 'indexed') {
          state.chunks += view.chunkCount;
          break;
        }
        if (view.status === 'failed') throw new Error(`document ${doc.id} failed: ${view.error}`);
        await sleep(10);
      }
      pending--;
      docs++;
      perDoc = (perDoc * 4 + (state.chunks - state.base) / docs) / 5;
    }
  };
  await Promise.all(Array.from({ length: inFlight }, worker));
  const seconds = (performance.now() - started) / 1000;
  return { seconds, rate: (state.chunks - state.base) / seconds };
}
