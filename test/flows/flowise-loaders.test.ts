/**
 * Flowise's Cheerio Web Scraper and API Loader (issue 36): the vector upsert runs a canvas's loaders
 * against a local web site and API (real HTTP), through the platform's outbound client, into the store's
 * topic, and the next prediction answers from what they loaded. Flowise's "WebPage QnA" marketplace
 * template is imported unmodified (test/fixtures/flowise); its URL is changed by the upsert's
 * `overrideConfig`, as a Flowise client does.
 */
import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { CpuPool } from '../../src/core/cpu/index.js';
import { createOutboundHttp } from '../../src/core/http/outbound.js';
import type { FlowiseLoader } from '../../src/modules/flows/definition.js';
import {
  loaderBudget,
  pageLinks,
  runLoaders,
  sitemapLinks,
  type WebLoaderConfig,
  withOverrides,
} from '../../src/modules/flows/flowise/web-loaders.js';
import { testDialects } from '../helpers/services.js';
import { until } from '../helpers/until.js';
import { type LlmTestbed, startLlmTestbed } from '../llm/support.js';
import { call, expectFlowError, expectNamesField, type Flow, lastCall, predict } from './support.js';

const template = (name: string): string =>
  readFileSync(new URL(`../fixtures/flowise/${name}.json`, import.meta.url), 'utf8');

interface Seen {
  method: string;
  path: string;
  headers: IncomingMessage['headers'];
  body: string;
}

/** A YouTube transcript as SearchApi.io's `youtube_transcripts` engine answers it. */
const TRANSCRIPT = {
  search_metadata: {
    id: 'search_0e3GPea1Tyg',
    status: 'Success',
    created_at: '2026-11-30T10:00:00Z',
    request_url: 'https://www.youtube.com/watch?v=0e3GPea1Tyg',
  },
  search_parameters: { engine: 'youtube_transcripts', video_id: '0e3GPea1Tyg', lang: 'en' },
  transcripts: [
    { text: 'welcome back to the harbour podcast', start: 0.04, duration: 3.2 },
    { text: 'today the keeper explains why the lighthouse lamp burns whale oil', start: 3.24, duration: 4.1 },
    { text: 'and why the fog horn sounds every ninety seconds', start: 7.34, duration: 3.6 },
  ],
  available_languages: [{ name: 'English', lang: 'en' }],
};
const SEARCHAPI_KEY = 'searchapi-key-1';

