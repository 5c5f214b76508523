import { NodeOperationError } from '../../engine/node-type.js';
import type { EngineDeps } from '../../engine/types.js';
import type { Embeddings } from './ai-parts.js';
import { errorText, parseBody } from './openai-wire.js';

/**
 * Embeddings over the two wire formats n8n's embedding nodes speak: OpenAI's `POST /embeddings` (OpenAI,
 * any compatible server, or this platform's gateway, which charges the key) and Ollama's `POST /api/embed`.
 * Bounded: texts per request (batches), texts per call, and the vectors' size.
 */

const MAX_TEXTS = 2_000;
const MAX_DIMENSIONS = 16_384;

export interface EmbeddingsTarget {
  label: string;
  url: string;
  headers: Record<string, string>;
  credentialHeaders: string[];
  model: string;
  /** Extra body fields (`dimensions`). */
  body: Record<string, unknown>;
  batchSize: number;
  stripNewLines: boolean;
  timeoutMs: number;
  wire: 'openai' | 'ollama';
}

export function wireEmbeddings(deps: EngineDeps, target: EmbeddingsTarget): Embeddings {
  const embedBatch = async (texts: string[]): Promise<number[][]> => {
    const input = target.stripNewLines ? texts.map((t) => t.replace(/\n/g, ' ')) : texts;
    const res = await deps.http({
      method: 'POST',
      url: target.url,
      headers: { ...target.headers, 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify(
        target.wire === 'openai'
          ? { model: target.model, input, encoding_format: 'float', ...target.body }
          : { model: target.model, input, ...target.body },
      ),
      timeoutMs: target.timeoutMs,
      credentialHeaders: target.credentialHeaders,
    });
    const parsed = parseBody(res.body, target.label);
    if (res.status < 200 || res.status >= 300)
      throw new NodeOperationError(
        `${target.label} refused the embeddings request (${res.status}): ${errorText(parsed)}`,
      );
    const vectors =
      target.wire === 'openai' ? openAiVectors(parsed) : (parsed as { embeddings?: unknown }).embeddings;
    if (!Array.isArray(vectors) || vectors.length !== texts.length)
      throw new NodeOperationError(
        `${target.label} answered ${Array.isArray(vectors) ? vectors.length : 'no'} embeddings for ${texts.length} texts`,
      );
    return vectors.map((v) => checkedVector(v, target.label));
  };
  const embedDocuments = async (texts: string[]): Promise<number[][]> => {
    if (texts.length > MAX_TEXTS)
      throw new NodeOperationError(`Too many texts to embed at once (${texts.length}, at most ${MAX_TEXTS})`);
    const out: number[][] = [];
    for (let i = 0; i < texts.length; i += target.batchSize)
      out.push(...(await embedBatch(texts.slice(i, i + target.batchSize))));
    return out;
  };
  return {
    kind: 'embeddings',
    embedDocuments,
    async embedQuery(text) {
      const [vector] = await embedBatch([text]);
      return vector ?? [];
    },
  };
}

/** OpenAI's `data` in `index` order. */
function openAiVectors(body: unknown): unknown[] | undefined {
  const data = (body as { data?: unknown }).data;
  if (!Array.isArray(data)) return undefined;
  return [...data]
    .sort(
      (a, b) => Number((a as { index?: number }).index ?? 0) - Number((b as { index?: number }).index ?? 0),
    )
    .map((d) => (d as { embedding?: unknown }).embedding);
}

function checkedVector(v: unknown, label: string): number[] {
  if (
    !Array.isArray(v) ||
    v.length === 0 ||
    v.length > MAX_DIMENSIONS ||
    !v.every((x) => typeof x === 'number' && Number.isFinite(x))
  )
    throw new NodeOperationError(
      `${label} answered an embedding that is not a list of up to ${MAX_DIMENSIONS} numbers`,
    );
  return v as number[];
}
