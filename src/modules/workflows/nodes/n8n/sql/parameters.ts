import { Type } from 'typebox';
import { annotated, hiddenWhen } from '../../../engine/display-options.js';
import { type NodeExecutionContext, NodeOperationError } from '../../../engine/node-type.js';

/** n8n's resource locator (`{__rl, mode, value}`) or a plain name, for schema and table. */
export const ResourceLocator = Type.Union([
  Type.String({ maxLength: 1_000 }),
  Type.Object(
    {
      __rl: Type.Optional(Type.Boolean()),
      mode: Type.Optional(Type.String({ maxLength: 50 })),
      value: Type.Union([Type.String({ maxLength: 1_000 }), Type.Number()]),
      cachedResultName: Type.Optional(Type.String({ maxLength: 1_000 })),
      cachedResultUrl: Type.Optional(Type.String({ maxLength: 2_000 })),
    },
    { additionalProperties: false },
  ),
]);

export const locatorValue = (value: unknown): string =>
  typeof value === 'object' && value !== null
    ? String((value as { value?: unknown }).value ?? '')
    : String(value ?? '');

const Scalar = Type.Union([Type.String(), Type.Number(), Type.Boolean(), Type.Null()]);

/** n8n's "Select Rows" fixed collection. */
export const WhereCollection = Type.Object(
  {
    values: Type.Optional(
      Type.Array(
        Type.Object(
          {
            column: Type.String({ maxLength: 200 }),
            condition: Type.Optional(
              Type.Enum(['equal', '!=', 'LIKE', '>', '<', '>=', '<=', 'IS NULL', 'IS NOT NULL'] as const, {
                default: 'equal',
              }),
            ),
            // n8n's editor asks no value of a null test.
            value: Type.Optional(annotated(Scalar, hiddenWhen({ condition: ['IS NULL', 'IS NOT NULL'] }))),
          },
          { additionalProperties: false },
        ),
        { maxItems: 100 },
      ),
    ),
  },
  { additionalProperties: false, default: {} },
);

export const SortCollection = Type.Object(
  {
    values: Type.Optional(
      Type.Array(
        Type.Object(
          {
            column: Type.String({ maxLength: 200 }),
            direction: Type.Optional(Type.Enum(['ASC', 'DESC'] as const)),
          },
          { additionalProperties: false },
        ),
        { maxItems: 50 },
      ),
    ),
  },
  { additionalProperties: false, default: {} },
);

/** n8n's "Values to Send" (v2.0–2.1) fixed collection. */
export const ValuesToSend = Type.Object(
  {
    values: Type.Optional(
      Type.Array(
        Type.Object(
          { column: Type.String({ maxLength: 200 }), value: Type.Optional(Scalar) },
          { additionalProperties: false },
        ),
        { maxItems: 500 },
      ),
    ),
  },
  { additionalProperties: false, default: {} },
);

/** n8n's resource mapper value (v2.2+): which columns get which values, and which to match on. */
export const ColumnsMapper = Type.Object(
  {
    mappingMode: Type.Optional(Type.Enum(['defineBelow', 'autoMapInputData'] as const)),
    value: Type.Optional(Type.Union([Type.Record(Type.String(), Type.Unknown()), Type.Null()])),
    matchingColumns: Type.Optional(Type.Array(Type.String({ maxLength: 200 }), { maxItems: 50 })),
    schema: Type.Optional(Type.Array(Type.Unknown(), { maxItems: 2_000 })),
    attemptToConvertTypes: Type.Optional(Type.Boolean()),
    convertFieldsToString: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);

export type Where = { column: string; condition?: string; value?: unknown };
export type Sort = { column: string; direction?: 'ASC' | 'DESC' };

/** `{{ … }}` pieces of a text, as n8n's getResolvables finds them. */
function resolvables(text: string): string[] {
  return text.match(/\{\{[\s\S]*?\}\}/g) ?? [];
}

/** The text split at commas that are not inside a `{{ … }}` (`{{ $fromAI('id', 'The id') }}` is one piece). */
function splitOutsideExpressions(text: string): string[] {
  const pieces: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    if (text.startsWith('{{', i)) {
      depth++;
      i++;
    } else if (depth > 0 && text.startsWith('}}', i)) {
      depth--;
      i++;
    } else if (depth === 0 && text[i] === ',') {
      pieces.push(text.slice(start, i));
      start = i + 1;
    }
  }
  pieces.push(text.slice(start));
  return pieces;
}

/**
 * n8n's Query Parameters option, read as n8n reads it: the raw text split at commas (not those inside an
 * expression) first, then each
 * `{{ … }}` in a piece evaluated for the item (so a comma inside a value does not split it), a piece
 * without one kept as its text; or an expression answering an array, used as the values. Either
 * way the values go to the server as parameters, never into the SQL text.
 */
export async function queryParameters(ctx: NodeExecutionContext<unknown>, index: number): Promise<unknown[]> {
  const raw = (ctx.node.parameters.options as Record<string, unknown> | undefined)?.queryReplacement;
  if (raw === undefined || raw === '' || raw === null) return [];
  if (Array.isArray(raw)) return raw;
  if (typeof raw !== 'string')
    throw new NodeOperationError(
      'Query Parameters must be a string of comma-separated values or an array of values',
    );
  if (raw.startsWith('=')) {
    const whole = raw.slice(1).trim();
    const pieces = resolvables(whole);
    if (pieces.length === 1 && pieces[0] === whole) {
      const value = await ctx.evaluate(`=${whole}`, index);
      if (Array.isArray(value)) return value;
    }
  }
  const values: unknown[] = [];
  for (const piece of splitOutsideExpressions(raw.replace(/^=+/, ''))
    .filter((p) => p)
    .map((p) => p.trim())) {
    const found = resolvables(piece);
    if (found.length === 0) values.push(piece);
    else for (const r of found) values.push(await ctx.evaluate(`=${r}`, index));
  }
  return values;
}

/** n8n's option: empty strings of the item's fields as NULL. */
export function emptyToNull(json: Record<string, unknown>, replace: boolean | undefined) {
  if (!replace) return json;
  return Object.fromEntries(Object.entries(json).map(([k, v]) => [k, v === '' ? null : v]));
}

/** Whether every statement of a query is a SELECT (n8n answers no rows then, else `{success: true}`). */
export function isSelectQuery(query: string): boolean {
  return query
    .replace(/\/\*[\s\S]*?\*\//g, '')
    .replace(/\n/g, '')
    .split(';')
    .filter((s) => s && !s.startsWith('--'))
    .every((s) => s.trim().toLowerCase().startsWith('select'));
}
