/**
 * What the built-in chat model does with sampling options. It never samples: its answer is chosen
 * deterministically (the greedy choice, as at temperature 0), so options that only shape a random
 * draw are honoured trivially — every temperature, seed, top_p or top_k gives the same, reproducible
 * answer. Options that would change a deterministic answer are honoured (`max_tokens`, `stop`) or,
 * where a quote cannot follow them (penalties, mirostat, …), refused by name: never accepted and dropped.
 */
import type { ChatOptions, ChatRequest, Unsupported } from '../types.js';

/**
 * Ollama `options` with nothing to change in a deterministic quote: the knowledge-base switch it reads,
 * the runtime and hardware settings of a local server, and the sampling filters a greedy choice already
 * passes (min_p, typical_p, tfs_z keep the most likely token).
 */
const ACCEPTED_OLLAMA_OPTIONS = new Set([
  'knowledge_base',
  'num_ctx',
  'num_batch',
  'num_gpu',
  'main_gpu',
  'num_thread',
  'use_mmap',
  'use_mlock',
  'low_vram',
  'numa',
  'min_p',
  'typical_p',
  'tfs_z',
]);

/** Neutral values of Ollama options that would otherwise change the answer: accepted only at these. */
const NEUTRAL_OLLAMA_OPTIONS: Record<string, unknown> = {
  repeat_penalty: 1,
  mirostat: 0,
  num_keep: 0,
  repeat_last_n: 0,
  penalize_newline: false,
};

/** The first sampling option the built-in extractive model cannot follow, or null. */
export function samplingRefusal(request: ChatRequest): Unsupported | null {
  const o: ChatOptions = request.options;
  if (o.presencePenalty !== undefined && o.presencePenalty !== 0)
    return {
      field: 'body.presence_penalty',
      reason: 'a built-in model quotes: it cannot avoid repeating words',
    };
  if (o.frequencyPenalty !== undefined && o.frequencyPenalty !== 0)
    return {
      field: 'body.frequency_penalty',
      reason: 'a built-in model quotes: it cannot avoid repeating words',
    };
  if (o.stop !== undefined && o.stop.length > 0 && request.format !== undefined)
    return {
      field: 'body.stop',
      reason: 'would cut a built-in model’s JSON answer; send it without a format',
    };
  for (const [name, value] of Object.entries(o.extra ?? {})) {
    if (inert(name, value)) continue;
    return {
      field: `body.options.${name}`,
      reason: 'is not something a built-in model can follow: it quotes, it does not sample',
    };
  }
  return null;
}

/** An Ollama option with nothing to change in a deterministic answer (see ACCEPTED_OLLAMA_OPTIONS). */
const inert = (name: string, value: unknown): boolean =>
  ACCEPTED_OLLAMA_OPTIONS.has(name) ||
  value === undefined ||
  value === null ||
  (name in NEUTRAL_OLLAMA_OPTIONS && NEUTRAL_OLLAMA_OPTIONS[name] === value);

/** Options that only shape a random draw: the chat model honours every value of them trivially. */
const DRAW_OPTIONS = new Set(['temperature', 'top_p', 'top_k', 'seed']);

/**
 * The first Ollama option a built-in embedder cannot follow, or null. As the chat model: what only
 * shapes a random draw or sets up a local server's runtime is honoured trivially (the vectors are
 * deterministic); what would change generated text (num_predict, stop, penalties, …) is refused by
 * name, since an embedder generates none.
 */
export function embedOptionRefusal(options: Record<string, unknown> | undefined): Unsupported | null {
  for (const [name, value] of Object.entries(options ?? {})) {
    if (DRAW_OPTIONS.has(name) || inert(name, value)) continue;
    return {
      field: `body.options.${name}`,
      reason: 'is not something a built-in embedder can follow: it generates no text',
    };
  }
  return null;
}

/**
 * The answer's pieces cut before the first stop sequence (as OpenAI and Ollama do: the stop text is not
 * returned), and whether one was found.
 */
export function cutAtStop(
  chunks: readonly string[],
  stop: readonly string[] | undefined,
): { chunks: string[]; stopped: boolean } {
  const text = chunks.join('');
  let at = -1;
  for (const s of stop ?? []) {
    if (s === '') continue;
    const i = text.indexOf(s);
    if (i >= 0 && (at < 0 || i < at)) at = i;
  }
  if (at < 0) return { chunks: [...chunks], stopped: false };
  const out: string[] = [];
  let used = 0;
  for (const chunk of chunks) {
    if (used >= at) break;
    out.push(chunk.slice(0, at - used));
    used += chunk.length;
  }
  return { chunks: out.filter((c) => c !== ''), stopped: true };
}
