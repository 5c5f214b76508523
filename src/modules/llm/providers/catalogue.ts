import type { ProviderDefinition } from '../types.js';
import { anthropicProviderDefinition } from './anthropic.js';
import { builtinProviderDefinition } from './builtin.js';
import { ollamaProviderDefinition } from './ollama.js';
import { openAiProviderDefinition } from './openai.js';

/**
 * Every provider the gateway can route to, by kind. A new provider is one file exporting a
 * `ProviderDefinition` and one line here; model entries name it in `provider`.
 */
export const PROVIDER_CATALOGUE: readonly ProviderDefinition[] = [
  builtinProviderDefinition,
  ollamaProviderDefinition,
  openAiProviderDefinition,
  anthropicProviderDefinition,
];

export function providerDefinition(kind: string): ProviderDefinition | undefined {
  return PROVIDER_CATALOGUE.find((p) => p.kind === kind);
}
