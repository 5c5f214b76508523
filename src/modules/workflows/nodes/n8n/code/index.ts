import { Type } from 'typebox';
import { shownWhen } from '../../../engine/display-options.js';
import { CodeError } from '../../../engine/expressions.js';
import {
  defineNode,
  type NodeExecutionContext,
  NodeOperationError,
  output,
} from '../../../engine/node-type.js';

/**
 * n8n's Code node (v1, v2): JavaScript runs in the QuickJS sandbox with a CPU-time and memory bound;
 * Python (`language: python`, n8n's Pyodide flavour, or `pythonNative`, n8n 2's task runner flavour) runs
 * in CPython on WebAssembly in a confined child process (engine/python/), bounded by the same timeout and a memory
 * cap. Either runs once over all items or once per item, and what it writes to `console`/`print()` is kept
 * in the node's run data.
 */
const CodeParameters = Type.Object(
  {
    mode: Type.Enum(['runOnceForAllItems', 'runOnceForEachItem'] as const, {
      default: 'runOnceForAllItems',
    }),
    language: Type.Enum(['javaScript', 'python', 'pythonNative'] as const, {
      default: 'javaScript',
      description: "python: n8n's Pyodide names (_input, _json…); pythonNative: n8n 2's (_items, _item)",
    }),
    jsCode: Type.String({
      default:
        "// Loop over input items and add a new field called 'myNewField' to the JSON of each one\nfor (const item of $input.all()) {\n  item.json.myNewField = 1;\n}\n\nreturn $input.all();",
      maxLength: 200_000,
      ...shownWhen({ language: ['javaScript'] }),
    }),
    pythonCode: Type.String({
      default:
        "# Loop over input items and add a new field called 'myNewField' to the JSON of each one\nfor item in _input.all():\n  item.json.myNewField = 1\nreturn _input.all()",
      maxLength: 200_000,
    }),
    notice: Type.Optional(Type.String()),
  },
  { additionalProperties: false },
);

export const codeNode = defineNode({
  type: 'n8n-nodes-base.code',
  versions: [1, 2],
  schema: CodeParameters,
  check: (params, limits) =>
    params.language !== 'javaScript' && !limits.host?.python?.enabled
      ? [{ path: 'parameters.language', message: PYTHON_OFF }]
      : [],
  async execute(ctx) {
    const p = await ctx.params(0);
    try {
      const run =
        p.language === 'javaScript'
          ? await ctx.runCode(p.jsCode, p.mode)
          : await python(ctx)(p.pythonCode, p.mode, p.language === 'python' ? 'pyodide' : 'native');
      return { ...output(run.items), logs: run.logs };
    } catch (err) {
      if (!(err instanceof CodeError)) throw err;
      const where =
        p.mode === 'runOnceForEachItem' && err.itemIndex !== undefined ? ` [item ${err.itemIndex}]` : '';
      throw new NodeOperationError(`${err.message}${where}`, { logs: err.logs });
    }
  },
});

/** The problem (at save) or error (at run) of a Python Code node while the instance has Python off. */
export const PYTHON_OFF =
  "Python in the Code node is off on this instance: set WORKFLOW_PYTHON_ENABLED=true to allow it (see the README's security notes), or use JavaScript";

function python(ctx: NodeExecutionContext<unknown>) {
  if (!ctx.deps.host?.python?.enabled) throw new NodeOperationError(PYTHON_OFF);
  const run = ctx.runPython;
  if (!run) throw new NodeOperationError('Python is not available here');
  return run;
}
