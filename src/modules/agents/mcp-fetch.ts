import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { OutboundHttp } from '../../core/http/outbound.js';

/** Headers of a fetch init as a plain record (lower-case names). */
function headerRecord(init: RequestInit | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  new Headers(init?.headers).forEach((value, name) => {
    out[name] = value;
  });
  return out;
}

/**
 * The MCP SDK's fetch, on the platform's outbound client: every hop's address checked (private ones
 * refused unless allowed), the time and the answer's size bounded, no redirect followed. A GET (the
 * server's own event stream) is answered 405 here without a request: an agent's turn needs no
 * stream that stays open, and a server that kept one open would hold a socket for nothing.
 */
export function outboundFetch(http: OutboundHttp, timeoutMs: number, credentialHeader?: string): FetchLike {
  return async (url, init) => {
    const method = (init?.method ?? 'GET').toUpperCase();
    if (method === 'GET') return new Response(null, { status: 405, statusText: 'Method Not Allowed' });
    init?.signal?.throwIfAborted();
    const body = typeof init?.body === 'string' ? init.body : undefined;
    const sent = http({
      method,
      url: url.toString(),
      headers: headerRecord(init),
      ...(body !== undefined ? { body } : {}),
      timeoutMs,
      maxRedirects: 0,
      ...(credentialHeader ? { credentialHeaders: [credentialHeader] } : {}),
    });
    const signal = init?.signal;
    const res = signal
      ? await Promise.race([
          sent,
          new Promise<never>((_, reject) => {
            if (signal.aborted) reject(signal.reason);
            signal.addEventListener('abort', () => reject(signal.reason), { once: true });
          }),
        ])
      : await sent;
    if (res.status < 200 || res.status > 599) throw new Error(`the MCP server answered HTTP ${res.status}`);
    const headers = new Headers();
    for (const [name, value] of Object.entries(res.headers)) headers.set(name, value);
    // A Response cannot carry a body with these statuses.
    const empty = res.status === 204 || res.status === 205 || res.status === 304;
    return new Response(empty ? null : (res.bytes ?? res.body), { status: res.status, headers });
  };
}
