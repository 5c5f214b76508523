import { Type } from 'typebox';
import { defineNode, NodeOperationError } from '../engine/node-type.js';

export const StopAndErrorParameters = Type.Object({
  errorMessage: Type.String({ minLength: 1 }),
  description: Type.Optional(Type.String()),
});

/** Fails the execution with the given message. */
export const stopAndErrorNode = defineNode({
  type: 'stopAndError',
  schema: StopAndErrorParameters,
  async execute(ctx) {
    const p = await ctx.params(0);
    throw new NodeOperationError(
      p.errorMessage,
      p.description !== undefined ? { description: p.description } : {},
    );
  },
});
