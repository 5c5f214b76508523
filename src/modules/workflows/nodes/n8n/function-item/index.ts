import { Type } from 'typebox';
import { defineNode, type NodeExecutionContext } from '../../../engine/node-type.js';
import { functionItemSource, runLegacyCode } from '../function/legacy-code.js';

const DEFAULT_CODE = `// Code here will run once per input item.
// More info and help: https://docs.n8n.io/nodes/n8n-nodes-base.functionItem
// Tip: You can use luxon for dates and $jmespath for querying JSON structures

// Add a new field called 'myNewField' to the JSON of the item
item.myNewField = 1;

// You can write logs to the browser console
console.log('Done!');

return item;`;

/**
 * n8n's legacy Function Item node (v1): JavaScript run once per item on the Code node's sandbox, with
 * `item` as the item's JSON (returned as the new JSON), `getBinaryData`/`setBinaryData` and `$item(i)`.
 */
export const functionItemNode = defineNode({
  type: 'n8n-nodes-base.functionItem',
  versions: [1],
  schema: Type.Object(
    { functionCode: Type.String({ default: DEFAULT_CODE, maxLength: 200_000 }) },
    { additionalProperties: false },
  ),
  async execute(ctx) {
    const p = await ctx.params(0);
    return runLegacyCode(
      ctx as NodeExecutionContext<unknown>,
      functionItemSource(p.functionCode),
      'runOnceForEachItem',
    );
  },
});
