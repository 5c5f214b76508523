import { Type } from 'typebox';
import { shownWhen } from '../../../engine/display-options.js';
import { CodeError } from '../../../engine/expressions.js';
import { defineNode, NodeOperationError, output } from '../../../engine/node-type.js';

/**
 * n8n's Code node (v1, v2), JavaScript only: the code runs in the QuickJS sandbox with a CPU-time and
 * memory bound, once over all items or once per item, and what it writes to `console` is kept in the
 * node's run data. Python is refused at save time (no Python runtime here).
 */
const CodeParameters = Type.Object(
  {
    mode: Type.Enum(['runOnceForAllItems', 'runOnceForEachItem'] as const, {
      default: 'runOnceForAllItems',
    }),
    language: Type.Enum(['javaScript'] as const, {
      default: 'javaScript',
      description: 'Only JavaScript: python and pythonNative are refused',
    }),
    jsCode: Type.String({
      default:
        "// Loop over input items and add a new field called 'myNewField' to the JSON of each one\nfor (const item of $input.all()) {\n  item.json.myNewField = 1;\n}\n\nreturn $input.all();",
      maxLength: 200_000,
      ...shownWhen({ language: ['javaScript'] }),
    }),
    notice: Type.Optional(Type.String()),
  },
  { additionalProperties: false },
);

export const codeNode = defineNode({
  type: 'n8n-nodes-base.code',
  versions: [1, 2],
  schema: CodeParameters,
  async execute(ctx) {
    const p = await ctx.params(0);
    try {
      const run = await ctx.runCode(p.jsCode, p.mode);
      return { ...output(run.items), logs: run.logs };
    } catch (err) {
      if (!(err instanceof CodeError)) throw err;
      const where =
        p.mode === 'runOnceForEachItem' && err.itemIndex !== undefined ? ` [item ${err.itemIndex}]` : '';
      throw new NodeOperationError(`${err.message}${where}`, { logs: err.logs });
    }
  },
});
