import { Type } from 'typebox';
import { defineNode, output } from '../../../engine/node-type.js';
import type { Item, ValidationProblem } from '../../../engine/types.js';
import { readFeed } from './feed.js';

const RssFeedReadParameters = Type.Object(
  {
    url: Type.String({ default: '' }),
    options: Type.Object(
      {
        customFields: Type.Optional(Type.String()),
        ignoreSSL: Type.Optional(Type.Boolean()),
      },
      { additionalProperties: false, default: {} },
    ),
  },
  { additionalProperties: false },
);

function refusals(p: { options: { ignoreSSL?: boolean } }): ValidationProblem[] {
  return p.options.ignoreSSL === true
    ? [
        {
          path: 'parameters.options.ignoreSSL',
          message:
            'ignoring TLS certificate errors is not allowed: outbound calls always verify certificates',
        },
      ]
    : [];
}

const fieldsOf = (custom: string | undefined) =>
  (custom ?? '')
    .split(',')
    .map((f) => f.trim())
    .filter(Boolean);

/**
 * n8n's RSS Read (v1–1.2): the feed's items, one per item. v1 and v1.1 read the URL once (from the
 * first item); v1.2 reads a feed per input item, as n8n does.
 */
export const rssFeedReadNode = defineNode({
  type: 'n8n-nodes-base.rssFeedRead',
  versions: [1, 1.1, 1.2],
  schema: RssFeedReadParameters,
  check: refusals,
  async execute(ctx) {
    const perItem = (ctx.node.typeVersion ?? 1) >= 1.2;
    const count = perItem ? Math.max(ctx.items.length, 1) : 1;
    const out: Item[] = [];
    for (let i = 0; i < count; i++) {
      const p = await ctx.params(i);
      for (const json of await readFeed(ctx.deps, p.url, fieldsOf(p.options.customFields)))
        out.push({ json, pairedItem: { item: i } });
    }
    return output(out);
  },
});
