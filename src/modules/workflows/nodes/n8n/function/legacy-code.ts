import { CodeError } from '../../../engine/expressions.js';
import { type NodeExecutionContext, NodeOperationError, type NodeResult } from '../../../engine/node-type.js';

/**
 * What n8n's Function and Function Item sandboxes give besides the Code node's names: `$item(i)` (that
 * input item's `$json`/`$binary` with the workflow-wide variables) and `getNodeParameter`. The helpers
 * n8n exposed from its own internals (`helpers`, `getWorkflowStaticData`) throw a clear error.
 */
const PRELUDE = `
const $item = (index) => {
  const it = $input.all()[index] ?? { json: {} };
  return { $json: it.json, $binary: it.binary ?? {}, $node, $parameter, $workflow, $env, $vars, $now, $today, $runIndex, $items };
};
const getNodeParameter = (name, _itemIndex, fallback) => ($parameter[name] ?? fallback);
const getWorkflowStaticData = $getWorkflowStaticData;
const helpers = new Proxy({}, { get: (_t, name) => () => { throw new Error('helpers.' + String(name) + ' is not available in this sandbox'); } });
`;

/**
 * Function: the code runs once over `items` (a copy) and returns the new items. As in n8n, whose sandbox
 * takes the first item's data proxy, `$json` and `$binary` are the first item's.
 */
export function functionSource(code: string): string {
  return `${PRELUDE}
const $json = ($input.all()[0] ?? { json: {} }).json;
const $binary = ($input.all()[0] ?? {}).binary ?? {};
const __result = await (async () => {
${code}
})();
if (__result === undefined) throw new Error('No data got returned. Always return an Array of items!');
return __result;`;
}

/**
 * Function Item: the code runs once per item with `item` as that item's JSON, and returns the new JSON;
 * `getBinaryData()` / `setBinaryData(b)` read and replace the item's binary.
 */
export function functionItemSource(code: string): string {
  return `${PRELUDE}
const __source = item;
let __binary = __source.binary;
const getBinaryData = () => __binary;
const setBinaryData = (data) => { __binary = data; };
const __json = await (async (item) => {
${code}
})(__source.json);
if (__json === undefined) throw new Error('No data got returned. Always an object has to be returned!');
return __binary ? { json: __json, binary: __binary } : { json: __json };`;
}

/** Runs wrapped legacy code on the Code node's sandbox (same CPU-time and memory bounds). */
export async function runLegacyCode(
  ctx: NodeExecutionContext<unknown>,
  source: string,
  mode: 'runOnceForAllItems' | 'runOnceForEachItem',
): Promise<NodeResult> {
  try {
    const run = await ctx.runCode(source, mode);
    return { kind: 'output', output: [run.items], logs: run.logs };
  } catch (err) {
    if (!(err instanceof CodeError)) throw err;
    const where =
      mode === 'runOnceForEachItem' && err.itemIndex !== undefined ? ` [item ${err.itemIndex}]` : '';
    throw new NodeOperationError(`${err.message}${where}`, { logs: err.logs });
  }
}
