import type { ModelEntry } from './types.js';

/**
 * What tokens cost in US dollars at the registry's prices (`pricing` of a model entry), for reports
 * only: nothing is billed here. Null when the model has no price (built-in and local models).
 */
export function costUsd(
  pricing: ModelEntry['pricing'] | undefined,
  promptTokens: number,
  completionTokens: number,
): number | null {
  if (!pricing) return null;
  const cost = (promptTokens * pricing.inputPerMillion + completionTokens * pricing.outputPerMillion) / 1e6;
  // Micro-dollars: enough for a single call, and no binary noise in reports.
  return Math.round(cost * 1e6) / 1e6;
}
