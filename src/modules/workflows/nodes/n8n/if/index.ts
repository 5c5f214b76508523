import { defineNode, output } from '../../../engine/node-type.js';
import { filterProblems } from '../filter/conditions.js';
import { conditionParameters, splitByConditions } from '../filter/split.js';

/** n8n's IF v2.x: items whose conditions hold leave on output 0 ("true"), the rest on output 1. */
function ifNode(versions: number[], looseAtTopLevel: boolean) {
  return defineNode({
    type: 'n8n-nodes-base.if',
    versions,
    schema: conditionParameters(looseAtTopLevel),
    outputs: () => 2,
    check: (params) => filterProblems(params.conditions, 'parameters.conditions'),
    async execute(ctx) {
      const [yes, no] = await splitByConditions(ctx);
      return output(yes, no);
    },
  });
}

export const n8nIfNodes = [ifNode([2], false), ifNode([2.1, 2.2], true)];
