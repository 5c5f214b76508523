import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Received {
  method: string;
  path: string;
  headers: IncomingMessage['headers'];
  body: unknown;
}

export interface FakeDownstreams {
  url: string;
  received: Received[];
  /** Makes the next calls to a path prefix answer this status. */
  failNext(prefix: string, status: number): void;
  close(): Promise<void>;
}

/** Notion-style rich text. */
const text = (content: string, annotations: Record<string, boolean> = {}) => ({
  type: 'text',
  text: { content, link: null },
  annotations: {
    bold: false,
    italic: false,
    strikethrough: false,
    underline: false,
    code: false,
    color: 'default',
    ...annotations,
  },
  plain_text: content,
  href: null,
});

const block = (type: string, rich: unknown[], extra: Record<string, unknown> = {}) => ({
  object: 'block',
  id: `blk-${type}-${Math.random().toString(36).slice(2, 8)}`,
  type,
  has_children: false,
  [type]: { rich_text: rich, ...extra },
});

/**
 * One local server playing every downstream of the named workflows in its wire format: a
 * Notion-style workspace API (`/v1/pages`, `/v1/blocks/…/children`), a docs target
 * (`PUT /api/docs/pages`), the order intake (`POST /v1/orders`), user onboarding
 * (`POST /api/users`), a Flowise prediction (`POST /api/v1/prediction/{flowId}`), document
 * loading (`POST /api/documents/load`) and a completion callback (`POST /callback`).
 */
export async function startFakeDownstreams(): Promise<FakeDownstreams> {
  const received: Received[] = [];
  const failures = new Map<string, number>();
  const server: Server = createServer((req, res) => {
    let raw = '';
    req.on('data', (c: Buffer) => {
      raw += c.toString('utf8');
    });
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://x');
      const body = raw ? JSON.parse(raw) : null;
      received.push({
        method: req.method ?? '',
        path: url.pathname + url.search,
        headers: req.headers,
        body,
      });
      const send = (status: number, payload: unknown) => {
        res.statusCode = status;
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify(payload));
      };
      for (const [prefix, status] of failures) {
        if (url.pathname.startsWith(prefix)) {
          failures.delete(prefix);
          send(status, {
            object: 'error',
            status,
            code: 'internal_server_error',
            message: 'Downstream failed',
          });
          return;
        }
      }
      const p = url.pathname;
      const page = p.match(/^\/v1\/pages\/([^/]+)$/);
      const children = p.match(/^\/v1\/blocks\/([^/]+)\/children$/);
      const prediction = p.match(/^\/api\/v1\/prediction\/([^/]+)$/);
      if (req.method === 'GET' && page) {
        send(200, {
          object: 'page',
          id: page[1],
          properties: { Name: { id: 'title', type: 'title', title: [text('Release '), text('notes')] } },
        });
      } else if (req.method === 'GET' && children) {
        send(200, {
          object: 'list',
          results: [
            block('heading_1', [text('Release notes')]),
            block('paragraph', [text('Faster '), text('webhooks', { bold: true }), text('.')]),
            block('bulleted_list_item', [text('HMAC signatures')]),
            block('code', [text('npm start')], { language: 'bash' }),
          ],
          next_cursor: null,
          has_more: false,
          type: 'block',
          block: {},
        });
      } else if (req.method === 'PUT' && p === '/api/docs/pages') {
        const b = body as { path: string };
        send(200, { id: 'doc_1', path: b.path, url: `https://docs.example.com/${b.path}`, updated: true });
      } else if (req.method === 'POST' && p === '/v1/orders') {
        send(201, { id: 'ord_01', storefrontOrderId: (body as { id: string }).id, status: 'received' });
      } else if (req.method === 'POST' && p === '/api/users') {
        send(201, { id: 'usr_01', userId: (body as { userId: string }).userId, status: 'onboarding' });
      } else if (req.method === 'POST' && prediction) {
        const b = body as { question: string };
        send(200, {
          text: `Answer to: ${b.question}`,
          question: b.question,
          chatId: 'chat-1',
          chatMessageId: 'msg-1',
          sessionId: 'chat-1',
        });
      } else if (req.method === 'POST' && p === '/api/documents/load') {
        const b = body as { documentId: string; operations: string[] };
        send(200, { documentId: b.documentId, status: 'processed', operations: b.operations, chunks: 12 });
      } else if (req.method === 'POST' && p === '/callback') {
        send(200, { ok: true });
      } else {
        send(404, { error: 'not found', path: p });
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    received,
    failNext: (prefix, status) => failures.set(prefix, status),
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
