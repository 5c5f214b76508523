/**
 * What an OpenAI-compatible server takes beyond OpenAI's own API. OpenAI has no word for most of
 * Ollama's `options`; vLLM and llama.cpp's server take some of them as extra body fields under
 * their own names. A model entry says which server it is (`compat`); an option the server is not
 * known to take is refused by name, never sent to be ignored nor dropped.
 */
import type { ChatRequest, EmbedRequest, Unsupported } from '../types.js';
import { reasoningLevel } from './thinking.js';

export const OPENAI_COMPATS = ['openai', 'vllm', 'llama.cpp'] as const;
export type OpenAiCompat = (typeof OPENAI_COMPATS)[number];

/**
 * Ollama option → the body field each server reads it from. Options mapped onto OpenAI's own
 * fields (num_predict → max_tokens, stop, seed, penalties, temperature, top_p, top_k) never get here:
 * the Ollama adapter turns them into neutral options first.
 */
const EXTRA_FIELDS: Record<Exclude<OpenAiCompat, 'openai'>, Record<string, string>> = {
  // vLLM's extra sampling parameters (SamplingParams).
  vllm: { repeat_penalty: 'repetition_penalty', min_p: 'min_p' },
  // llama.cpp's server reads its native sampling fields on /v1/chat/completions and /v1/completions.
  'llama.cpp': {
    repeat_penalty: 'repeat_penalty',
    repeat_last_n: 'repeat_last_n',
    min_p: 'min_p',
    typical_p: 'typical_p',
    mirostat: 'mirostat',
    mirostat_tau: 'mirostat_tau',
    mirostat_eta: 'mirostat_eta',
    num_keep: 'n_keep',
  },
};

/** Ollama options that set up the model's runtime, which an OpenAI-compatible server fixes at launch. */
const RUNTIME_OPTIONS = new Set([
  'num_ctx',
  'num_batch',
  'num_gpu',
  'main_gpu',
  'num_thread',
  'numa',
  'use_mmap',
  'use_mlock',
  'low_vram',
  'f16_kv',
  'vocab_only',
  'logits_all',
]);

/** The extra body fields for a request's Ollama options, or the first option this server cannot take. */
export function extraOptionFields(
  request: ChatRequest,
  compat: OpenAiCompat,
): { fields: Record<string, unknown> } | Unsupported {
  const fields: Record<string, unknown> = {};
  const extra = request.options.extra;
  if (!extra) return { fields };
  const names = compat === 'openai' ? {} : EXTRA_FIELDS[compat];
  for (const [option, value] of Object.entries(extra)) {
    const field = names[option];
    if (field !== undefined) {
      fields[field] = value;
      continue;
    }
    const reason = RUNTIME_OPTIONS.has(option)
      ? 'is a runtime setting an OpenAI-compatible server fixes when it starts, not per request'
      : compat === 'openai'
        ? "has no OpenAI equivalent (a model entry with compat 'vllm' or 'llama.cpp' passes the sampling options those servers take)"
        : `is not taken by a ${compat} server`;
    return { field: `body.options.${option}`, reason };
  }
  return { fields };
}

/**
 * Ollama's `options` and `keep_alive` on an OpenAI-compatible embedding model: `/embeddings` has no
 * field for any of them, so the first one sent is refused (the chat path's reasons where they apply).
 */
export function embedOptionRefusal(request: EmbedRequest): Unsupported | null {
  if (request.keepAlive !== undefined)
    return {
      field: 'body.keep_alive',
      reason: 'an OpenAI-compatible server does not load or unload a model per request',
    };
  for (const option of Object.keys(request.options ?? {}))
    return {
      field: `body.options.${option}`,
      reason: RUNTIME_OPTIONS.has(option)
        ? 'is a runtime setting an OpenAI-compatible server fixes when it starts, not per request'
        : 'has no equivalent in an OpenAI-compatible embeddings request',
    };
  return null;
}

/**
 * Ollama's `think` on an OpenAI-compatible model. A level is `reasoning_effort` (set by the adapter);
 * vLLM and llama.cpp switch a model's thinking through its chat template; OpenAI's own models
 * reason at a level only.
 */
export function thinkFields(
  request: ChatRequest,
  compat: OpenAiCompat,
): { fields: Record<string, unknown> } | Unsupported {
  if (request.think === undefined || reasoningLevel(request) !== undefined) return { fields: {} };
  if (compat !== 'openai') return { fields: { chat_template_kwargs: { enable_thinking: request.think } } };
  return {
    field: 'body.think',
    reason: "an OpenAI model's reasoning is set by a level: send think 'low', 'medium' or 'high'",
  };
}
