import { randomInt } from 'node:crypto';
import { Type } from 'typebox';
import { defineNode, NodeOperationError, output } from '../../../engine/node-type.js';
import type { Json } from '../../../engine/types.js';
import { getField, isDeepEqual, lessThan } from '../merge/json.js';

const SortField = Type.Object(
  {
    fieldName: Type.String({ default: '' }),
    order: Type.Union([Type.Literal('ascending'), Type.Literal('descending')], { default: 'ascending' }),
  },
  { additionalProperties: false },
);

const SortParameters = Type.Object(
  {
    type: Type.Union([Type.Literal('simple'), Type.Literal('random'), Type.Literal('code')], {
      default: 'simple',
    }),
    sortFieldsUi: Type.Object(
      { sortField: Type.Optional(Type.Array(SortField)) },
      { additionalProperties: false, default: {} },
    ),
    /** Type `code`: the body of a JavaScript comparator of items `a` and `b`, run in the Code sandbox. */
    code: Type.Optional(Type.String({ maxLength: 100_000 })),
    options: Type.Object(
      { disableDotNotation: Type.Optional(Type.Boolean()) },
      { additionalProperties: false, default: {} },
    ),
  },
  { additionalProperties: false },
);

/** n8n's Sort: by fields (strings case-insensitively), shuffled, or by a JavaScript comparator. */
export const sortNode = defineNode({
  type: 'n8n-nodes-base.sort',
  versions: [1],
  schema: SortParameters,
  check(p) {
    // n8n's own check: a comparator that never returns sorts nothing.
    return p.type === 'code' && !/\breturn\b/.test(p.code ?? '')
      ? [
          {
            path: 'parameters.code',
            message: "Sort code doesn't return. Please add a 'return' statement to your code",
          },
        ]
      : [];
  },
  async execute(ctx) {
    const p = await ctx.params(0);
    const items = [...ctx.items];
    if (p.type === 'random') {
      for (let i = items.length - 1; i > 0; i--) {
        const j = randomInt(i + 1);
        [items[i], items[j]] = [items[j] as (typeof items)[number], items[i] as (typeof items)[number]];
      }
      return output(items);
    }
    if (p.type === 'code') {
      // n8n runs `items.sort((a, b) => { code })` in its sloppy-mode VM; here the same in the Code node's
      // strict sandbox, with `fieldName` declared: n8n's default code assigns it undeclared.
      const run = await ctx.runCode(
        `let fieldName;\nconst __sorted = $input.all();\n__sorted.sort((a, b) => {\n${p.code ?? ''}\n});\nreturn __sorted;`,
        'runOnceForAllItems',
      );
      return { kind: 'output', output: [run.items], logs: run.logs };
    }
    const dot = p.options.disableDotNotation !== true;
    const fields = p.sortFieldsUi.sortField ?? [];
    if (fields.length === 0)
      throw new NodeOperationError('No sorting specified. Please add a field to sort by');
    for (const { fieldName } of fields) {
      if (items.some((i) => getField(i.json, fieldName, dot) !== undefined)) continue;
      throw new NodeOperationError(
        `Couldn't find the field '${fieldName}' in the input data`,
        !dot && fieldName.includes('.')
          ? {
              description:
                "If you're trying to use a nested field, make sure you turn off 'disable dot notation' in the node options",
            }
          : {},
      );
    }
    const key = (v: Json | undefined) => (typeof v === 'string' ? v.toLowerCase() : v);
    items.sort((a, b) => {
      for (const { fieldName, order } of fields) {
        const x = key(getField(a.json, fieldName, dot));
        const y = key(getField(b.json, fieldName, dot));
        if (isDeepEqual(x, y)) continue;
        const dir = order === 'ascending' ? 1 : -1;
        return lessThan(x, y) ? -dir : dir;
      }
      return 0;
    });
    return output(items);
  },
});
