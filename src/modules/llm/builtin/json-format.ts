/**
 * The built-in chat model honours `format` / `response_format`: its JSON answer (`{answer, sources}`)
 * is checked against the caller's schema, and a schema it cannot meet is a 400 that says so, never a
 * 200 whose body does not validate.
 */
import { Ajv, type ValidateFunction } from 'ajv';
import { type ChatEvent, UpstreamError } from '../types.js';

const ajv = new Ajv({ strict: false, allErrors: false, validateSchema: true });
/** Keywords whose check runs a caller's regular expression or an unbounded lookup: not evaluated here. */
const REFUSED_KEYWORDS = new Set(['pattern', 'patternProperties', '$dynamicRef', '$ref']);
const MAX_SCHEMA_NODES = 2_000;

/** Why a schema cannot be held to, or null: regular expressions and references are not evaluated. */
export function schemaRefusal(schema: Record<string, unknown>): string | null {
  let nodes = 0;
  const stack: unknown[] = [schema];
  while (stack.length > 0) {
    const node = stack.pop();
    if (++nodes > MAX_SCHEMA_NODES) return `has more than ${MAX_SCHEMA_NODES} parts`;
    if (Array.isArray(node)) stack.push(...node);
    else if (node && typeof node === 'object')
      for (const [key, value] of Object.entries(node)) {
        if (REFUSED_KEYWORDS.has(key)) return `uses '${key}', which a built-in model does not evaluate`;
        stack.push(value);
      }
  }
  return null;
}

function compile(schema: Record<string, unknown>): ValidateFunction {
  try {
    return ajv.compile(schema);
  } catch (error) {
    throw new UpstreamError(`the format is not a valid JSON schema: ${(error as Error).message}`, false, 400);
  }
}

/**
 * The answer's events, once its JSON text validates against `schema` (read whole first: a stream
 * cannot take back what it sent). A mismatch is a 400 naming the first failed rule.
 */
export async function validated(
  events: AsyncIterable<ChatEvent>,
  schema: Record<string, unknown>,
  model: string,
): Promise<AsyncIterable<ChatEvent>> {
  const check = compile(schema);
  const all: ChatEvent[] = [];
  let text = '';
  for await (const event of events) {
    all.push(event);
    if (event.type === 'delta') text += event.content ?? '';
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    value = undefined;
  }
  if (value === undefined || !check(value)) {
    const why = check.errors?.[0];
    const detail = why ? `${why.instancePath || '/'} ${why.message ?? 'does not match'}` : 'is not JSON';
    throw new UpstreamError(
      `${model} answers {"answer", "sources"} and cannot follow this schema (its answer at ${detail})`,
      false,
      400,
    );
  }
  return (async function* () {
    yield* all;
  })();
}
