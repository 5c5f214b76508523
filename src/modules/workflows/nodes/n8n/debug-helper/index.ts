import { Type } from 'typebox';
import { defineNode, NodeOperationError, output } from '../../../engine/node-type.js';
import type { Item } from '../../../engine/types.js';
import { generate, type RandomDataType, randomSource } from './random-data.js';

/** Most records one run generates, and the longest nanoid: random data is bounded like any output. */
const MAX_RECORDS = 10_000;
const MAX_NANOID = 1_000;

const DebugHelperParameters = Type.Object(
  {
    category: Type.Enum(['doNothing', 'throwError', 'oom', 'randomData'] as const, { default: 'throwError' }),
    throwErrorType: Type.Enum(['NodeApiError', 'NodeOperationError', 'Error'] as const, {
      default: 'NodeApiError',
    }),
    throwErrorMessage: Type.String({ default: 'Node has thrown an error', maxLength: 10_000 }),
    memorySizeValue: Type.Number({ default: 10 }),
    randomDataType: Type.Enum(
      [
        'address',
        'latLong',
        'creditCard',
        'email',
        'ipv4',
        'ipv6',
        'macAddress',
        'nanoid',
        'url',
        'user',
        'uuid',
        'semver',
      ] as const,
      { default: 'user' },
    ),
    nanoidAlphabet: Type.String({
      default: '0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ',
      minLength: 1,
      maxLength: 1_000,
    }),
    nanoidLength: Type.Union([Type.String(), Type.Number()], { default: '16' }),
    randomDataSeed: Type.String({ default: '', maxLength: 1_000 }),
    randomDataCount: Type.Integer({ default: 10, minimum: 0 }),
    randomDataSingleArray: Type.Boolean({ default: false }),
  },
  { additionalProperties: false },
);

/**
 * n8n's Debug Helper: do nothing, throw an error with a given message, "run out of memory", or
 * generate random data sets (seeded: the same seed gives the same data). Out of memory is never
 * simulated here — every node's memory is bounded — it fails the node with a clear error instead.
 */
export const debugHelperNode = defineNode({
  type: 'n8n-nodes-base.debugHelper',
  versions: [1],
  schema: DebugHelperParameters,
  async execute(ctx) {
    const p = await ctx.params(0);
    if (p.category === 'doNothing') return output([]);
    if (ctx.items.length === 0) return output([]);
    if (p.category === 'throwError') throw new NodeOperationError(p.throwErrorMessage);
    if (p.category === 'oom')
      throw new NodeOperationError('Out of memory is not simulated on this platform', {
        description: `The node asked for about ${p.memorySizeValue} MB; every node's memory is bounded here, so the node fails instead`,
      });
    if (p.randomDataCount > MAX_RECORDS)
      throw new NodeOperationError(`At most ${MAX_RECORDS} random records can be generated at once`, {
        description: `Asked for ${p.randomDataCount}`,
      });
    const length = Number(p.nanoidLength);
    if (p.randomDataType === 'nanoid' && !(Number.isInteger(length) && length >= 1 && length <= MAX_NANOID))
      throw new NodeOperationError(`The NanoId length must be a whole number from 1 to ${MAX_NANOID}`);
    const random = randomSource(p.randomDataSeed);
    const out: Item[] = [];
    for (let i = 0; i < ctx.items.length; i++) {
      const records = Array.from({ length: p.randomDataCount }, () =>
        generate(p.randomDataType as RandomDataType, random, { alphabet: p.nanoidAlphabet, length }),
      );
      if (p.randomDataSingleArray) out.push({ json: { generatedItems: records } });
      else for (const json of records) out.push({ json });
      if (out.length > MAX_RECORDS)
        throw new NodeOperationError(`At most ${MAX_RECORDS} random records can be generated at once`);
    }
    return output(out);
  },
});
