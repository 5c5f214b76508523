import { Type } from 'typebox';
import { shownWhen } from '../../../engine/display-options.js';
import { defineNode, output } from '../../../engine/node-type.js';
import type { Item } from '../../../engine/types.js';
import { cryptoItem, cryptoParameters } from './actions.js';

/** n8n's Crypto v1: v2's actions, with the hmac `secret` and the sign `privateKey` as parameters. */
const CryptoV1Parameters = Type.Object(
  {
    ...cryptoParameters(1),
    secret: Type.String({ default: '', ...shownWhen({ action: ['hmac'] }) }),
    privateKey: Type.String({ default: '', ...shownWhen({ action: ['sign'] }) }),
  },
  { additionalProperties: false },
);

export const cryptoV1Node = defineNode({
  type: 'n8n-nodes-base.crypto',
  versions: [1],
  schema: CryptoV1Parameters,
  async execute(ctx) {
    const out: Item[] = [];
    const action = (await ctx.params(0)).action;
    for (const [i, item] of ctx.items.entries()) {
      try {
        const p = await ctx.params(i);
        out.push(cryptoItem(item, i, { ...p, action }, { hmacSecret: p.secret, privateKey: p.privateKey }));
      } catch (err) {
        if (ctx.node.continueOnFail !== true) throw err;
        out.push({ json: { error: (err as Error).message } });
      }
    }
    return output(out);
  },
});
