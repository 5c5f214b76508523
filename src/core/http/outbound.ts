import { lookup as dnsLookup } from 'node:dns/promises';
import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import ipaddr from 'ipaddr.js';

export interface OutboundRequest {
  method: string;
  url: string;
  headers: Record<string, string>;
  body?: string | Buffer;
  timeoutMs: number;
  /** Headers that carry a credential (besides Authorization, Cookie…): dropped on a cross-origin redirect. */
  credentialHeaders?: string[];
  /** Redirects to follow, at most the client's limit; 0 answers the redirect itself. */
  maxRedirects?: number;
  /**
   * This response's size limit instead of the client's (a node with a configured limit of its own: the
   * S3 download). A Content-Length above it is refused before the body is read.
   */
  maxResponseBytes?: number;
  /** 'bytes': the body as `bytes` only (`body` empty), not also decoded as text (large binary files). */
  responseType?: 'text' | 'bytes';
  /**
   * The final answer's body as it arrives, when its status is 2xx (a streamed answer read while it
   * comes: a model's server-sent events); the whole body is still returned at the end.
   */
  onData?: (chunk: Buffer) => void;
  /** The caller's cancellation (a client that went away): the exchange ends at once, with an AbortError. */
  signal?: AbortSignal;
}

export interface OutboundResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
  /** The body's bytes as received (binary documents: PDFs). */
  bytes?: Buffer;
}

/** The request went to (or was redirected to) an address outbound calls may not reach. */
export class OutboundBlockedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'OutboundBlockedError';
  }
}

/** The request (all hops together) ran past its time limit. */
export class OutboundTimeoutError extends Error {
  constructor(timeoutMs: number) {
    super(`Outbound request timed out after ${timeoutMs} ms`);
    this.name = 'OutboundTimeoutError';
  }
}

interface OutboundOptions {
  /** Hosts (or host:port) exempt from the address check, e.g. `127.0.0.1:4010`, `internal.example`. */
  allowHosts: string[];
  /** Upper bound on any request's time limit (a request may ask for less). */
  timeoutMs: number;
  maxRedirects?: number;
  maxResponseBytes?: number;
}

export type OutboundHttp = (req: OutboundRequest) => Promise<OutboundResponse>;

const REDIRECTS = new Set([301, 302, 303, 307, 308]);
/** Headers that carry credentials whatever the request says. */
const CREDENTIAL_HEADERS = ['authorization', 'cookie', 'proxy-authorization'];

/**
 * True for addresses outbound calls may not reach: loopback, private, link-local (incl. the cloud
 * metadata 169.254.169.254), CGNAT, unspecified, multicast, broadcast, unique-local (incl. fd00:ec2::254)
 * and every other non-global range; IPv4-mapped IPv6 is judged as its IPv4.
 */
export function isBlockedAddress(address: string): boolean {
  if (!ipaddr.isValid(address)) return true;
  let ip = ipaddr.parse(address);
  if (ip.kind() === 'ipv6' && (ip as ipaddr.IPv6).isIPv4MappedAddress())
    ip = (ip as ipaddr.IPv6).toIPv4Address();
  return ip.range() !== 'unicast';
}

