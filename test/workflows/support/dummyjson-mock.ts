import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { isDeepStrictEqual } from 'node:util';
import { createOutboundHttp } from '../../../src/core/http/outbound.js';
import type { EngineDeps } from '../../../src/modules/workflows/engine/types.js';

/**
 * n8n's HTTP Request test workflows call https://dummyjson.com; this local server answers as n8n's test
 * mocks do (HttpRequest.test.ts), and only for the request n8n's mock expects (query, header or body), so
 * a request built differently fails the fixture. Used by the HTTP fixture suite and `npm run nodes-report`.
 */

const todo1 = { id: 1, todo: 'Do something nice for someone I care about', completed: true, userId: 26 };

interface Route {
  method: string;
  path: string;
  /** The exact request body n8n's mock matches, as parsed JSON. */
  body?: unknown;
  header?: [string, string];
  reply: unknown;
  contentType?: string;
}

const ROUTES: Route[] = [
  { method: 'GET', path: '/todos/1', reply: todo1 },
  {
    method: 'GET',
    path: '/todos/3',
    header: ['authorization', 'Bearer 12345'],
    reply: { id: 3, todo: 'Watch a classic movie', completed: false, userId: 4 },
  },
  {
    method: 'GET',
    path: '/todos?limit=2&skip=10',
    reply: {
      todos: [
        { id: 11, todo: "Text a friend I haven't talked to in a long time", completed: false, userId: 39 },
        { id: 12, todo: 'Organize pantry', completed: true, userId: 39 },
      ],
      total: 150,
      skip: 10,
      limit: 2,
    },
  },
  {
    method: 'POST',
    path: '/todos/add',
    body: { todo: 'Use DummyJSON in the project', completed: false, userId: '5' },
    reply: { id: 151, todo: 'Use DummyJSON in the project', completed: false, userId: '5' },
  },
  {
    method: 'POST',
    path: '/todos/add2',
    body: { todo: 'Use DummyJSON in the project', completed: false, userId: 15 },
    reply: { id: 151, todo: 'Use DummyJSON in the project', completed: false, userId: 15 },
  },
  {
    method: 'PUT',
    path: '/todos/10',
    body: { userId: '42' },
    reply: { id: 10, todo: 'Have a football scrimmage with some friends', completed: false, userId: '42' },
  },
  {
    method: 'PATCH',
    path: '/products/1',
    body: { title: 'iPhone 12' },
    reply: {
      id: 1,
      title: 'iPhone 12',
      price: 549,
      stock: 94,
      rating: 4.69,
      images: [
        'https://i.dummyjson.com/data/products/1/1.jpg',
        'https://i.dummyjson.com/data/products/1/2.jpg',
        'https://i.dummyjson.com/data/products/1/3.jpg',
        'https://i.dummyjson.com/data/products/1/4.jpg',
        'https://i.dummyjson.com/data/products/1/thumbnail.jpg',
      ],
      thumbnail: 'https://i.dummyjson.com/data/products/1/thumbnail.jpg',
      description: 'An apple mobile which is nothing like apple',
      brand: 'Apple',
      category: 'smartphones',
    },
  },
  {
    method: 'DELETE',
    path: '/todos/1',
    reply: { ...todo1, isDeleted: true, deletedOn: '2023-02-09T05:37:31.720Z' },
  },
  {
    method: 'DELETE',
    path: '/todos/delete',
    body: { ids: [1, 2, 3] },
    reply: { deleted: [1, 2, 3], count: 3 },
  },
  { method: 'GET', path: '/html', reply: '<html><body>not json</body></html>', contentType: 'text/html' },
];

export interface DummyJson {
  /** Engine dependencies: the real outbound client, with dummyjson.com sent to the local server. */
  deps(): Partial<EngineDeps>;
  close(): Promise<void>;
}

export async function startDummyJson(): Promise<DummyJson> {
  const server = createServer((req, res) => {
    let raw = '';
    req.on('data', (c) => {
      raw += c;
    });
    req.on('end', () => {
      const route = ROUTES.find((r) => {
        if (r.method !== req.method || r.path !== req.url) return false;
        if (r.header && req.headers[r.header[0]] !== r.header[1]) return false;
        if (r.body === undefined) return true;
        try {
          return isDeepStrictEqual(JSON.parse(raw), r.body);
        } catch {
          return false;
        }
      });
      if (!route) {
        res
          .writeHead(501, { 'content-type': 'text/plain' })
          .end(`no mock for ${req.method} ${req.url} ${raw}`);
        return;
      }
      const type = route.contentType ?? 'application/json';
      res
        .writeHead(200, { 'content-type': type })
        .end(typeof route.reply === 'string' ? route.reply : JSON.stringify(route.reply));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const client = createOutboundHttp({ allowHosts: ['127.0.0.1'], timeoutMs: 5_000 });
  return {
    deps: () => ({ http: (req) => client({ ...req, url: req.url.replace('https://dummyjson.com', base) }) }),
    close: async () => {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
}
