import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createOutboundHttp } from '../../src/core/http/outbound.js';
import { ctx as runContext, testDeps } from '../../src/modules/workflows/engine/testing.js';
import type { EngineDeps } from '../../src/modules/workflows/engine/types.js';
import { WorkflowEngine } from '../../src/modules/workflows/engine/workflow-engine.js';
import { defaultNodeRegistry } from '../../src/modules/workflows/nodes/index.js';
import { FakeEmbeddings } from './support/fake-embeddings.js';
import { FakeQdrant } from './support/fake-qdrant.js';
import { type FakeReply, type FakeServer, json, startFakeServer } from './support/fakes/fake-server.js';
import { loadFixture } from './support/n8n-fixtures.js';

/**
 * The real export "Building RAG Chatbot for Movie Recommendations with Qdrant and Open AI"
 * (test/fixtures/n8n/templates/qdrant-github-movies-token-splitter.json, SOURCES-templates.md), imported
 * unmodified: its upload half runs from the manual trigger. The GitHub node reads a CSV of movies from a
 * local GitHub (contents API, base64 as GitHub sends it), Extract from File parses it, and the Qdrant
 * Vector Store inserts each movie's description through the Default Data Loader and the Token Splitter
 * (its defaults: 1000 tokens, no overlap) with Embeddings OpenAI. api.github.com and api.openai.com go
 * to the local servers through the outbound function; the Qdrant the credential names is the local one.
 */

const EXPORT = 'templates/qdrant-github-movies-token-splitter.json';
const TRIGGER = 'When clicking ‘Test workflow’';
const CSV_PATH = '/repos/mrscoopers/n8n_demo/contents/Top_1000_IMDB_movies.csv';

/**
 * A description of 2500 tokens: every word below (with its leading space) and the full stop is one
 * token in cl100k_base (and in gpt2, LangChain's default), so n8n's Token Splitter cuts it after word
 * 1000 and word 2000 — three chunks of 1000, 1000 and 500 tokens, exact slices of the text. Long words
 * that are one token (" mother", " daughter", " something") are among them: an estimate by length would
 * count them as several and cut earlier.
 */
const VOCABULARY = [
  'A',
  'man',
  'who',
  'has',
  'lost',
  'his',
  'dog',
  'in',
  'the',
  'old',
  'city',
  'finds',
  'a',
  'new',
  'girl',
  'at',
  'night',
  'and',
  'they',
  'go',
  'home',
  'to',
  'his',
  'wife',
  'mother',
  'and',
  'daughter',
  'remember',
  'something',
  'together',
  '.',
];
const TOKENS = Array.from({ length: 2500 }, (_, i) => {
  const word = VOCABULARY[i % VOCABULARY.length] ?? '';
  return i === 0 || word === '.' ? word : ` ${word}`;
});
const LONG = TOKENS.join('');
const SHORT = 'Two friends walk home in the rain.';
const CSV = `Movie Name,Year of Release,Description\nThe Long Night,1999,${LONG}\nRain,2001,${SHORT}\n`;

/** GitHub's contents API answer for a file: base64 wrapped at 60 characters, as GitHub sends it. */
const githubFile = (content: string) => ({
  type: 'file',
  encoding: 'base64',
  size: Buffer.byteLength(content),
  name: 'Top_1000_IMDB_movies.csv',
  path: 'Top_1000_IMDB_movies.csv',
  sha: '3d21ec53a331a6f037a91c368710b99387d012c1',
  content: `${
    Buffer.from(content)
      .toString('base64')
      .match(/.{1,60}/g)
      ?.join('\n') ?? ''
  }\n`,
});

const embed = new FakeEmbeddings();
const qdrant = new FakeQdrant();
let github: FakeServer;
let githubAnswer: () => FakeReply = () => json(200, githubFile(CSV));
let deps: Partial<EngineDeps>;

/** Public origins of the export, to the local server standing in for each. */
const origins = (): Record<string, string> => ({
  'https://api.github.com': github.url,
  'https://api.openai.com': embed.base,
});

/** The export's own credential ids. */
const CREDENTIALS: Record<string, () => Record<string, string>> = {
  VbfC0mqEq24vPIwq: () => ({ accessToken: 'ghp-movies', server: 'https://api.github.com' }),
  deYJUwkgL1Euu613: () => ({ apiKey: 'sk-movies' }),
  Zin08PA0RdXVUKK7: () => ({ qdrantUrl: qdrant.base, apiKey: 'qd-movies' }),
};

