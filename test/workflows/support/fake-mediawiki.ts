import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A local MediaWiki API (`/w/api.php`) as Wikipedia answers LangChain's WikipediaQueryRun: full-text
 * search (`list=search`) and plain-text extracts (`prop=extracts`, redirects followed), in MediaWiki's
 * JSON shapes. Records every query; `failWith` makes every answer that status.
 */
export class FakeMediaWiki {
  readonly queries: URLSearchParams[] = [];
  /** Pages by title: their extract, and the title they redirect from. */
  readonly pages = new Map<string, { extract: string; redirectFrom?: string }>();
  failWith: number | null = null;
  base = '';
  private server: Server | null = null;

  async start(): Promise<void> {
    const server = createServer((req, res) => {
      const url = new URL(req.url ?? '/', 'http://x');
      this.queries.push(url.searchParams);
      const send = (status: number, body: unknown) =>
        res
          .writeHead(status, { 'content-type': 'application/json; charset=utf-8' })
          .end(JSON.stringify(body));
      if (this.failWith !== null) return void res.writeHead(this.failWith).end('upstream trouble');
      if (url.pathname !== '/w/api.php') return void send(404, { error: { code: 'notfound' } });
      const q = url.searchParams;
      if (q.get('list') === 'search') {
        const words = (q.get('srsearch') ?? '').toLowerCase().split(/\s+/);
        const hits = [...this.pages.keys()].filter((t) =>
          words.some((w) => w && t.toLowerCase().includes(w)),
        );
        return void send(200, {
          batchcomplete: '',
          continue: { sroffset: 10, continue: '-||' },
          query: {
            searchinfo: { totalhits: hits.length },
            search: hits.map((title, i) => ({
              ns: 0,
              title,
              pageid: 1000 + i,
              size: 5000,
              wordcount: 800,
              snippet: `<span class="searchmatch">${title}</span> …`,
              timestamp: '2025-01-01T00:00:00Z',
            })),
          },
        });
      }
      if (q.get('prop') === 'extracts') {
        const title = q.get('titles') ?? '';
        const page = this.pages.get(title);
        return void send(200, {
          batchcomplete: '',
          query: page
            ? { pages: { '1000': { pageid: 1000, ns: 0, title, extract: page.extract } } }
            : { pages: { '-1': { ns: 0, title, missing: '' } } },
        });
      }
      send(200, { error: { code: 'badvalue', info: 'Unrecognized value for parameter "action".' } });
    });
    this.server = server;
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    this.base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  }

  reset(): void {
    this.queries.length = 0;
    this.pages.clear();
    this.failWith = null;
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => this.server?.close(() => resolve()));
  }
}
