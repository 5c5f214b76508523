/**
 * Worker thread of `builtin/use-lite` (Universal Sentence Encoder lite, 512 dimensions). Plain JS so the
 * same file runs from src/ under vitest and from dist/ after tsc.
 *
 * The model (TF.js on its WASM backend, weights and .wasm files read from node_modules; nothing is
 * downloaded) loads on the first request. Messages in: `{ id, texts }`. Messages out:
 * `{ id, embeddings }` (L2-normalised; a blank text gets the zero vector, as the model cannot embed
 * nothing) or `{ id, error, missing }` (`missing` when the optional packages are not installed).
 */
import { parentPort, workerData } from 'node:worker_threads';

const { embeddingsPackage, modelPackage, maxChars, batchSize, dimensions } = workerData;

/** @type {Promise<{ embed(texts: string[]): Promise<number[][]> }> | null} */
let loading = null;

function load() {
  loading ??= (async () => {
    const [embeddings, weights] = await Promise.all([import(embeddingsPackage), import(modelPackage)]);
    const initModel = embeddings.initModel ?? embeddings.default?.initModel;
    const modelSource = weights.modelSource ?? weights.default?.modelSource;
    return initModel(modelSource);
  })();
  // A failed load is retried by the next request (the error may have been transient).
  loading.catch(() => {
    loading = null;
  });
  return loading;
}

/** @param {number[]} vector */
function normalise(vector) {
  let sum = 0;
  for (const x of vector) sum += x * x;
  if (sum === 0) return vector;
  const scale = 1 / Math.sqrt(sum);
  return vector.map((x) => x * scale);
}

/** @param {string[]} texts */
async function embedAll(texts) {
  const model = await load();
  /** @type {number[][]} */
  const out = texts.map(() => new Array(dimensions).fill(0));
  const wanted = [];
  for (let i = 0; i < texts.length; i++) if (texts[i].trim() !== '') wanted.push(i);
  // Small batches keep the tensors (and the WASM heap) small whatever the request's size.
  for (let from = 0; from < wanted.length; from += batchSize) {
    const indices = wanted.slice(from, from + batchSize);
    const vectors = await model.embed(indices.map((i) => texts[i].slice(0, maxChars)));
    indices.forEach((index, k) => {
      out[index] = normalise(vectors[k]);
    });
  }
  return out;
}

parentPort.on('message', async ({ id, texts }) => {
  try {
    parentPort.postMessage({ id, embeddings: await embedAll(texts) });
  } catch (error) {
    const code = error && typeof error === 'object' && 'code' in error ? error.code : undefined;
    parentPort.postMessage({
      id,
      error: error instanceof Error ? error.message : String(error),
      missing: code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND',
    });
  }
});