beforeAll(async () => {
  github = await startFakeServer((req) =>
    req.method === 'GET' && req.path === CSV_PATH ? githubAnswer() : json(404, { message: 'Not Found' }),
  );
  await Promise.all([embed.start(), qdrant.start()]);
  const http = createOutboundHttp({
    allowHosts: [github.url, embed.base, qdrant.base].map((b) => new URL(b).host),
    timeoutMs: 10_000,
  });
  deps = {
    tenant: 'acct_token_splitter',
    http: (req) => {
      const origin = Object.keys(origins()).find((o) => req.url.startsWith(o));
      return http(origin ? { ...req, url: (origins()[origin] ?? '') + req.url.slice(origin.length) } : req);
    },
    credential: async (id) => {
      const found = CREDENTIALS[id];
      if (!found) throw new Error(`Credential '${id}' not found`);
      return found();
    },
  };
});
afterAll(() => Promise.all([github.close(), embed.stop(), qdrant.stop()]));
beforeEach(() => {
  github.received.length = 0;
  githubAnswer = () => json(200, githubFile(CSV));
  embed.reset();
  qdrant.reset();
});

async function runUpload() {
  const engine = new WorkflowEngine(testDeps(deps), defaultNodeRegistry);
  const def = loadFixture(EXPORT);
  expect(engine.validate(def)).toEqual([]);
  return engine.run(def, { nodeName: TRIGGER, items: [{ json: {} }] }, runContext);
}

describe('Token Splitter into Qdrant (template "Building RAG Chatbot for Movie Recommendations")', () => {
  it('reads the CSV from GitHub and inserts each description into Qdrant as 1000-token chunks', async () => {
    const outcome = await runUpload();
    expect(outcome.state.error).toBeNull();

    // The GitHub node asked the contents API for the file with the credential's token.
    expect(github.received).toHaveLength(1);
    expect(github.received[0]).toMatchObject({
      method: 'GET',
      path: CSV_PATH,
      headers: { authorization: 'token ghp-movies' },
    });

    // The long description in three chunks (1000, 1000 and 500 tokens), the short one whole.
    const chunks = [
      TOKENS.slice(0, 1000).join(''),
      TOKENS.slice(1000, 2000).join(''),
      TOKENS.slice(2000).join(''),
    ];
    const embedded = embed.requests.flatMap((r) => r.body.input as string[]);
    expect(embedded).toEqual([...chunks, SHORT]);
    expect(embed.requests[0]).toMatchObject({
      path: '/v1/embeddings',
      headers: { authorization: 'Bearer sk-movies' },
      body: { model: 'text-embedding-3-small' },
    });

    // Qdrant received the four chunks, each with the movie's metadata from the loader's expressions.
    const collection = qdrant.collections.get('imdb');
    expect(collection?.size).toBe(256);
    const points = [...(collection?.points.values() ?? [])];
    expect(points.map((p) => p.payload.content)).toEqual([...chunks, SHORT]);
    expect(points.map((p) => (p.payload.content as string).length)).toEqual([4733, 4737, 2370, SHORT.length]);
    const meta = points.map((p) => p.payload.metadata as Record<string, unknown>);
    for (const m of meta.slice(0, 3))
      expect(m).toMatchObject({
        movie_name: 'The Long Night',
        movie_release_date: '1999',
        movie_description: LONG,
      });
    expect(meta[3]).toMatchObject({
      movie_name: 'Rain',
      movie_release_date: '2001',
      movie_description: SHORT,
    });
    expect(qdrant.requests.every((r) => r.headers['api-key'] === 'qd-movies')).toBe(true);
    // As in n8n, the insert outputs one item per stored chunk (its text and metadata).
    const inserted = outcome.state.runData['Qdrant Vector Store']?.at(-1)?.output[0] ?? [];
    expect(inserted.map((i) => i.json.pageContent)).toEqual([...chunks, SHORT]);
    expect(inserted[3]?.json.metadata).toMatchObject({ movie_name: 'Rain' });
  });

  it('a file GitHub does not have fails the GitHub node with its message, and nothing reaches Qdrant', async () => {
    githubAnswer = () =>
      json(404, { message: 'Not Found', documentation_url: 'https://docs.github.com/rest' });
    const outcome = await runUpload();
    expect(outcome.state.error?.node).toBe('GitHub');
    expect(outcome.state.error?.message).toContain('Not Found');
    expect(embed.requests).toHaveLength(0);
    expect(qdrant.requests).toHaveLength(0);
  });
});