/** Outbound HTTP that checks every hop's resolved address and connects to exactly the address it checked. */
export function createOutboundHttp(options: OutboundOptions): OutboundHttp {
  const allow = new Set(options.allowHosts.map((h) => h.trim().toLowerCase()).filter((h) => h !== ''));
  const maxRedirects = options.maxRedirects ?? 5;
  const maxBytes = options.maxResponseBytes ?? 10 * 1024 * 1024;

  return async (req) => {
    const timeoutMs = Math.min(req.timeoutMs > 0 ? req.timeoutMs : options.timeoutMs, options.timeoutMs);
    const deadline = AbortSignal.timeout(timeoutMs);
    let url = parseUrl(req.url);
    let method = req.method.toUpperCase();
    let body = req.body;
    let headers = { ...req.headers };
    const limit = Math.min(Math.max(0, Math.floor(req.maxRedirects ?? maxRedirects)), maxRedirects);
    for (let hop = 0; ; hop++) {
      const target = await checkedAddress(url, allow);
      const res = await send(url, target, method, headers, body, deadline, timeoutMs, {
        maxBytes: req.maxResponseBytes && req.maxResponseBytes > 0 ? req.maxResponseBytes : maxBytes,
        bytesOnly: req.responseType === 'bytes',
        ...(req.onData ? { onData: req.onData } : {}),
        ...(req.signal ? { cancel: req.signal } : {}),
      });
      const location = res.headers.location;
      if (!REDIRECTS.has(res.status) || location === undefined || req.maxRedirects === 0) return res;
      if (hop >= limit) throw new OutboundBlockedError(`More than ${limit} redirects`);
      const next = parseUrl(new URL(location, url).toString());
      if (res.status === 303 || ((res.status === 301 || res.status === 302) && method === 'POST')) {
        method = 'GET';
        body = undefined;
        headers = withoutHeaders(headers, ['content-type', 'content-length']);
      }
      // Credentials are for the origin they were given for, as browsers and undici do: a redirect
      // elsewhere loses them, including a credential's own header (httpHeaderAuth).
      if (next.origin !== url.origin) {
        const own = (req.credentialHeaders ?? []).map((h) => h.toLowerCase());
        headers = withoutHeaders(headers, [...CREDENTIAL_HEADERS, ...own]);
      }
      url = next;
    }
  };
}

function parseUrl(raw: string): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new OutboundBlockedError(`Invalid URL '${raw}'`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new OutboundBlockedError(`Protocol ${url.protocol} is not allowed`);
  }
  return url;
}

const bareHost = (url: URL) => url.hostname.replace(/^\[|\]$/g, '').toLowerCase();

/** Where a TCP client (a database, Redis) may connect: the checked address of `host`. */
export type AddressGuard = (host: string, port: number) => Promise<string>;

/**
 * The same check as HTTP hops, for TCP clients a workflow's credential points somewhere (Postgres,
 * MySQL, Redis): private and internal addresses refused unless `allowHosts` names the host (or
 * host:port). The caller connects to the answered address, not the name, so DNS cannot change it.
 */
export function createAddressGuard(allowHosts: string[]): AddressGuard {
  return async (host, port) => (await checkedTcpTarget(host, port, allowHosts)).address;
}

async function checkedAddress(url: URL, allow: Set<string>): Promise<{ address: string; family: 4 | 6 }> {
  const port = url.port || (url.protocol === 'https:' ? '443' : '80');
  return checkedHost(bareHost(url), port, allow, url.host.toLowerCase());
}

async function checkedHost(
  host: string,
  port: string,
  allow: Set<string>,
  hostPort: string,
): Promise<{ address: string; family: 4 | 6 }> {
  const allowed = allow.has(host) || allow.has(`${host}:${port}`) || allow.has(hostPort);
  let addresses: Array<{ address: string; family: number }>;
  if (ipaddr.isValid(host)) {
    addresses = [{ address: host, family: host.includes(':') ? 6 : 4 }];
  } else {
    try {
      addresses = await dnsLookup(host, { all: true, verbatim: true });
    } catch {
      throw new OutboundBlockedError(`Host '${host}' does not resolve`);
    }
  }
  if (addresses.length === 0) throw new OutboundBlockedError(`Host '${host}' does not resolve`);
  // The refusal names the host only: what an internal name resolves to is not the caller's to learn.
  if (!allowed && addresses.some((a) => isBlockedAddress(a.address))) {
    throw new OutboundBlockedError(
      `Host '${host}' is not allowed: outbound calls may not reach private or internal addresses`,
    );
  }
  const first = addresses[0] as { address: string; family: number };
  return { address: first.address, family: first.family === 6 ? 6 : 4 };
}

/**
 * The outbound-address guard for a raw TCP destination (SSH, databases): resolves `host` and refuses
 * private or internal addresses unless `host` or `host:port` is allowed; connect to the address returned.
 */
