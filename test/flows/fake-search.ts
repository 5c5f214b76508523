/**
 * A small local stand-in for the web-search services Flowise's search tools call (SerpAPI, Serper,
 * Google Custom Search, Brave Search), speaking each one's wire format: it checks the key where the
 * service expects it, records every request, and answers a result page of the service's shape.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface SearchRequest {
  method: string;
  path: string;
  query: Record<string, string>;
  headers: http.IncomingHttpHeaders;
  body: string;
}

export interface FakeSearch {
  url: string;
  /** `127.0.0.1:<port>`, for OUTBOUND_ALLOW_HOSTS. */
  host: string;
  requests: SearchRequest[];
  close(): Promise<void>;
}

export const SEARCH_KEY = 'test-search-key';
export const CSE_ID = 'test-cse';

const json = (res: http.ServerResponse, status: number, body: unknown) => {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
};

/** What each service answers for `q` (its own result-page shape). */
function answer(req: SearchRequest): [number, unknown] {
  const q = req.query.q ?? (JSON.parse(req.body || '{}') as { q?: string }).q ?? '';
  if (req.method === 'GET' && req.path === '/search') {
    if (req.query.api_key !== SEARCH_KEY) return [401, { error: 'Invalid API key.' }];
    return [
      200,
      {
        search_metadata: { status: 'Success' },
        answer_box: { type: 'organic_result', answer: `SerpAPI says: ${q} is 42` },
        organic_results: [{ position: 1, title: 'ignored', snippet: 'ignored' }],
      },
    ];
  }
  if (req.method === 'POST' && req.path === '/search') {
    if (req.headers['x-api-key'] !== SEARCH_KEY) return [403, { message: 'Unauthorized.' }];
    return [200, { searchParameters: { q }, organic: [{ title: 't', snippet: `Serper snippet for ${q}` }] }];
  }
  if (req.method === 'GET' && req.path === '/customsearch/v1') {
    if (req.query.key !== SEARCH_KEY || req.query.cx !== CSE_ID) return [400, { error: { code: 400 } }];
    return [
      200,
      {
        kind: 'customsearch#search',
        items: [{ title: 'Google hit', link: 'https://g.example/1', snippet: q }],
      },
    ];
  }
  if (req.method === 'GET' && req.path === '/res/v1/web/search') {
    if (req.headers['x-subscription-token'] !== SEARCH_KEY) return [422, { type: 'ErrorResponse' }];
    return [
      200,
      {
        type: 'search',
        web: { results: [{ title: 'Brave hit', url: 'https://b.example/1', description: `About ${q}` }] },
      },
    ];
  }
  return [404, { error: 'not found' }];
}

export async function startFakeSearch(): Promise<FakeSearch> {
  const requests: SearchRequest[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://x');
      const recorded: SearchRequest = {
        method: req.method ?? 'GET',
        path: url.pathname,
        query: Object.fromEntries(url.searchParams),
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
      };
      requests.push(recorded);
      const [status, body] = answer(recorded);
      json(res, status, body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    host: `127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
