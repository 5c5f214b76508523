/**
 * A JSON schema read as n8n reads one (its json-schema-to-zod): a subschema that is neither an object
 * nor a boolean — `"name": "string"` where `{ "type": "string" }` was meant, as published templates
 * write — accepts anything instead of making the whole schema invalid. Returns a new schema.
 */
export function lenientSchema(schema: Record<string, unknown>, depth = 0): Record<string, unknown> {
  if (depth > 64) return schema;
  const sub = (v: unknown): unknown =>
    typeof v === 'boolean'
      ? v
      : v !== null && typeof v === 'object' && !Array.isArray(v)
        ? lenientSchema(v as Record<string, unknown>, depth + 1)
        : true;
  const out: Record<string, unknown> = { ...schema };
  for (const key of ['properties', 'patternProperties', 'definitions', '$defs']) {
    const map = schema[key];
    if (map !== null && typeof map === 'object' && !Array.isArray(map))
      out[key] = Object.fromEntries(Object.entries(map).map(([k, v]) => [k, sub(v)]));
  }
  for (const key of ['additionalProperties', 'additionalItems', 'not', 'contains', 'if', 'then', 'else']) {
    if (key in schema) out[key] = sub(schema[key]);
  }
  if ('items' in schema) out.items = Array.isArray(schema.items) ? schema.items.map(sub) : sub(schema.items);
  for (const key of ['anyOf', 'oneOf', 'allOf', 'prefixItems']) {
    const list = schema[key];
    if (Array.isArray(list)) out[key] = list.map(sub);
  }
  return out;
}
