import { Type } from 'typebox';
import { defineNode, type NodeExecutionContext } from '../../../engine/node-type.js';
import { functionSource, runLegacyCode } from './legacy-code.js';

const DEFAULT_CODE = `// Code here will run only once, no matter how many input items there are.
// More info and help: https://docs.n8n.io/nodes/n8n-nodes-base.function
// Tip: You can use luxon for dates and $jmespath for querying JSON structures

// Loop over inputs and add a new field called 'myNewField' to the JSON of each one
for (item of items) {
  item.json.myNewField = 1;
}

// You can write logs to the browser console
console.log('Done!');

return items;`;

/**
 * n8n's legacy Function node (v1): JavaScript run once over all items on the Code node's sandbox,
 * bounded like Code; it gets `items`, `$item(i)`, the `$` variables and `getNodeParameter`.
 */
export const functionNode = defineNode({
  type: 'n8n-nodes-base.function',
  versions: [1],
  schema: Type.Object(
    { functionCode: Type.String({ default: DEFAULT_CODE, maxLength: 200_000 }) },
    { additionalProperties: false },
  ),
  async execute(ctx) {
    const p = await ctx.params(0);
    return runLegacyCode(
      ctx as NodeExecutionContext<unknown>,
      functionSource(p.functionCode),
      'runOnceForAllItems',
    );
  },
});
