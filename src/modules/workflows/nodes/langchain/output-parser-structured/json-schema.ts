import { Ajv, type ValidateFunction } from 'ajv';

const ajv = new Ajv({ allErrors: true, strict: false, allowUnionTypes: true });
const MAX_SCHEMA_CHARS = 100_000;

/** A JSON schema from an example value, every property required (n8n's `fromJson`, v1.3). */
export function schemaFromExample(value: unknown, depth = 0): Record<string, unknown> {
  if (depth > 32) return {};
  if (Array.isArray(value))
    return { type: 'array', items: value.length > 0 ? schemaFromExample(value[0], depth + 1) : {} };
  if (value === null) return { type: 'null' };
  if (typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>);
    return {
      type: 'object',
      properties: Object.fromEntries(entries.map(([k, v]) => [k, schemaFromExample(v, depth + 1)])),
      required: entries.map(([k]) => k),
    };
  }
  if (typeof value === 'number') return { type: 'number' };
  if (typeof value === 'boolean') return { type: 'boolean' };
  return { type: 'string' };
}

/** Parses JSON text of a schema or an example; throws naming the field. */
export function parseJsonField(text: string, field: string): unknown {
  if (text.length > MAX_SCHEMA_CHARS)
    throw new Error(`${field} is longer than ${MAX_SCHEMA_CHARS} characters`);
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new Error(`${field} is not valid JSON (${error instanceof Error ? error.message : String(error)})`);
  }
}

const compiled = new Map<string, ValidateFunction>();

/** A validator for `schema` (compiled once per schema text). */
export function validatorOf(schema: Record<string, unknown>): ValidateFunction {
  const key = JSON.stringify(schema);
  let validate = compiled.get(key);
  if (!validate) {
    validate = ajv.compile(schema);
    if (compiled.size > 500) compiled.clear();
    compiled.set(key, validate);
  }
  return validate;
}

/** A model's text as JSON: the whole text, else its first ```json fenced block. */
export function jsonOfText(text: string): unknown {
  const trimmed = text.trim();
  try {
    return JSON.parse(trimmed);
  } catch {
    const fenced = /```(?:json)?\s*([\s\S]*?)```/.exec(trimmed);
    if (fenced?.[1]) return JSON.parse(fenced[1]);
    throw new Error('the answer is not JSON');
  }
}