export async function checkedTcpTarget(
  host: string,
  port: number,
  allowHosts: string[],
): Promise<{ address: string; family: 4 | 6 }> {
  if (!Number.isInteger(port) || port < 1 || port > 65_535)
    throw new OutboundBlockedError(`Invalid port ${port}`);
  const bare = host
    .trim()
    .replace(/^\[|\]$/g, '')
    .toLowerCase();
  if (bare === '') throw new OutboundBlockedError('No host given');
  const allow = new Set(allowHosts.map((h) => h.trim().toLowerCase()).filter((h) => h !== ''));
  return checkedHost(bare, String(port), allow, `${bare}:${port}`);
}

function withoutHeaders(headers: Record<string, string>, names: string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(headers)) if (!names.includes(k.toLowerCase())) out[k] = v;
  return out;
}

function send(
  url: URL,
  target: { address: string; family: 4 | 6 },
  method: string,
  headers: Record<string, string>,
  body: string | Buffer | undefined,
  deadline: AbortSignal,
  timeoutMs: number,
  {
    maxBytes,
    bytesOnly,
    onData,
    cancel,
  }: { maxBytes: number; bytesOnly: boolean; onData?: (chunk: Buffer) => void; cancel?: AbortSignal },
): Promise<OutboundResponse> {
  // Pin the connection to the address just checked: no second DNS answer can slip in (rebinding).
  const lookup: LookupFunction = (_host, opts, cb) => {
    if (opts.all) cb(null, [target]);
    else cb(null, target.address, target.family);
  };
  const client = url.protocol === 'https:' ? https : http;
  return new Promise((resolve, reject) => {
    if (deadline.aborted) {
      reject(new OutboundTimeoutError(timeoutMs));
      return;
    }
    if (cancel?.aborted) {
      reject(cancel.reason ?? new DOMException('The operation was aborted', 'AbortError'));
      return;
    }
    const req = client.request(
      url,
      {
        method,
        headers:
          body !== undefined ? { ...headers, 'content-length': String(Buffer.byteLength(body)) } : headers,
        lookup,
        signal: cancel ? AbortSignal.any([deadline, cancel]) : deadline,
      },
      (res) => {
        const status = res.statusCode ?? 0;
        const stream = status >= 200 && status < 300 ? onData : undefined;
        const chunks: Buffer[] = [];
        let size = 0;
        let tooLarge = false;
        // Announced larger than allowed: refused before a byte of the body is read.
        const announced = Number(res.headers['content-length']);
        if (Number.isFinite(announced) && announced > maxBytes && !REDIRECTS.has(res.statusCode ?? 0)) {
          tooLarge = true;
          reject(
            new OutboundBlockedError(`Response is larger than ${maxBytes} bytes (${announced} announced)`),
          );
          res.destroy();
          req.destroy();
          return;
        }
        res.on('data', (chunk: Buffer) => {
          if (tooLarge) return;
          size += chunk.length;
          if (size > maxBytes) {
            // Settle first, then end the exchange without an error argument: an error passed to
            // destroy() would surface as an uncaught exception, and `end` must not resolve a cut body.
            tooLarge = true;
            reject(new OutboundBlockedError(`Response is larger than ${maxBytes} bytes`));
            res.destroy();
            req.destroy();
            return;
          }
          chunks.push(chunk);
          stream?.(chunk);
        });
        res.on('end', () => {
          if (tooLarge) return;
          const out: Record<string, string> = {};
          for (const [k, v] of Object.entries(res.headers)) {
            if (v !== undefined) out[k] = Array.isArray(v) ? v.join(', ') : v;
          }
          const bytes = Buffer.concat(chunks);
          resolve({
            status: res.statusCode ?? 0,
            headers: out,
            body: bytesOnly ? '' : bytes.toString('utf8'),
            bytes,
          });
        });
        res.on('error', (err) => {
          if (!tooLarge) reject(deadline.aborted ? new OutboundTimeoutError(timeoutMs) : err);
        });
      },
    );
    req.on('error', (err) => reject(deadline.aborted ? new OutboundTimeoutError(timeoutMs) : err));
    req.end(body);
  });
}
