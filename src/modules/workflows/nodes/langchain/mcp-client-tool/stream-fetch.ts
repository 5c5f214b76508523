import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import { Readable } from 'node:stream';
import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';

/** Where a client may connect for `host`: the checked address (EngineDeps.connectAddress). */
type AddressGuard = (host: string, port: number) => Promise<string>;

/**
 * A fetch for the event stream of an MCP server on the HTTP+SSE transport: the one request the
 * buffered outbound client cannot make, as it stays open. The host is checked by the outbound-address
 * guard and the connection pinned to the checked address (no second DNS answer); the answer's head
 * must come within `timeoutMs`, and the stream carries at most `maxBytes` before it is cut. No
 * redirect is followed. The stream ends when the SDK's transport closes (its abort signal).
 */
export function guardedStreamFetch(
  guard: AddressGuard,
  { timeoutMs, maxBytes }: { timeoutMs: number; maxBytes: number },
): FetchLike {
  return async (input, init) => {
    const url = new URL(input.toString());
    if (url.protocol !== 'http:' && url.protocol !== 'https:')
      throw new Error(`Protocol ${url.protocol} is not allowed`);
    const port = Number(url.port || (url.protocol === 'https:' ? 443 : 80));
    const address = await guard(url.hostname.replace(/^\[|\]$/g, ''), port);
    const family: 4 | 6 = address.includes(':') ? 6 : 4;
    const lookup: LookupFunction = (_host, opts, cb) => {
      if (opts.all) cb(null, [{ address, family }]);
      else cb(null, address, family);
    };
    const headers: Record<string, string> = {};
    new Headers(init?.headers).forEach((value, name) => {
      headers[name] = value;
    });
    const client = url.protocol === 'https:' ? https : http;
    const signal = init?.signal ?? undefined;
    return new Promise<Response>((resolve, reject) => {
      const req = client.request(url, {
        method: (init?.method ?? 'GET').toUpperCase(),
        headers,
        lookup,
        ...(signal ? { signal } : {}),
      });
      const timer = setTimeout(() => {
        req.destroy();
        reject(new Error(`the MCP server did not answer within ${timeoutMs} ms`));
      }, timeoutMs);
      req.on('error', (error) => {
        clearTimeout(timer);
        reject(error);
      });
      req.on('response', (res) => {
        clearTimeout(timer);
        let size = 0;
        res.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > maxBytes) res.destroy(new Error(`the MCP server's stream passed ${maxBytes} bytes`));
        });
        const out = new Headers();
        for (const [name, value] of Object.entries(res.headers))
          if (value !== undefined) out.set(name, Array.isArray(value) ? value.join(', ') : value);
        const status = res.statusCode ?? 0;
        if (status < 200 || status > 599) {
          res.destroy();
          reject(new Error(`the MCP server answered HTTP ${status}`));
          return;
        }
        const empty = status === 204 || status === 205 || status === 304;
        resolve(
          new Response(empty ? null : (Readable.toWeb(res) as ReadableStream<Uint8Array>), {
            status,
            headers: out,
          }),
        );
      });
      req.end();
    });
  };
}
