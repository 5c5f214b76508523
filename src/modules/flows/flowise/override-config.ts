import { validationError } from '../../../core/errors.js';

/** Flowise's node input names as the platform's overridable fields (the rest pass as they are). */
const INPUT_FIELDS: Readonly<Record<string, string>> = {
  modelName: 'model',
  maxTokensToSample: 'maxTokens',
  systemMessagePrompt: 'systemPrompt',
};

/**
 * Flowise's `overrideConfig` for a flowData flow, in the platform's names: an input by its name
 * (`temperature`, `modelName`, `systemMessagePrompt`, `topK`…), for every node or, as Flowise allows,
 * per node (`{"temperature": {"chatOpenAI_0": 0.2}}`). Which fields may change is still the flow's
 * `overridableFields` (applyOverrides).
 */
export function flowiseOverride(
  override: Record<string, unknown>,
  nodeIds: ReadonlySet<string>,
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, raw] of Object.entries(override)) {
    let value = raw;
    if (key !== 'vars' && typeof raw === 'object' && raw !== null && !Array.isArray(raw)) {
      const entries = Object.entries(raw);
      const strangers = entries.filter(([id]) => !nodeIds.has(id)).map(([id]) => id);
      if (strangers.length > 0 || entries.length === 0)
        throw validationError('Invalid overrideConfig', [
          {
            field: `overrideConfig.${key}`,
            message: `names nodes this flow does not have: ${strangers.slice(0, 10).join(', ') || '(none)'}`,
          },
        ]);
      value = entries[0]?.[1];
    }
    out[INPUT_FIELDS[key] ?? key] = value;
  }
  return out;
}
