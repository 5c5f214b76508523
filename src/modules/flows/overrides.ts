import { AppError, validationError } from '../../core/errors.js';
import type { FlowDefinition, Problem } from './definition.js';
import type { FlowLookups } from './flow-service.js';
import type { OverridableField } from './schemas.js';

/**
 * Keys of `overrideConfig` any caller may send: data rather than configuration. `vars` fill the
 * template's `{vars.NAME}` (and `vars.context` joins `{context}`); `sessionId` picks the memory.
 */
const ALWAYS_ALLOWED = new Set(['vars', 'sessionId']);

type Check = (value: unknown) => string | null;
const text =
  (max: number): Check =>
  (v) =>
    typeof v === 'string' && v.length <= max ? null : `must be a string of at most ${max} characters`;
const integer =
  (min: number, max: number): Check =>
  (v) =>
    Number.isInteger(v) && (v as number) >= min && (v as number) <= max
      ? null
      : `must be an integer from ${min} to ${max}`;
const number =
  (min: number, max: number): Check =>
  (v) =>
    typeof v === 'number' && Number.isFinite(v) && v >= min && v <= max
      ? null
      : `must be a number from ${min} to ${max}`;

const CHECKS: Record<OverridableField, Check> = {
  systemPrompt: text(20_000),
  promptTemplate: (v) =>
    text(20_000)(v) ?? ((v as string).includes('{question}') ? null : 'must contain {question}'),
  model: text(200),
  temperature: number(0, 2),
  maxTokens: integer(1, 32_768),
  topK: integer(1, 20),
  minScore: number(-1e9, 1e9),
  topics: (v) =>
    Array.isArray(v) &&
    v.length >= 1 &&
    v.length <= 10 &&
    v.every((t) => typeof t === 'string' && t.length > 0)
      ? null
      : 'must be 1 to 10 topic names',
};

/**
 * The definition a prediction runs with: fields the flow lets callers override, and nothing else
 * (403 naming the others: Flowise's override security, on by default here).
 */
export function applyOverrides(
  def: FlowDefinition,
  override: Record<string, unknown>,
  lookups: Pick<FlowLookups, 'chatModelProblem'>,
  accountId: string,
): { definition: FlowDefinition; vars: Record<string, unknown>; sessionId: string | undefined } {
  const keys = Object.keys(override);
  const refused = keys.filter(
    (k) => !ALWAYS_ALLOWED.has(k) && !def.overridableFields.includes(k as OverridableField),
  );
  if (refused.length > 0)
    throw new AppError('FORBIDDEN', `overrideConfig may not change: ${refused.join(', ')}`, {
      fields: refused,
      overridableFields: def.overridableFields,
    });
  const problems: Problem[] = [];
  const definition: FlowDefinition = { ...def };
  for (const key of keys) {
    if (ALWAYS_ALLOWED.has(key)) continue;
    const field = key as OverridableField;
    const value = override[field];
    const problem = CHECKS[field](value);
    if (problem) {
      problems.push({ field: `overrideConfig.${field}`, message: problem });
      continue;
    }
    if (field === 'model') {
      const modelProblem = lookups.chatModelProblem(accountId, value as string);
      if (modelProblem) problems.push({ field: 'overrideConfig.model', message: modelProblem });
    }
    (definition as unknown as Record<string, unknown>)[field] = value;
  }
  const vars = override.vars ?? {};
  if (typeof vars !== 'object' || vars === null || Array.isArray(vars))
    problems.push({ field: 'overrideConfig.vars', message: 'must be an object' });
  const sessionId = override.sessionId;
  if (
    sessionId !== undefined &&
    (typeof sessionId !== 'string' || sessionId === '' || sessionId.length > 200)
  )
    problems.push({ field: 'overrideConfig.sessionId', message: 'must be a string of 1 to 200 characters' });
  if (problems.length > 0) throw validationError('Invalid overrideConfig', problems);
  return {
    definition,
    vars: vars as Record<string, unknown>,
    sessionId: sessionId as string | undefined,
  };
}
