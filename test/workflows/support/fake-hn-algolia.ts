import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One story as the Algolia Hacker News API lists it in `hits`. */
export function hnHit(n: number): Record<string, unknown> {
  return {
    created_at: `2024-01-${String((n % 28) + 1).padStart(2, '0')}T10:00:00.000Z`,
    title: `Story ${n}`,
    url: `https://example.com/${n}`,
    author: `user${n}`,
    points: 5_000 - n,
    story_text: null,
    num_comments: n * 3,
    created_at_i: 1_704_103_200 + n,
    _tags: ['story', `author_user${n}`, `story_${n}`],
    objectID: String(n),
    _highlightResult: {
      title: { value: `Story ${n}`, matchLevel: 'none', matchedWords: [] },
      url: { value: `https://example.com/${n}`, matchLevel: 'none', matchedWords: [] },
      author: { value: `user${n}`, matchLevel: 'none', matchedWords: [] },
    },
  };
}

/**
 * A local Algolia Hacker News API (`/api/v1/search`, `/api/v1/items/:id`, `/api/v1/users/:name`) in its
 * JSON shapes: search pages by `hitsPerPage` and `page` over `total` stories. Records every request.
 */
export class FakeHnAlgolia {
  readonly requests: string[] = [];
  total = 120;
  base = '';
  private server: Server | null = null;

  async start(): Promise<void> {
    const server = createServer((req, res) => {
      this.requests.push(req.url ?? '');
      const url = new URL(req.url ?? '/', 'http://x');
      const send = (status: number, body: unknown) =>
        res
          .writeHead(status, { 'content-type': 'application/json; charset=utf-8' })
          .end(JSON.stringify(body));
      if (url.pathname === '/api/v1/search') {
        const perPage = Number(url.searchParams.get('hitsPerPage') ?? 20);
        const page = Number(url.searchParams.get('page') ?? 0);
        const from = page * perPage;
        const count = Math.max(0, Math.min(perPage, this.total - from));
        return void send(200, {
          hits: Array.from({ length: count }, (_, i) => hnHit(from + i + 1)),
          nbHits: this.total,
          page,
          nbPages: Math.ceil(this.total / perPage),
          hitsPerPage: perPage,
          exhaustiveNbHits: true,
          query: url.searchParams.get('query') ?? '',
          params: url.search.slice(1),
          processingTimeMS: 1,
        });
      }
      const item = /^\/api\/v1\/items\/(\d+)$/.exec(url.pathname);
      if (item)
        return void send(200, {
          id: Number(item[1]),
          created_at: '2024-01-01T10:00:00.000Z',
          type: 'story',
          author: 'pg',
          title: 'An article',
          url: 'https://example.com/a',
          points: 42,
          parent_id: null,
          children: [{ id: 2, type: 'comment', author: 'x', text: 'First', children: [] }],
        });
      if (url.pathname === '/api/v1/users/pg')
        return void send(200, { username: 'pg', about: 'Bug fixer.', karma: 157_236 });
      send(404, { error: 'Not Found' });
    });
    this.server = server;
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    this.base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  }

  reset(): void {
    this.requests.length = 0;
    this.total = 120;
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => this.server?.close(() => resolve()));
  }
}
