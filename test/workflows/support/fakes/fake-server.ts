import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One request a fake downstream received. */
export interface ReceivedRequest {
  method: string;
  /** Path without the query string. */
  path: string;
  query: Record<string, string>;
  /** Lower-case names, as node:http gives them. */
  headers: IncomingHttpHeaders;
  /** Parsed JSON when the body is JSON, else the text; null when empty. */
  body: unknown;
  rawBody: string;
}

/** What a handler answers: a status and a JSON body (or text with `text: true`). */
export interface FakeReply {
  status: number;
  body?: unknown;
  text?: boolean;
  headers?: Record<string, string>;
}

export interface FakeServer {
  /** Base URL, e.g. `http://127.0.0.1:41234` (a fake may add a path, such as the workspace's `/v1`). */
  url: string;
  /** Every request in arrival order. */
  received: ReceivedRequest[];
  /** The next `times` requests whose path starts with `prefix` answer `status` with an error body. */
  failNext(prefix: string, status: number, times?: number): void;
  close(): Promise<void>;
}

export type FakeHandler = (req: ReceivedRequest) => FakeReply | Promise<FakeReply>;

export const json = (status: number, body: unknown): FakeReply => ({ status, body });

/** `Authorization: Bearer <token>` check; undefined when fine, else a 401 reply. */
export function bearerCheck(req: ReceivedRequest, token: string | undefined): FakeReply | undefined {
  if (token === undefined || req.headers.authorization === `Bearer ${token}`) return undefined;
  return json(401, { error: 'unauthorized', message: 'Missing or wrong bearer token' });
}

/**
 * A local HTTP server on 127.0.0.1 (random port) that records every request and answers through
 * `handler`. `errorBody` shapes the body of `failNext` answers in the downstream's own error format.
 */
export async function startFakeServer(
  handler: FakeHandler,
  errorBody: (status: number) => unknown = (status) => ({ error: 'Downstream failed', status }),
): Promise<FakeServer> {
  const received: ReceivedRequest[] = [];
  const failures: Array<{ prefix: string; status: number; left: number }> = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const rawBody = Buffer.concat(chunks).toString('utf8');
      const url = new URL(req.url ?? '/', 'http://fake.local');
      let body: unknown = null;
      if (rawBody !== '') {
        try {
          body = JSON.parse(rawBody);
        } catch {
          body = rawBody;
        }
      }
      const request: ReceivedRequest = {
        method: req.method ?? '',
        path: url.pathname,
        query: Object.fromEntries(url.searchParams),
        headers: req.headers,
        body,
        rawBody,
      };
      received.push(request);
      const send = (reply: FakeReply) => {
        res.statusCode = reply.status;
        for (const [k, v] of Object.entries(reply.headers ?? {})) res.setHeader(k, v);
        if (reply.body === undefined) {
          res.end();
          return;
        }
        if (reply.text) {
          if (!res.hasHeader('content-type')) res.setHeader('content-type', 'text/plain; charset=utf-8');
          res.end(String(reply.body));
          return;
        }
        res.setHeader('content-type', 'application/json; charset=utf-8');
        res.end(JSON.stringify(reply.body));
      };
      const failure = failures.find((f) => request.path.startsWith(f.prefix));
      if (failure) {
        failure.left -= 1;
        if (failure.left <= 0) failures.splice(failures.indexOf(failure), 1);
        send(json(failure.status, errorBody(failure.status)));
        return;
      }
      Promise.resolve()
        .then(() => handler(request))
        .then(send, (err: unknown) => send(json(500, { error: String(err) })));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    received,
    failNext(prefix, status, times = 1) {
      failures.push({ prefix, status, left: times });
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