/** A small web site and JSON API: pages linking each other, a sitemap, an API that checks its key. */
async function startSite(): Promise<{
  url: string;
  host: string;
  seen: Seen[];
  /** Requests for `/hang` that arrived, and those whose connection the client closed since. */
  hang: { started: number; closed: number };
  close: () => Promise<void>;
}> {
  const seen: Seen[] = [];
  const hang = { started: 0, closed: 0 };
  const page = (title: string, main: string, links: string[]) =>
    `<!doctype html><html><head><title>${title}</title></head><body><nav>Navigation menu text</nav>` +
    `<main><h1>${title}</h1><p>${main}</p></main>${links.map((l) => `<a href="${l}">${l}</a>`).join(' ')}</body></html>`;
  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => {
      body += c.toString('utf8');
    });
    req.on('end', () => {
      const path = req.url ?? '/';
      seen.push({ method: req.method ?? '', path, headers: req.headers, body });
      // Never answers (whatever its query): the loader's time limit, or its caller's going, ends it.
      if (path.split('?')[0] === '/hang') {
        hang.started++;
        req.socket.once('close', () => hang.closed++);
        return;
      }
      // SearchApi.io: the key as a Bearer token or `api_key`; its errors as `{error}` with the status.
      if (path.startsWith('/api/v1/search?')) {
        const params = new URL(path, 'http://x').searchParams;
        const key = req.headers.authorization?.replace(/^Bearer /, '') ?? params.get('api_key');
        const answer = (status: number, v: unknown) => {
          res.writeHead(status, { 'content-type': 'application/json' });
          res.end(JSON.stringify(v));
        };
        if (key !== SEARCHAPI_KEY)
          return answer(401, {
            error: 'Invalid API key. Your API key should be here: https://www.searchapi.io/api_key',
          });
        if (params.get('engine') === 'youtube_transcripts' && params.get('video_id') === '0e3GPea1Tyg')
          return answer(200, TRANSCRIPT);
        if (params.get('engine') === 'youtube_transcripts')
          return answer(400, {
            error: "Transcripts are disabled for this video or the video doesn't exist.",
          });
        return answer(200, {
          search_parameters: { engine: params.get('engine'), q: params.get('q') },
          answer_box: { answer: 'The lighthouse was built in 1907.' },
          organic_results: [
            { position: 1, title: 'Harbour Library', link: 'https://harbour.example/', snippet: 'Kayaks' },
          ],
        });
      }
      const json = (v: unknown) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify(v));
      };
      const text = (s: string) => {
        res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' });
        res.end(s);
      };
      const html = (s: string) => {
        res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
        res.end(s);
      };
      switch (path) {
        case '/':
          return html(
            page('Harbour Library', 'The harbour library lends kayaks every Tuesday morning.', [
              '/about',
              '/hours#today',
              'https://elsewhere.example/out',
              'mailto:x@example.com',
            ]),
          );
        case '/about':
          return html(
            page('About', 'The library was founded by lighthouse keepers in 1907.', ['/', '/deep']),
          );
        case '/hours':
          return html(page('Hours', 'Open from nine to five, closed on Sundays.', ['/']));
        case '/deep':
          return html(page('Deep', 'A page only a longer crawl reaches.', []));
        case '/sitemap.xml':
          res.writeHead(200, { 'content-type': 'application/xml' });
          return res.end(
            `<?xml version="1.0"?><urlset><url><loc>${base}/hours</loc></url><url><loc>${base}/deep</loc></url>` +
              '<url><loc>https://elsewhere.example/x</loc></url></urlset>',
          );
        case '/big':
          return html(`<html><body>${'x'.repeat(300_000)}</body></html>`);
        // A GitHub contents API (what LangChain's GithubRepoLoader reads) and its raw files.
        case '/gh/repos/FlowiseAI/FlowiseDocs/contents/?ref=main':
        case '/gh/repos/acme/tools/contents/?ref=main':
          return json([
            { type: 'file', path: 'README.md', size: 40, download_url: `${base}/raw/README.md` },
            { type: 'dir', path: 'docs', size: 0, download_url: null },
            { type: 'file', path: 'logo.png', size: 9, download_url: `${base}/raw/logo.png` },
            { type: 'file', path: 'submodule', size: 0, download_url: null },
          ]);
        case '/gh/repos/FlowiseAI/FlowiseDocs/contents/docs?ref=main':
        case '/gh/repos/acme/tools/contents/docs?ref=main':
          return json([
            { type: 'file', path: 'docs/upsert.md', size: 60, download_url: `${base}/raw/docs/upsert.md` },
          ]);
        // A private repository: GitHub answers 404 without its token.
        case '/gh/repos/acme/private/contents/?ref=main':
          if (req.headers.authorization !== 'Bearer gh-private-token') {
            res.writeHead(404, { 'content-type': 'application/json' });
            return res.end('{"message":"Not Found"}');
          }
          return json([
            { type: 'file', path: 'NOTES.md', size: 40, download_url: `${base}/raw/docs/upsert.md` },
          ]);
        case '/raw/README.md':
          return text('# Flowise Docs\n\nThe documentation of Flowise.');
        case '/raw/docs/upsert.md':
          return text('# Upsert\n\nThe vector upsert API loads documents into a vector store.');
        case '/api/items': {
          if (req.headers.authorization !== 'Bearer api-key-1') {
            res.writeHead(401, { 'content-type': 'application/json' });
            return res.end('{"error":"no key"}');
          }
          res.writeHead(200, { 'content-type': 'application/json' });
          const query = body ? (JSON.parse(body) as { q?: string }).q : undefined;
          return res.end(
            JSON.stringify({ items: [{ name: 'Copper kettle', price: 42, query: query ?? null }] }),
          );
        }
        default:
          res.writeHead(404, { 'content-type': 'text/plain' });
          return res.end('not found');
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  const base = `http://127.0.0.1:${port}`;
  return {
    url: base,
    host: `127.0.0.1:${port}`,
    seen,
    hang,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

const node = (id: string, name: string, inputs: Record<string, unknown> = {}) => ({
  id,
  type: 'customNode',
  data: { id, name, inputs },
});
const edge = (source: string, target: string) => ({ source, target, sourceHandle: '', targetHandle: '' });

/** A Conversational Retrieval QA chain over an in-memory vector store fed by one loader node. */
const qnaCanvas = (loader: ReturnType<typeof node>) => ({
  nodes: [
    node('chatOpenAI_0', 'chatOpenAI', { modelName: 'gpt-3.5-turbo' }),
    node('openAIEmbeddings_0', 'openAIEmbeddings', {}),
    node('recursiveCharacterTextSplitter_0', 'recursiveCharacterTextSplitter', { chunkSize: 500 }),
    loader,
    node('memoryVectorStore_0', 'memoryVectorStore', {
      document: [`{{${loader.id}.data.instance}}`],
      embeddings: '{{openAIEmbeddings_0.data.instance}}',
      topK: 4,
    }),
    node('conversationalRetrievalQAChain_0', 'conversationalRetrievalQAChain', {
      model: '{{chatOpenAI_0.data.instance}}',
      vectorStoreRetriever: '{{memoryVectorStore_0.data.instance}}',
    }),
  ],
  edges: [
    edge('recursiveCharacterTextSplitter_0', loader.id),
    edge(loader.id, 'memoryVectorStore_0'),
    edge('openAIEmbeddings_0', 'memoryVectorStore_0'),
    edge('memoryVectorStore_0', 'conversationalRetrievalQAChain_0'),
    edge('chatOpenAI_0', 'conversationalRetrievalQAChain_0'),
  ],
});

let site: Awaited<ReturnType<typeof startSite>>;
beforeAll(async () => {
  site = await startSite();
});
afterAll(() => site?.close());
beforeEach(() => {
  site.seen.length = 0;
});

describe.each(await testDialects())('flows: Flowise web and API loaders on %s', (dialect) => {
  let bed: LlmTestbed;

  beforeAll(async () => {
    bed = await startLlmTestbed(
      dialect,
      { OUTBOUND_ALLOW_HOSTS: site.host, FLOWISE_SEARCHAPI_URL: site.url },
      {
        extraModels: (_ollama, openai) => [
          { provider: 'openai', baseUrl: openai.url, name: 'gpt-3.5-turbo', upstreamModel: 'gpt-4o-mini' },
        ],
      },
    );
  });
  afterAll(() => bed?.close());
  beforeEach(() => bed.openai.reset());

  const importFlow = async (name: string, flowData: string): Promise<Flow> => {
    const res = await call(bed, 'POST', '/api/v1/chatflows', { body: { name, flowData } });
    expect(res.status, res.text).toBe(201);
    return res.json() as Flow;
  };
  const upsert = (flowId: string, body: Record<string, unknown>) =>
    call(bed, 'POST', `/api/v1/vector/upsert/${flowId}`, { body });
  /** An upsert the test may abandon (its client closes the connection): settles either way. */
  const upsertWith = (flowId: string, body: Record<string, unknown>, signal: AbortSignal) =>
    call(bed, 'POST', `/api/v1/vector/upsert/${flowId}`, { body, signal }).catch(() => null);

  it('WebPage QnA (marketplace template, unmodified): the upsert scrapes the page, the answer cites it', async () => {
    const flow = await importFlow('WebPage QnA', template('WebPage QnA'));
    expect(flow.kind).toBe('rag');
    const res = await upsert(flow.id, { overrideConfig: { url: `${site.url}/` } });
    expect(res.status, res.text).toBe(200);
    expect((res.json() as { numAdded: number }).numAdded).toBeGreaterThan(0);
    expect(site.seen.map((s) => s.path)).toEqual(['/']);
    const answer = await predict(bed, flow.id, { question: 'When does the library lend kayaks?' });
    expect(answer.sourceDocuments[0]?.pageContent).toContain('lends kayaks every Tuesday');
    expect(lastCall(bed.openai).user).toContain('lends kayaks every Tuesday');
  });

  it.each(['Github Docs QnA', 'Flowise Docs QnA'])(
    '%s (marketplace template, unmodified): the GitHub loader reads the repository recursively',
    async (name) => {
      const flow = await importFlow(name, template(name));
      const res = await upsert(flow.id, { overrideConfig: { githubInstanceApi: `${site.url}/gh` } });
      expect(res.status, res.text).toBe(200);
      // The root listing, the docs directory, the two text files; not the image nor the submodule.
      expect(site.seen.map((s) => s.path).sort()).toEqual(
        [
          '/gh/repos/FlowiseAI/FlowiseDocs/contents/?ref=main',
          '/gh/repos/FlowiseAI/FlowiseDocs/contents/docs?ref=main',
          '/raw/README.md',
          '/raw/docs/upsert.md',
        ].sort(),
      );
      const answer = await predict(bed, flow.id, { question: 'What does the vector upsert API do?' });
      expect(answer.sourceDocuments.map((d) => d.pageContent).join('\n')).toContain(
        'loads documents into a vector store',
      );
    },
  );

  it('Github Repo QnA (marketplace template, unmodified): its repository given at upsert, into its Pinecone topic', async () => {
    const flow = await importFlow('Github Repo QnA', template('Github Repo QnA'));
    // The template names no repository: the upsert must.
    expectNamesField(await upsert(flow.id, {}), 'flowData.github_1.repoLink');
    const res = await upsert(flow.id, {
      overrideConfig: { repoLink: 'https://github.com/acme/tools', githubInstanceApi: `${site.url}/gh` },
    });
    expect(res.status, res.text).toBe(200);
    const answer = await predict(bed, flow.id, { question: 'What is the documentation about?' });
    expect(answer.sourceDocuments[0]?.metadata.topic).toBe('pinecone:myindex/mynamespace');
  });

  it('a web crawl follows same-origin links breadth first up to its limit; the selector picks the content', async () => {
    const flow = await importFlow(
      'crawl',
      JSON.stringify(
        qnaCanvas(
          node('cheerioWebScraper_0', 'cheerioWebScraper', {
            url: `${site.url}/`,
            relativeLinksMethod: 'webCrawl',
            limit: '3',
            selector: 'main',
            metadata: '{"site":"harbour"}',
            textSplitter: '{{recursiveCharacterTextSplitter_0.data.instance}}',
          }),
        ),
      ),
    );
    const res = await upsert(flow.id, {});
    expect(res.status, res.text).toBe(200);
    const docs = (res.json() as { addedDocs: Array<{ title: string }> }).addedDocs;
    // `/`, then its links in order: /about, /hours (the fragment dropped); not /deep (past the limit),
    // not the other origin.
    expect(site.seen.map((s) => s.path)).toEqual(['/', '/about', '/hours']);
    expect(docs.map((d) => d.title).sort()).toEqual(
      [`${site.url}/`, `${site.url}/about`, `${site.url}/hours`].sort(),
    );
    const answer = await predict(bed, flow.id, { question: 'Who founded the library?' });
    const found = answer.sourceDocuments.map((d) => d.pageContent).join('\n');
    expect(found).toContain('lighthouse keepers');
    expect(found).not.toContain('Navigation menu text');
  });

  it('a sitemap gives the pages of its own origin', async () => {
    const flow = await importFlow(
      'sitemap',
      JSON.stringify(
        qnaCanvas(
          node('cheerioWebScraper_0', 'cheerioWebScraper', {
            url: `${site.url}/sitemap.xml`,
            relativeLinksMethod: 'scrapeXMLSitemap',
            limit: 0,
          }),
        ),
      ),
    );
    const res = await upsert(flow.id, {});
    expect(res.status, res.text).toBe(200);
    expect(site.seen.map((s) => s.path)).toEqual(['/sitemap.xml', '/hours', '/deep']);
  });

  it('the API Loader: GET with its headers, POST with its JSON body; the answer’s JSON is the document', async () => {
    const api = (inputs: Record<string, unknown>) =>
      JSON.stringify(
        qnaCanvas(
          node('apiLoader_0', 'apiLoader', {
            url: `${site.url}/api/items`,
            headers: '{"Authorization":"Bearer api-key-1"}',
            ...inputs,
          }),
        ),
      );
    const get = await importFlow('api get', api({ method: 'GET' }));
    const res = await upsert(get.id, {});
    expect(res.status, res.text).toBe(200);
    expect(site.seen[0]).toMatchObject({ method: 'GET', path: '/api/items' });
    const answer = await predict(bed, get.id, { question: 'What does the copper kettle cost?' });
    expect(answer.sourceDocuments[0]?.pageContent).toContain('"name": "Copper kettle"');

    const post = await importFlow('api post', api({ method: 'POST', body: '{"q":"kettles"}' }));
    site.seen.length = 0;
    expect((await upsert(post.id, {})).status).toBe(200);
    expect(site.seen[0]).toMatchObject({ method: 'POST', body: '{"q":"kettles"}' });
    expect(site.seen[0]?.headers['content-type']).toBe('application/json');

    // A refused key is the API's status, in Flowise's error body.
    const denied = await upsert(get.id, { overrideConfig: { headers: { Authorization: 'Bearer wrong' } } });
    expectFlowError(denied, 502, 'UPSTREAM_ERROR');
  });

  it('Chat with a Podcast (marketplace template, unmodified): SearchApi’s YouTube transcript, with the account’s key', async () => {
    const flow = await importFlow('Chat with a Podcast', template('Chat with a Podcast'));
    expect(flow.kind).toBe('rag');
    // No key yet: a 400 naming the loader's credential and the variable that holds it.
    const missing = await upsert(flow.id, {});
    expectNamesField(missing, 'flowData.searchApi_0.credential');
    expect(missing.text).toContain('SEARCHAPI_API_KEY');
    expect(site.seen).toEqual([]);
    const variable = await call(bed, 'POST', '/flowise/api/v1/variables', {
      body: { name: 'SEARCHAPI_API_KEY', value: SEARCHAPI_KEY, type: 'static' },
    });
    expect(variable.status, variable.text).toBe(200);
    try {
      const res = await upsert(flow.id, {});
      expect(res.status, res.text).toBe(200);
      // The canvas lists its loader three times: it loads once.
      expect(site.seen).toHaveLength(1);
      const asked = new URL(site.seen[0]?.path ?? '', 'http://x');
      expect(asked.pathname).toBe('/api/v1/search');
      expect(Object.fromEntries(asked.searchParams)).toEqual({
        engine: 'youtube_transcripts',
        q: '',
        video_id: '0e3GPea1Tyg',
      });
      // The key travels in the header SearchApi reads, never in the query string.
      expect(site.seen[0]?.headers.authorization).toBe(`Bearer ${SEARCHAPI_KEY}`);
      expect(site.seen[0]?.path).not.toContain(SEARCHAPI_KEY);
      const answer = await predict(bed, flow.id, { question: 'Why does the lamp burn whale oil?' });
      const found = answer.sourceDocuments[0]?.pageContent ?? '';
      expect(found).toContain('today the keeper explains why the lighthouse lamp burns whale oil');
      expect(found).toContain('fog horn sounds every ninety seconds');
      expect(lastCall(bed.openai).user).toContain('lighthouse lamp burns whale oil');

      // Another video (overrideConfig, as Flowise's customParameters): SearchApi's own error, no key in it.
      const other = await upsert(flow.id, {
        overrideConfig: { customParameters: { engine: 'youtube_transcripts', video_id: 'nope' } },
      });
      const body = expectFlowError(other, 502, 'UPSTREAM_ERROR');
      expect(body.message).toContain('Transcripts are disabled for this video');
      expect(other.text).not.toContain(SEARCHAPI_KEY);
    } finally {
      await call(bed, 'DELETE', `/flowise/api/v1/variables/${(variable.json() as { id: string }).id}`);
    }
  });

  it('a SearchApi or GitHub node naming a credential uses that credential of the account’s store (searchApiKey)', async () => {
    const canvas = (credential: string) => {
      const c = qnaCanvas(
        node('searchApi_0', 'searchApi', {
          query: 'harbour library',
          customParameters: '{"engine":"google"}',
        }),
      );
      (c.nodes[3]?.data as Record<string, unknown>).credential = credential;
      return JSON.stringify(c);
    };
    const flow = await importFlow('searchapi credential', canvas('podcast-search'));
    // Not in the store yet: a 400 naming the node's credential.
    const missing = await upsert(flow.id, {});
    expectNamesField(missing, 'flowData.searchApi_0.credential');
    expect(missing.text).toContain('podcast-search');
    // An id this store lacks (a Flowise export names Flowise's own) falls back to the account's variable.
    const variable = await call(bed, 'POST', '/flowise/api/v1/variables', {
      body: { name: 'SEARCHAPI_API_KEY', value: SEARCHAPI_KEY, type: 'static' },
    });
    const fallback = await upsert(flow.id, {});
    expect(fallback.status, fallback.text).toBe(200);
    // An answer box and an organic result: a document each, as LangChain's loader makes them.
    expect((fallback.json() as { addedDocs: unknown[] }).addedDocs).toHaveLength(2);
    await call(bed, 'DELETE', `/flowise/api/v1/variables/${(variable.json() as { id: string }).id}`);
    site.seen.length = 0;
    const made = await call(bed, 'POST', '/api/v1/credentials', {
      body: { name: 'podcast-search', type: 'searchApi', data: { searchApiKey: SEARCHAPI_KEY } },
    });
    expect(made.status, made.text).toBe(201);
    const wrong = await call(bed, 'POST', '/api/v1/credentials', {
      body: { name: 'gh-token', type: 'githubApi', data: { accessToken: 'gh-token-1' } },
    });
    expect(wrong.status, wrong.text).toBe(201);
    try {
      const res = await upsert(flow.id, {});
      expect(res.status, res.text).toBe(200);
      expect(site.seen[0]?.headers.authorization).toBe(`Bearer ${SEARCHAPI_KEY}`);
      expect(Object.fromEntries(new URL(site.seen[0]?.path ?? '', 'http://x').searchParams)).toEqual({
        engine: 'google',
        q: 'harbour library',
      });
      // A credential of another type is refused by name.
      const other = await importFlow('searchapi wrong credential', canvas('gh-token'));
      const refused = await upsert(other.id, {});
      expectNamesField(refused, 'flowData.searchApi_0.credential');
      expect(refused.text).toContain('needs a searchApi one with searchApiKey');
      // A key that may upsert but was not given the credential (its owner's, not shared): a 403.
      const { key: writer } = await bed.p.createKey({
        name: 'upsert writer',
        type: 'development',
        services: ['flow'],
        role: 'Writer',
      });
      const notShared = await call(bed, 'POST', `/api/v1/vector/upsert/${flow.id}`, {
        body: {},
        key: writer,
      });
      expectFlowError(notShared, 403, 'FORBIDDEN');
      expect(notShared.text).toContain('podcast-search');
    } finally {
      for (const c of [made, wrong])
        await call(bed, 'DELETE', `/api/v1/credentials/${(c.json() as { id: string }).id}`);
    }
  });

  it('loader errors show the URL’s origin and path, never its query (which may hold a key)', async () => {
    const flow = await importFlow(
      'api with key in query',
      JSON.stringify(
        qnaCanvas(node('apiLoader_0', 'apiLoader', { url: `${site.url}/nothing?api_key=topsecret-123` })),
      ),
    );
    const res = await upsert(flow.id, {});
    const body = expectFlowError(res, 502, 'UPSTREAM_ERROR');
    expect(body.message).toContain(`${site.url}/nothing`);
    expect(res.text).not.toContain('topsecret-123');
  });

  it('a client that disconnects stops the upsert’s loaders, their request in flight too', async () => {
    const flow = await importFlow('WebPage QnA', template('WebPage QnA'));
    const before = { ...site.hang };
    const controller = new AbortController();
    const pending = upsertWith(flow.id, { overrideConfig: { url: `${site.url}/hang` } }, controller.signal);
    await until(() => site.hang.started > before.started, 'the loader to reach /hang');
    controller.abort();
    await pending;
    // The loader's own time limit is 30 s (OUTBOUND_TIMEOUT_MS): its request ends with its caller.
    await until(() => site.hang.closed > before.closed, 'the loader to close its request', 10_000);
  });

  it('a per-node overrideConfig names a loader of any vector store, and changes that loader only', async () => {
    const tool = (i: number) => [
      node(`cheerioWebScraper_${i}`, 'cheerioWebScraper', { url: `${site.url}/${i === 0 ? '' : 'about'}` }),
      node(`memoryVectorStore_${i}`, 'memoryVectorStore', {
        document: [`{{cheerioWebScraper_${i}.data.instance}}`],
        embeddings: '{{openAIEmbeddings_0.data.instance}}',
      }),
      node(`retrieverTool_${i}`, 'retrieverTool', {
        name: `library_${i}`,
        description: 'Searches the library pages.',
        retriever: `{{memoryVectorStore_${i}.data.instance}}`,
      }),
    ];
    const canvas = {
      nodes: [
        node('chatOpenAI_0', 'chatOpenAI', { modelName: 'gpt-3.5-turbo' }),
        node('openAIEmbeddings_0', 'openAIEmbeddings', {}),
        ...tool(0),
        ...tool(1),
        node('toolAgent_0', 'toolAgent', {
          model: '{{chatOpenAI_0.data.instance}}',
          tools: ['{{retrieverTool_0.data.instance}}', '{{retrieverTool_1.data.instance}}'],
        }),
      ],
      edges: [0, 1].flatMap((i) => [
        edge(`cheerioWebScraper_${i}`, `memoryVectorStore_${i}`),
        edge('openAIEmbeddings_0', `memoryVectorStore_${i}`),
        edge(`memoryVectorStore_${i}`, `retrieverTool_${i}`),
        edge(`retrieverTool_${i}`, 'toolAgent_0'),
        ...(i === 0 ? [edge('chatOpenAI_0', 'toolAgent_0')] : []),
      ]),
    };
    const flow = await importFlow('two stores', JSON.stringify(canvas));
    const res = await upsert(flow.id, {
      overrideConfig: { url: { cheerioWebScraper_1: `${site.url}/hours` } },
    });
    expect(res.status, res.text).toBe(200);
    // The first store's loader keeps its URL; the second's is the override.
    expect(site.seen.map((s) => s.path)).toEqual(['/', '/hours']);
    // An id no store has is still refused.
    expectNamesField(
      await upsert(flow.id, { overrideConfig: { url: { cheerioWebScraper_9: `${site.url}/` } } }),
      'overrideConfig.url',
    );
  });

  it('JSON nested thousands deep in a loader’s input (canvas or overrideConfig) is a 400 naming it, not a stack overflow', async () => {
    // An object (metadata must be one), 100,000 levels deep: each later walk of it (its save) recursed.
    const deep = `${'{"a":'.repeat(100_000)}1${'}'.repeat(100_000)}`;
    const bad = await call(bed, 'POST', '/api/v1/chatflows', {
      body: {
        name: 'deep',
        flowData: JSON.stringify(
          qnaCanvas(
            node('cheerioWebScraper_0', 'cheerioWebScraper', { url: `${site.url}/`, metadata: deep }),
          ),
        ),
      },
    });
    expectNamesField(bad, 'flowData.cheerioWebScraper_0.metadata');
    const flow = await importFlow('WebPage QnA', template('WebPage QnA'));
    expectNamesField(
      await upsert(flow.id, { overrideConfig: { url: `${site.url}/`, metadata: deep } }),
      'overrideConfig.metadata',
    );
  });

  it('Github Repo QnA on a private repository: the account’s GITHUB_ACCESS_TOKEN variable opens it, on the flow’s own API only', async () => {
    // The flow's owner points its GitHub loader at their GitHub instance (here the local site).
    const canvas = JSON.parse(template('Github Repo QnA')) as {
      nodes: Array<{ id: string; data: { inputs: Record<string, unknown> } }>;
    };
    const github = canvas.nodes.find((n) => n.id === 'github_1');
    if (!github) throw new Error('the template has no github_1 node');
    github.data.inputs.githubInstanceApi = `${site.url}/gh`;
    const flow = await importFlow('Github Repo QnA (own instance)', JSON.stringify(canvas));
    const override = { overrideConfig: { repoLink: 'https://github.com/acme/private' } };
    const closed = await upsert(flow.id, override);
    const body = expectFlowError(closed, 502, 'UPSTREAM_ERROR');
    expect(body.message).toContain('GITHUB_ACCESS_TOKEN');
    const variable = await call(bed, 'POST', '/flowise/api/v1/variables', {
      body: { name: 'GITHUB_ACCESS_TOKEN', value: 'gh-private-token', type: 'static' },
    });
    expect(variable.status, variable.text).toBe(200);
    try {
      site.seen.length = 0;
      const res = await upsert(flow.id, override);
      expect(res.status, res.text).toBe(200);
      expect(site.seen.map((r) => r.headers.authorization)).toEqual([
        'Bearer gh-private-token',
        'Bearer gh-private-token',
      ]);
      // An upsert that moves the unmodified template's API (api.github.com) to another host does not
      // take the token there: the caller may run the upsert, not read the account's token.
      const moved = await importFlow('Github Repo QnA', template('Github Repo QnA'));
      site.seen.length = 0;
      const elsewhere = await upsert(moved.id, {
        overrideConfig: { repoLink: 'https://github.com/acme/private', githubInstanceApi: `${site.url}/gh` },
      });
      expectFlowError(elsewhere, 502, 'UPSTREAM_ERROR');
      expect(site.seen.length).toBeGreaterThan(0);
      expect(site.seen.every((r) => r.headers.authorization === undefined)).toBe(true);
    } finally {
      await call(bed, 'DELETE', `/flowise/api/v1/variables/${(variable.json() as { id: string }).id}`);
    }
  });

  it('refuses what cannot run: bad URLs, overrides of other inputs, a web loader in a conversation chain', async () => {
    const flow = await importFlow('WebPage QnA', template('WebPage QnA'));
    expectNamesField(
      await upsert(flow.id, { overrideConfig: { url: 'file:///etc/passwd' } }),
      'flowData.cheerioWebScraper_0.url',
    );
    expectNamesField(await upsert(flow.id, { overrideConfig: { temperature: 2 } }), 'overrideConfig');
    expectNamesField(
      await upsert(flow.id, { overrideConfig: { url: { other_0: `${site.url}/` } } }),
      'overrideConfig.url',
    );
    // Not in OUTBOUND_ALLOW_HOSTS: the outbound rule refuses a private address.
    const local = await upsert(flow.id, { overrideConfig: { url: 'http://127.0.0.2:9/' } });
    expectFlowError(local, 403, 'FORBIDDEN');
    const bad = await call(bed, 'POST', '/api/v1/chatflows', {
      body: {
        name: 'bad',
        flowData: JSON.stringify({
          nodes: [
            node('chatOpenAI_0', 'chatOpenAI', { modelName: 'gpt-3.5-turbo' }),
            node('cheerioWebScraper_0', 'cheerioWebScraper', {
              url: 'ftp://x',
              relativeLinksMethod: 'spider',
            }),
            node('conversationChain_0', 'conversationChain', {
              model: '{{chatOpenAI_0.data.instance}}',
              document: ['{{cheerioWebScraper_0.data.instance}}'],
            }),
          ],
          edges: [
            edge('chatOpenAI_0', 'conversationChain_0'),
            edge('cheerioWebScraper_0', 'conversationChain_0'),
          ],
        }),
      },
    });
    expectNamesField(bad, 'flowData.cheerioWebScraper_0');
  });
});

describe('flows: Flowise loaders bounded', () => {
  const pool = new CpuPool({ workers: 1, heapMb: 128, maxQueue: 8 });
  afterAll(() => pool.close());
  const config = (o: Partial<WebLoaderConfig> = {}): WebLoaderConfig => ({
    http: createOutboundHttp({ allowHosts: [site.host], timeoutMs: 5_000 }),
    timeoutMs: 5_000,
    maxPageBytes: 1_000_000,
    maxTotalBytes: 2_000_000,
    maxPages: 50,
    deadlineMs: 10_000,
    cpu: { pool, timeoutMs: 2_000 },
    searchApiUrl: site.url,
    ...o,
  });
  const web = (url: string, o: Partial<FlowiseLoader & { type: 'web' }> = {}): FlowiseLoader => ({
    id: 'cheerioWebScraper_0',
    type: 'web',
    url,
    relativeLinksMethod: '',
    limit: 10,
    selector: '',
    metadata: {},
    ...o,
  });

  it('a page over the size limit is a 413; a server that never answers ends at the time limit', async () => {
    await expect(
      runLoaders(config({ maxPageBytes: 100_000 }), [web(`${site.url}/big`)]),
    ).rejects.toMatchObject({
      code: 'PAYLOAD_TOO_LARGE',
    });
    const started = Date.now();
    await expect(runLoaders(config({ timeoutMs: 300 }), [web(`${site.url}/hang`)])).rejects.toMatchObject({
      code: 'GATEWAY_TIMEOUT',
    });
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it('a crawl stops at the server’s page cap and its byte budget', async () => {
    const pages = await runLoaders(config({ maxPages: 2 }), [
      web(`${site.url}/`, { relativeLinksMethod: 'webCrawl', limit: 0 }),
    ]);
    expect(pages).toHaveLength(2);
    await expect(
      runLoaders(config({ maxTotalBytes: 1_000 }), [
        web(`${site.url}/`, { relativeLinksMethod: 'webCrawl', limit: 0 }),
      ]),
    ).rejects.toMatchObject({ code: 'PAYLOAD_TOO_LARGE' });
  });

  it('one budget for the whole upsert: what one vector store’s loaders fetched counts for the next', async () => {
    const measure = loaderBudget(config());
    await runLoaders(config(), [web(`${site.url}/`)], measure);
    const cfg = config({ maxTotalBytes: Math.floor(measure.bytes * 1.5) });
    const shared = loaderBudget(cfg);
    await runLoaders(cfg, [web(`${site.url}/`)], shared);
    await expect(runLoaders(cfg, [web(`${site.url}/`)], shared)).rejects.toMatchObject({
      code: 'PAYLOAD_TOO_LARGE',
    });
    // Each store on a fresh budget would have passed.
    await expect(runLoaders(cfg, [web(`${site.url}/`)])).resolves.toHaveLength(1);
  });

  it('the outbound rule holds for every page: no allowed host, no private address', async () => {
    const closed = config({ http: createOutboundHttp({ allowHosts: [], timeoutMs: 5_000 }) });
    await expect(runLoaders(closed, [web(`${site.url}/`)])).rejects.toMatchObject({ code: 'FORBIDDEN' });
  });

  it('a CSS selector that takes exponential time is stopped by its worker’s deadline: a 422, the server free', async () => {
    // No `p` inside the nesting: every `:has` level searches all of it again before giving up.
    const page = `<html><body><p>x</p>${'<div>'.repeat(200)}${'</div>'.repeat(200)}</body></html>`;
    const slow = await startPage(page);
    const http = createOutboundHttp({ allowHosts: [slow.host], timeoutMs: 5_000 });
    try {
      // A plain selector answers on the worker (this also starts the worker, which is slow on a busy machine).
      const ok = await runLoaders(config({ http, cpu: { pool, timeoutMs: 60_000 } }), [
        web(slow.url, { selector: 'p' }),
      ]);
      expect(ok[0]?.content).toContain('x');
      // The same worker, warm: the nested `:has` runs past a deadline a plain selector never nears.
      await expect(
        runLoaders(config({ http, cpu: { pool, timeoutMs: 500 } }), [
          web(slow.url, { selector: 'div:has(div:has(div:has(p)))' }),
        ]),
      ).rejects.toMatchObject({ code: 'UNPROCESSABLE' });
      expect(pool.started).toBe(1);
    } finally {
      await slow.close();
    }
  });

  it('an API Loader moved to another origin by overrideConfig does not take the canvas’s headers along', () => {
    const api = {
      id: 'apiLoader_0',
      type: 'api',
      method: 'GET',
      url: 'https://api.example.test/items',
      headers: { Authorization: 'Bearer canvas-secret' },
      body: null,
      metadata: {},
    } as unknown as FlowiseLoader;
    const moved = withOverrides([api], { url: 'https://attacker.example.net/' })[0] as { headers: object };
    expect(moved.headers).toEqual({});
    const samePlace = withOverrides([api], { url: 'https://api.example.test/other' })[0] as {
      headers: object;
    };
    expect(samePlace.headers).toEqual({ Authorization: 'Bearer canvas-secret' });
    const ownHeaders = withOverrides([api], {
      url: 'https://elsewhere.test/',
      headers: { 'X-Key': 'mine' },
    })[0] as {
      headers: object;
    };
    expect(ownHeaders.headers).toEqual({ 'X-Key': 'mine' });
  });

  it('a private GitHub repository: the token goes to the API’s origin only, not to raw files elsewhere nor across a redirect', async () => {
    const TOKEN = 'gh-token-1';
    // Another origin: GitHub's raw host (a private file's URL carries its own token) and where a listing redirects.
    const raw = await startServer((req, res) => {
      if (req.url === '/moved/docs')
        return json(res, 200, [
          {
            type: 'file',
            path: 'docs/keys.md',
            size: 30,
            download_url: `${raw.url}/acme/vault/main/docs/keys.md`,
          },
        ]);
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end(
        req.url?.includes('README')
          ? '# Vault\n\nThe vault opens at dawn.'
          : '# Keys\n\nThe keys hang by the door.',
      );
    });
    const api = await startServer((req, res) => {
      // GitHub answers 404 for a private repository asked without (or with a wrong) token.
      if (req.headers.authorization !== `Bearer ${TOKEN}`) return json(res, 404, { message: 'Not Found' });
      if (req.url === '/repos/acme/vault/contents/?ref=main')
        return json(res, 200, [
          {
            type: 'file',
            path: 'README.md',
            size: 30,
            download_url: `${raw.url}/acme/vault/main/README.md?token=RAW123`,
          },
          { type: 'file', path: 'LICENSE', size: 20, download_url: `${api.url}/raw/LICENSE` },
          { type: 'dir', path: 'docs', size: 0, download_url: null },
        ]);
      if (req.url === '/raw/LICENSE') {
        res.writeHead(200, { 'content-type': 'text/plain' });
        return res.end('MIT License');
      }
      if (req.url === '/repos/acme/vault/contents/docs?ref=main') {
        res.writeHead(302, { location: `${raw.url}/moved/docs` });
        return res.end();
      }
      return json(res, 404, { message: 'Not Found' });
    });
    try {
      const http = createOutboundHttp({ allowHosts: [api.host, raw.host], timeoutMs: 5_000 });
      const github: FlowiseLoader = {
        id: 'github_0',
        type: 'github',
        repoLink: 'https://github.com/acme/vault',
        branch: 'main',
        recursive: true,
        githubInstanceApi: api.url,
        ignorePath: [],
        metadata: {},
      };
      const docs = await runLoaders(config({ http }), [github], undefined, { github_0: TOKEN });
      expect(docs.map((d) => d.title).sort()).toEqual(['LICENSE', 'README.md', 'docs/keys.md']);
      expect(docs.map((d) => d.content).join('\n')).toContain('The keys hang by the door.');
      // The API's origin saw the token on each request (listings and its own file) …
      expect(api.seen.map((r) => r.headers.authorization)).toEqual([
        `Bearer ${TOKEN}`,
        `Bearer ${TOKEN}`,
        `Bearer ${TOKEN}`,
      ]);
      // … the raw host (its file, the redirected listing, the file it named) never did.
      expect(raw.seen.map((r) => r.path).sort()).toEqual(
        ['/acme/vault/main/README.md?token=RAW123', '/acme/vault/main/docs/keys.md', '/moved/docs'].sort(),
      );
      expect(raw.seen.every((r) => r.headers.authorization === undefined)).toBe(true);
      // Without the token: GitHub's 404, told as the variable that is missing.
      await expect(runLoaders(config({ http }), [github])).rejects.toMatchObject({
        code: 'UPSTREAM_ERROR',
        message: expect.stringContaining('GITHUB_ACCESS_TOKEN'),
      });
    } finally {
      await api.close();
      await raw.close();
    }
  });

  it('errors name the URL without its query: a refused status, a timeout', async () => {
    const secret = 'api_key=topsecret-456';
    const api: FlowiseLoader = {
      id: 'apiLoader_0',
      type: 'api',
      method: 'GET',
      url: `${site.url}/nothing?${secret}`,
      headers: {},
      body: undefined,
      metadata: {},
    };
    const refused = await runLoaders(config(), [api]).catch((e: Error) => e);
    expect(refused).toMatchObject({
      code: 'UPSTREAM_ERROR',
      message: `${site.url}/nothing answered with status 404`,
    });
    expect(JSON.stringify(refused) + String((refused as Error).message)).not.toContain('topsecret');
    const slow = await runLoaders(config({ timeoutMs: 200 }), [web(`${site.url}/hang?${secret}`)]).catch(
      (e: Error) => e,
    );
    expect(slow).toMatchObject({ code: 'GATEWAY_TIMEOUT' });
    expect(JSON.stringify(slow) + String((slow as Error).message)).not.toContain('topsecret');
  });

  it('a cancelled upsert ends the loader’s request in flight at once', async () => {
    const before = { ...site.hang };
    const controller = new AbortController();
    // Its own time limit far away: only the cancellation can end the request within the wait below.
    const patient = config({
      http: createOutboundHttp({ allowHosts: [site.host], timeoutMs: 60_000 }),
      timeoutMs: 60_000,
      deadlineMs: 60_000,
    });
    const budget = loaderBudget(patient, controller.signal);
    const run = runLoaders(patient, [web(`${site.url}/hang`)], budget).catch((e: Error) => e);
    await until(() => site.hang.started > before.started, 'the loader to reach /hang');
    controller.abort();
    expect(await run).toMatchObject({
      code: 'GATEWAY_TIMEOUT',
      message: expect.stringContaining('cancelled'),
    });
    await until(() => site.hang.closed > before.closed, 'the request to close', 10_000);
  });

  it('link and sitemap scans stay linear on hostile pages', () => {
    const base = new URL('http://site.test/');
    expect(pageLinks('<a '.repeat(40_000), base)).toEqual([]);
    expect(pageLinks('<a class="x" href="/next">n</a>', base).map(String)).toEqual(['http://site.test/next']);
    expect(sitemapLinks(`<loc>${' '.repeat(40_000)}`, base)).toEqual([]);
    expect(sitemapLinks('<loc>\n  http://site.test/a \n</loc>', base).map(String)).toEqual([
      'http://site.test/a',
    ]);
  });
});

const json = (res: ServerResponse, status: number, v: unknown) => {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(v));
};

/** A local server recording each request (path and headers). */
async function startServer(
  handle: (req: IncomingMessage, res: ServerResponse) => void,
): Promise<{ url: string; host: string; seen: Seen[]; close: () => Promise<void> }> {
  const seen: Seen[] = [];
  const server = createServer((req, res) => {
    seen.push({ method: req.method ?? '', path: req.url ?? '/', headers: req.headers, body: '' });
    handle(req, res);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const host = `127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url: `http://${host}`,
    host,
    seen,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

/** One page served at `/` (for inputs the site above does not hold). */
async function startPage(html: string): Promise<{ url: string; host: string; close: () => Promise<void> }> {
  const server = createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end(html));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const host = `127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { url: `http://${host}/`, host, close: () => new Promise<void>((r) => server.close(() => r())) };
}
