import { defineNode, output } from '../../../engine/node-type.js';
import { filterProblems } from './conditions.js';
import { conditionParameters, splitByConditions } from './split.js';

/** n8n's Filter v2.x: keeps the items whose conditions hold (one output; the rest are dropped). */
function filterNode(versions: number[], looseAtTopLevel: boolean) {
  return defineNode({
    type: 'n8n-nodes-base.filter',
    versions,
    schema: conditionParameters(looseAtTopLevel),
    check: (params) => filterProblems(params.conditions, 'parameters.conditions'),
    async execute(ctx) {
      const [kept] = await splitByConditions(ctx);
      return output(kept);
    },
  });
}

export const n8nFilterNodes = [filterNode([2], false), filterNode([2.1, 2.2], true)];
