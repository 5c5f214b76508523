import { NodeOperationError } from '../../../engine/node-type.js';
import type { Json } from '../../../engine/types.js';
import { type Parsed, parseLooseJson, toArray, toBoolean, toObject } from '../filter/values.js';

export const FIELD_TYPES = ['string', 'number', 'boolean', 'array', 'object'] as const;
export type FieldType = (typeof FIELD_TYPES)[number];

/** n8n's wording of a value in a type error: `'abc'`, `'null'`, `array`, `object`. */
function describe(value: unknown): string {
  if (value === null) return "'null'";
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'object') return 'object';
  return `'${String(value)}'`;
}

function convert(value: unknown, type: FieldType): Parsed {
  switch (type) {
    case 'string':
      return { valid: true, value };
    case 'number': {
      const n = Number(value);
      return Number.isNaN(n) ? { valid: false } : { valid: true, value: n };
    }
    case 'boolean':
      return toBoolean(value);
    case 'array':
      return toArray(value);
    case 'object':
      return toObject(value);
  }
}

/**
 * A field's value converted to its declared type, as n8n's Set v3.x does: since 3.2 a missing value
 * is null whatever the type; a string field stringifies (objects as JSON); a value that does not
 * convert is an error, or is kept as it is with "Ignore Type Conversion Errors".
 */
export function convertField(
  name: string,
  type: FieldType,
  raw: unknown,
  itemIndex: number,
  ignoreErrors: boolean,
  version: number,
): Json {
  if (version >= 3.2 && (raw === undefined || raw === null)) return null;
  const description = `To fix the error try to change the type for the field "${name}" or activate the option “Ignore Type Conversion Errors” to apply a less strict type validation`;
  let value = raw;
  if (type === 'string') {
    if (version > 3 && (raw === undefined || raw === null)) {
      if (ignoreErrors) return null;
      throw new NodeOperationError(
        `'${name}' expects a ${type} but we got '${String(raw)}' [item ${itemIndex}]`,
        {
          description,
        },
      );
    }
    value = typeof raw === 'object' ? JSON.stringify(raw) : String(raw);
  }
  if (value === undefined || value === null) return null;
  const parsed = convert(value, type);
  if (parsed.valid) return (parsed.value ?? null) as Json;
  if (ignoreErrors) return value as Json;
  throw new NodeOperationError(
    `'${name}' expects a ${type} but we got ${describe(value)} [item ${itemIndex}]`,
    {
      description,
    },
  );
}

/**
 * The JSON of raw mode (or an object field in 3.0–3.2): JSON text, with n8n's repairs of single
 * quotes, unquoted keys and trailing commas; must hold an object.
 */
export function parseJsonObject(json: unknown, itemIndex: number, entryName?: string): Record<string, Json> {
  const location = entryName ? `entry "${entryName}" inside 'Fields to Set'` : "'JSON Output'";
  let data: unknown = json;
  if (typeof json === 'string') {
    data = parseLooseJson(json);
    if (data === undefined) data = parseLooseJson(trimTrailingCommas(json.replace(/,\s*([\]}])/g, '$1')));
    if (data === undefined) {
      throw new NodeOperationError(`The ${location} in item ${itemIndex} contains invalid JSON`, {
        description: json,
      });
    }
  }
  if (data === null || typeof data !== 'object' || Array.isArray(data)) {
    throw new NodeOperationError(`The ${location} in item ${itemIndex} does not contain a valid JSON object`);
  }
  return data as Record<string, Json>;
}

/** `/,+$/` without the regex: it retries at every comma, so 20,000 commas held the event loop 1.6 s. */
function trimTrailingCommas(text: string): string {
  let end = text.length;
  while (end > 0 && text.charCodeAt(end - 1) === 0x2c) end--;
  return text.slice(0, end);
}
