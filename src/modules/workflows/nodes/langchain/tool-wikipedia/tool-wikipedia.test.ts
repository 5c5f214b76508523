import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { FakeMediaWiki } from '../../../../../../test/workflows/support/fake-mediawiki.js';
import { createOutboundHttp } from '../../../../../core/http/outbound.js';
import { testDeps } from '../../../engine/testing.js';
import type { EngineDeps } from '../../../engine/types.js';
import type { AiTool } from '../ai-parts.js';
import { toolWikipediaNode, WIKIPEDIA_API, wikipediaAnswer } from './index.js';

const wiki = new FakeMediaWiki();
let deps: EngineDeps;
beforeAll(async () => {
  await wiki.start();
  const guarded = createOutboundHttp({ allowHosts: ['127.0.0.1'], timeoutMs: 5_000 });
  // Wikipedia's public API, answered by the local MediaWiki.
  deps = testDeps({
    http: (req) => guarded({ ...req, url: req.url.replace(WIKIPEDIA_API, `${wiki.base}/w/api.php`) }),
  });
});
afterAll(() => wiki.stop());
beforeEach(() => wiki.reset());

describe("Wikipedia tool (LangChain's WikipediaQueryRun) against a local MediaWiki", () => {
  it('answers the top three pages as `Page: …\\nSummary: …`, as LangChain does', async () => {
    for (const t of ['Berlin', 'Berlin Wall', 'Berlin Zoo', 'Berlin Marathon'])
      wiki.pages.set(t, { extract: `${t} is a thing in Germany.` });
    const text = await wikipediaAnswer(deps, 'Berlin');
    expect(text).toBe(
      [
        'Page: Berlin\nSummary: Berlin is a thing in Germany.',
        'Page: Berlin Wall\nSummary: Berlin Wall is a thing in Germany.',
        'Page: Berlin Zoo\nSummary: Berlin Zoo is a thing in Germany.',
      ].join('\n\n'),
    );
    const [search, ...pages] = wiki.queries;
    expect(Object.fromEntries(search ?? [])).toEqual({
      action: 'query',
      list: 'search',
      srsearch: 'Berlin',
      format: 'json',
    });
    expect(pages).toHaveLength(3);
    expect(Object.fromEntries(pages[0] ?? [])).toEqual({
      action: 'query',
      prop: 'extracts',
      explaintext: 'true',
      redirects: '1',
      titles: 'Berlin',
      format: 'json',
    });
  });

  it('cuts the answer at 4,000 characters and says when nothing was found', async () => {
    wiki.pages.set('Long', { extract: 'x'.repeat(10_000) });
    expect(await wikipediaAnswer(deps, 'Long')).toHaveLength(4_000);
    expect(await wikipediaAnswer(deps, 'Nothing here')).toBe('No good Wikipedia Search Result was found');
  });

  it('fails clearly on an upstream error, and the tool refuses an input that is not a string', async () => {
    wiki.failWith = 503;
    await expect(wikipediaAnswer(deps, 'Berlin')).rejects.toThrow('Network response was not ok');
    wiki.failWith = null;
    wiki.queries.length = 0;
    const tool = (await toolWikipediaNode.supply?.({ deps } as never, 0)) as AiTool;
    expect(tool.name).toBe('wikipedia-api');
    await expect(tool.run({ input: 42 })).rejects.toThrow("the argument 'input' must be a non-empty string");
    expect(wiki.queries).toHaveLength(0);
  });

  it('refuses Wikipedia on a private address unless the instance allows it', async () => {
    const strict = testDeps({ http: createOutboundHttp({ allowHosts: [], timeoutMs: 5_000 }) });
    const local = testDeps({
      http: (req) => strict.http({ ...req, url: req.url.replace(WIKIPEDIA_API, `${wiki.base}/w/api.php`) }),
    });
    await expect(wikipediaAnswer(local, 'Berlin')).rejects.toThrow();
    expect(wiki.queries).toHaveLength(0);
  });
});
