/**
 * Flowise's web-search tools (issue 36): each service's request as LangChain's tool sends it (path,
 * where the key goes, the query) and its answer read as that tool reads it, against a local server
 * speaking the service's format, through the platform's outbound client and its address rule.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOutboundHttp } from '../../src/core/http/outbound.js';
import type { SearchProvider } from '../../src/modules/flows/definition.js';
import { type SearchConfig, webSearch } from '../../src/modules/flows/flowise/web-search.js';
import { CSE_ID, type FakeSearch, SEARCH_KEY, startFakeSearch } from './fake-search.js';

const KEYS = {
  SERPAPI_API_KEY: SEARCH_KEY,
  SERPER_API_KEY: SEARCH_KEY,
  GOOGLE_API_KEY: SEARCH_KEY,
  GOOGLE_CSE_ID: CSE_ID,
  BRAVE_SEARCH_API_KEY: SEARCH_KEY,
};

describe('flows: Flowise web-search tools', () => {
  let fake: FakeSearch;
  let config: SearchConfig;

  const configFor = (allowHosts: string[]): SearchConfig => ({
    http: createOutboundHttp({ allowHosts, timeoutMs: 5_000 }),
    baseUrls: { serpapi: fake.url, serper: `${fake.url}/`, google: fake.url, brave: fake.url },
    timeoutMs: 5_000,
  });

  beforeAll(async () => {
    fake = await startFakeSearch();
    config = configFor([fake.host]);
  });
  afterAll(() => fake?.close());

  const last = () => fake.requests.at(-1);

  it('SerpAPI: GET /search with api_key and q; the answer box first', async () => {
    const out = await webSearch(config, 'serpapi', 'the answer & more', KEYS);
    expect(out).toBe('SerpAPI says: the answer & more is 42');
    expect(last()).toMatchObject({
      method: 'GET',
      path: '/search',
      query: { api_key: SEARCH_KEY, q: 'the answer & more' },
    });
  });

  it('Serper: POST /search with X-API-KEY and {q}; an organic snippet when no answer box', async () => {
    const out = await webSearch(config, 'serper', 'otters', KEYS);
    expect(out).toBe('Serper snippet for otters');
    const req = last();
    expect(req).toMatchObject({ method: 'POST', path: '/search' });
    expect(req?.headers['x-api-key']).toBe(SEARCH_KEY);
    expect(req?.headers['content-type']).toBe('application/json');
    expect(JSON.parse(req?.body ?? '')).toEqual({ q: 'otters' });
  });

  it('Google Custom Search: key, cx and q; a JSON array of {title, link, snippet}', async () => {
    const out = await webSearch(config, 'google', 'lighthouses', KEYS);
    expect(JSON.parse(out)).toEqual([
      { title: 'Google hit', link: 'https://g.example/1', snippet: 'lighthouses' },
    ]);
    expect(last()).toMatchObject({
      path: '/customsearch/v1',
      query: { key: SEARCH_KEY, cx: CSE_ID, q: 'lighthouses' },
    });
  });

  it('Brave Search: X-Subscription-Token; web results as {title, link, snippet}', async () => {
    const out = await webSearch(config, 'brave', 'volcanoes', KEYS);
    expect(JSON.parse(out)).toEqual([
      { title: 'Brave hit', link: 'https://b.example/1', snippet: 'About volcanoes' },
    ]);
    expect(last()?.headers['x-subscription-token']).toBe(SEARCH_KEY);
    expect(last()?.query).toEqual({ q: 'volcanoes' });
  });

  it('a missing key names the variable to set; a refused key is the service’s error', async () => {
    await expect(webSearch(config, 'google', 'x', { GOOGLE_API_KEY: SEARCH_KEY })).rejects.toThrow(
      /GOOGLE_CSE_ID not set/,
    );
    const before = fake.requests.length;
    await expect(webSearch(config, 'serpapi', 'x', {})).rejects.toThrow(/SERPAPI_API_KEY not set/);
    expect(fake.requests.length, 'nothing sent without a key').toBe(before);
    await expect(webSearch(config, 'serpapi', 'x', { SERPAPI_API_KEY: 'wrong' })).rejects.toThrow(
      /Got error from serpAPI: Invalid API key/,
    );
    await expect(webSearch(config, 'serper', 'x', { SERPER_API_KEY: 'wrong' })).rejects.toThrow(/403/);
  });

  it.each<SearchProvider>(['serpapi', 'serper', 'google', 'brave'])(
    '%s: a private address not allowed for outbound calls is refused before any request',
    async (provider) => {
      const before = fake.requests.length;
      await expect(webSearch(configFor([]), provider, 'x', KEYS)).rejects.toThrow(/private or internal/);
      expect(fake.requests.length).toBe(before);
    },
  );
});
