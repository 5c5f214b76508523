import { type Static, Type } from 'typebox';
import { shownWhen } from '../../../engine/display-options.js';
import { isExpression } from '../../../engine/expressions.js';
import { defineNode, NodeOperationError, output } from '../../../engine/node-type.js';
import type { EngineDeps, Item, Json, ValidationProblem } from '../../../engine/types.js';
import { isSuccess, statusError } from '../http-request/response.js';

/** The Algolia Hacker News API n8n's node calls (n8n writes it with http://; the same API answers on https). */
export const HN_API = 'https://hn.algolia.com/api/v1';
const TIMEOUT_MS = 20_000;
/** Pages one "Return All" reads: Algolia serves at most 1,000 hits of a search (10 pages of 100). */
const MAX_PAGES = 10;
const PAGE_SIZE = 100;

const TAGS = ['ask_hn', 'comment', 'front_page', 'poll', 'show_hn', 'story'] as const;

const HackerNewsParameters = Type.Object(
  {
    resource: Type.Enum(['all', 'article', 'user'] as const, { default: 'article' }),
    // Its default is the resource's only operation (getAll for `all`, get for the others), as n8n's.
    operation: Type.Optional(Type.Enum(['get', 'getAll'] as const)),
    articleId: Type.Optional(
      Type.Union([Type.String({ maxLength: 50 }), Type.Number()], shownWhen({ resource: ['article'] })),
    ),
    username: Type.Optional(Type.String({ maxLength: 200, ...shownWhen({ resource: ['user'] }) })),
    returnAll: Type.Boolean({ default: false, ...shownWhen({ resource: ['all'] }) }),
    limit: Type.Number({ default: 100, minimum: 1, ...shownWhen({ resource: ['all'], returnAll: [false] }) }),
    additionalFields: Type.Object(
      {
        includeComments: Type.Optional(Type.Boolean(shownWhen({ '/resource': ['article'] }))),
        keyword: Type.Optional(Type.String({ maxLength: 1_000, ...shownWhen({ '/resource': ['all'] }) })),
        tags: Type.Optional(
          Type.Array(Type.Enum(TAGS), { maxItems: TAGS.length, ...shownWhen({ '/resource': ['all'] }) }),
        ),
      },
      { additionalProperties: false, default: {} },
    ),
  },
  { additionalProperties: false },
);
type Params = Static<typeof HackerNewsParameters>;

const operationOf = (p: Params) => p.operation ?? (p.resource === 'all' ? 'getAll' : 'get');

function problemsOf(p: Params): ValidationProblem[] {
  if (isExpression(p.resource) || (p.operation !== undefined && isExpression(p.operation))) return [];
  const wanted = p.resource === 'all' ? 'getAll' : 'get';
  if (operationOf(p) !== wanted)
    return [
      {
        path: 'parameters.operation',
        message: `the resource '${p.resource}' has only the operation '${wanted}'`,
      },
    ];
  return [];
}

async function hnGet(deps: EngineDeps, path: string, query?: URLSearchParams): Promise<unknown> {
  const res = await deps.http({
    method: 'GET',
    url: `${HN_API}/${path}${query ? `?${query}` : ''}`,
    headers: { accept: 'application/json' },
    timeoutMs: TIMEOUT_MS,
  });
  if (!isSuccess(res.status)) throw statusError(res);
  try {
    return JSON.parse(res.body);
  } catch {
    throw new NodeOperationError('The Hacker News API answered with something that is not JSON', {
      description: res.body.slice(0, 500),
    });
  }
}

const objectOf = (v: unknown, what: string): Record<string, Json> => {
  if (v === null || typeof v !== 'object' || Array.isArray(v))
    throw new NodeOperationError(`The Hacker News API answered ${what} without a JSON object`);
  return v as Record<string, Json>;
};

/** n8n's `search` query: the keyword (left out when unset), the tags comma-joined, the page size. */
async function search(deps: EngineDeps, p: Params): Promise<Array<Record<string, Json>>> {
  const base = new URLSearchParams();
  if (p.additionalFields.keyword !== undefined) base.set('query', p.additionalFields.keyword);
  base.set('tags', (p.additionalFields.tags ?? []).join(','));
  if (!p.returnAll) {
    base.set('hitsPerPage', String(p.limit));
    return hitsOf(objectOf(await hnGet(deps, 'search', base), 'a search'));
  }
  // n8n asks again until it has nbHits; this reads page after page, bounded by Algolia's own cap.
  base.set('hitsPerPage', String(PAGE_SIZE));
  const all: Array<Record<string, Json>> = [];
  for (let page = 0; page < MAX_PAGES; page++) {
    const query = new URLSearchParams(base);
    query.set('page', String(page));
    const data = objectOf(await hnGet(deps, 'search', query), 'a search');
    const hits = hitsOf(data);
    all.push(...hits);
    const pages = typeof data.nbPages === 'number' ? data.nbPages : 0;
    if (hits.length === 0 || page + 1 >= pages) break;
  }
  return all;
}

function hitsOf(data: Record<string, Json>): Array<Record<string, Json>> {
  if (!Array.isArray(data.hits)) throw new NodeOperationError('The Hacker News API answered without hits');
  return data.hits.filter(
    (h): h is Record<string, Json> => h !== null && typeof h === 'object' && !Array.isArray(h),
  );
}

/**
 * n8n's Hacker News node (v1) on the Algolia Hacker News API: search all items (keyword, tags, a limit or
 * every page), an article (its comments only when asked), a user.
 */
export const hackerNewsNode = defineNode({
  type: 'n8n-nodes-base.hackerNews',
  versions: [1],
  schema: HackerNewsParameters,
  check: problemsOf,
  async execute(ctx) {
    const out: Item[] = [];
    for (let i = 0; i < ctx.items.length; i++) {
      const p = await ctx.params(i);
      let results: Array<Record<string, Json>>;
      if (p.resource === 'all') results = await search(ctx.deps, p);
      else if (p.resource === 'article') {
        const id = String(p.articleId ?? '').trim();
        if (!/^\d+$/.test(id)) throw new NodeOperationError(`The article ID '${id}' is not a number`);
        const article = objectOf(await hnGet(ctx.deps, `items/${id}`), 'an article');
        if (!p.additionalFields.includeComments) delete article.children;
        results = [article];
      } else {
        const name = String(p.username ?? '').trim();
        if (name === '') throw new NodeOperationError('The parameter "Username" is empty');
        results = [objectOf(await hnGet(ctx.deps, `users/${encodeURIComponent(name)}`), 'a user')];
      }
      for (const json of results) out.push({ json, pairedItem: { item: i } });
    }
    return output(out);
  },
});
