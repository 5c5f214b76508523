/**
 * The built-in models' CPU work as CPU-pool tasks (src/core/cpu): these run in a worker thread when an
 * input is large. Imports stay light: a worker loads this module and what it needs, nothing else.
 */
import { type AnswerInput, type AnswerOutput, answerQuotes } from './extractive.js';
import { embedHashedNgrams, HASHED_NGRAMS_DIMENSIONS } from './hashed-ngrams.js';

export function answer(input: AnswerInput): AnswerOutput {
  return answerQuotes(input);
}

/** Hashed n-gram vectors of `texts`, row after row in one buffer (moved back, not copied). */
export function embedHashed(texts: string[]): Float32Array {
  const out = new Float32Array(texts.length * HASHED_NGRAMS_DIMENSIONS);
  for (let i = 0; i < texts.length; i++) out.set(embedHashedNgrams(texts[i]!), i * HASHED_NGRAMS_DIMENSIONS);
  return out;
}
