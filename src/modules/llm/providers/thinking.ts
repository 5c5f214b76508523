import type { ChatRequest } from '../types.js';

/**
 * The reasoning level a request asks for. OpenAI and Ollama models think at a level, not within a
 * token budget: Anthropic's `budget_tokens` becomes the closest level (up to 4,096 tokens low, up to
 * 16,384 medium, above that high) rather than being dropped.
 */
export function reasoningLevel(request: ChatRequest): string | undefined {
  const effort = request.openAi?.reasoningEffort;
  if (effort !== undefined) return effort;
  const budget = request.anthropic?.thinkingBudget;
  if (budget === undefined) return undefined;
  return budget <= 4096 ? 'low' : budget <= 16_384 ? 'medium' : 'high';
}
