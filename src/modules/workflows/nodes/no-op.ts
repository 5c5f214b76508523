import { Type } from 'typebox';
import { defineNode, output } from '../engine/node-type.js';

export const NoOpParameters = Type.Object({});

/** Passes its items on unchanged. */
export const noOpNode = defineNode({
  type: 'noOp',
  schema: NoOpParameters,
  async execute(ctx) {
    return output(ctx.items);
  },
});
