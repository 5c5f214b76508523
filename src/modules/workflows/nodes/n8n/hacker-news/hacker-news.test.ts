import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { FakeHnAlgolia } from '../../../../../../test/workflows/support/fake-hn-algolia.js';
import { createOutboundHttp } from '../../../../../core/http/outbound.js';
import { ctx, jsonOf, testDeps, workflow } from '../../../engine/testing.js';
import { WorkflowEngine } from '../../../engine/workflow-engine.js';
import { defaultNodeRegistry } from '../../index.js';
import { HN_API } from './index.js';

const hn = new FakeHnAlgolia();
let engine: WorkflowEngine;
beforeAll(async () => {
  await hn.start();
  const guarded = createOutboundHttp({ allowHosts: ['127.0.0.1'], timeoutMs: 5_000 });
  engine = new WorkflowEngine(
    // The public API, answered by the local one.
    testDeps({ http: (req) => guarded({ ...req, url: req.url.replace(HN_API, `${hn.base}/api/v1`) }) }),
    defaultNodeRegistry,
  );
});
afterAll(() => hn.stop());
beforeEach(() => hn.reset());

async function run(parameters: Record<string, unknown>) {
  const d = workflow(
    [
      { name: 'Start', type: 'n8n-nodes-base.manualTrigger', typeVersion: 1 },
      { name: 'HN', type: 'n8n-nodes-base.hackerNews', typeVersion: 1, parameters },
    ],
    [['Start', 'HN']],
  );
  const problems = engine.validate(d);
  if (problems.length > 0) return { problems, json: [], error: null };
  const out = await engine.run(d, { nodeName: 'Start', items: [{ json: {} }] }, ctx);
  return { problems, json: jsonOf(out.state, 'HN'), error: out.state.error };
}

describe('Hacker News node (n8n-nodes-base.hackerNews) against a local Algolia HN API', () => {
  it('searches all items with a keyword, tags and a limit, one item per hit', async () => {
    const { json, error } = await run({
      resource: 'all',
      limit: 3,
      additionalFields: { keyword: 'rust', tags: ['story', 'front_page'] },
    });
    expect(error).toBeNull();
    expect(json.map((h) => h.title)).toEqual(['Story 1', 'Story 2', 'Story 3']);
    expect(hn.requests).toEqual(['/api/v1/search?query=rust&tags=story%2Cfront_page&hitsPerPage=3']);
  });

  it('reads every page with "Return All", bounded by Algolia’s 1,000 hits', async () => {
    const some = await run({ resource: 'all', returnAll: true });
    expect(some.json).toHaveLength(120);
    expect(hn.requests).toEqual([
      '/api/v1/search?tags=&hitsPerPage=100&page=0',
      '/api/v1/search?tags=&hitsPerPage=100&page=1',
    ]);
    hn.reset();
    hn.total = 1_000_000;
    const many = await run({ resource: 'all', returnAll: true });
    expect(many.json).toHaveLength(1_000);
    expect(hn.requests).toHaveLength(10);
  });

  it('gets an article (comments only when asked) and a user', async () => {
    const article = await run({ articleId: '8863' });
    expect(article.json).toEqual([
      {
        id: 8863,
        created_at: '2024-01-01T10:00:00.000Z',
        type: 'story',
        author: 'pg',
        title: 'An article',
        url: 'https://example.com/a',
        points: 42,
        parent_id: null,
      },
    ]);
    const withComments = await run({ articleId: 8863, additionalFields: { includeComments: true } });
    expect(withComments.json[0]?.children).toHaveLength(1);
    const user = await run({ resource: 'user', username: 'pg' });
    expect(user.json).toEqual([{ username: 'pg', about: 'Bug fixer.', karma: 157_236 }]);
  });

  it('refuses bad input clearly: a wrong operation at save, a missing user and a bad id at run', async () => {
    const wrong = await run({ resource: 'all', operation: 'get' });
    expect(wrong.problems).toEqual([
      {
        path: 'nodes[1].parameters.operation',
        message: "the resource 'all' has only the operation 'getAll'",
      },
    ]);
    const missing = await run({ resource: 'user', username: 'nobody' });
    expect(missing.error?.message).toBe('The resource you are requesting could not be found');
    const bad = await run({ articleId: '1/../../users/pg' });
    expect(bad.error?.message).toBe("The article ID '1/../../users/pg' is not a number");
    expect(hn.requests).toEqual(['/api/v1/users/nobody']);
  });
});
