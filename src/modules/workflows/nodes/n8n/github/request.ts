import type { OutboundResponse } from '../../../../../core/http/outbound.js';
import { redactSecrets } from '../../../../../core/redact.js';
import { NodeOperationError } from '../../../engine/node-type.js';
import type { EngineDeps, Json } from '../../../engine/types.js';
import { isSuccess, statusError } from '../http-request/response.js';

/** GitHub's API, unless the credential names a server (GitHub Enterprise: `https://host/api/v3`). */
export const GITHUB_API = 'https://api.github.com';
const TIMEOUT_MS = 30_000;
/** Items one "Return All" collects (100 pages of 100): past it the node fails, naming it. */
export const MAX_LISTED = 10_000;
const PAGE_SIZE = 100;

export interface GithubTarget {
  deps: EngineDeps;
  base: string;
  token: string;
}

export interface GithubCall {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  path: string;
  query?: Record<string, string | number | boolean | undefined>;
  body?: Record<string, unknown>;
}

/** The target of a `githubApi` credential ({accessToken, server}). */
export function targetOf(deps: EngineDeps, credential: Record<string, string>): GithubTarget {
  const token = credential.accessToken;
  if (typeof token !== 'string' || token === '')
    throw new NodeOperationError('The GitHub credential has no access token');
  const server = (credential.server || GITHUB_API).trim().replace(/\/+$/, '');
  let url: URL;
  try {
    url = new URL(server);
  } catch {
    throw new NodeOperationError(`The GitHub server '${server}' is not a valid URL`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:')
    throw new NodeOperationError(`The GitHub server '${server}' is not an http(s) URL`);
  return { deps, base: server, token };
}

function queryOf(query: GithubCall['query']): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(query ?? {})) if (v !== undefined && v !== '') q.set(k, String(v));
  const s = q.toString();
  return s === '' ? '' : `?${s}`;
}

/** GitHub's own message (`{"message": …}`) when it sent one, the token redacted and the length bounded. */
function githubMessage(body: string, token: string): string | undefined {
  try {
    const parsed = JSON.parse(body) as { message?: unknown };
    return typeof parsed.message === 'string'
      ? redactSecrets(parsed.message, [token]).slice(0, 500)
      : undefined;
  } catch {
    return undefined;
  }
}

/** n8n's NodeApiError for a refused call, GitHub's message beside it; a spent rate limit says when it resets. */
function githubError(res: OutboundResponse, token: string) {
  const remaining = res.headers['x-ratelimit-remaining'];
  if (res.status === 429 || (res.status === 403 && remaining === '0')) {
    const reset = Number(res.headers['x-ratelimit-reset']);
    const when = Number.isFinite(reset) && reset > 0 ? new Date(reset * 1_000).toISOString() : 'later';
    return new NodeOperationError(`GitHub's rate limit is used up: try again after ${when}`, {
      description: `${res.status} - ${githubMessage(res.body, token) ?? 'API rate limit exceeded'}`,
    });
  }
  const error = statusError(res, [token]);
  const message = githubMessage(res.body, token);
  return message
    ? new NodeOperationError(`${error.message}: ${message}`, { description: error.description })
    : error;
}

async function send(t: GithubTarget, call: GithubCall, query: GithubCall['query']) {
  const withBody = call.method !== 'GET' && call.body !== undefined;
  const res = await t.deps.http({
    method: call.method,
    url: `${t.base}${call.path}${queryOf(query)}`,
    headers: {
      'user-agent': 'n8n',
      accept: 'application/json',
      authorization: `token ${t.token}`,
      ...(withBody ? { 'content-type': 'application/json' } : {}),
    },
    ...(withBody ? { body: JSON.stringify(call.body) } : {}),
    timeoutMs: TIMEOUT_MS,
  });
  if (!isSuccess(res.status)) throw githubError(res, t.token);
  let json: Json = {};
  if (res.body.trim() !== '') {
    try {
      json = JSON.parse(res.body) as Json;
    } catch {
      throw new NodeOperationError('GitHub answered with something that is not JSON', {
        description: `${res.status} - ${res.body.slice(0, 300)}`,
      });
    }
  }
  return { json, link: res.headers.link ?? '' };
}

/** One call; its JSON answer (an empty answer, 204, as `{}`). */
export async function githubRequest(t: GithubTarget, call: GithubCall): Promise<Json> {
  return (await send(t, call, call.query)).json;
}

/** Every page of a list (per_page 100, while GitHub's Link header names a next page), at most MAX_LISTED items. */
export async function githubRequestAll(t: GithubTarget, call: GithubCall): Promise<Json[]> {
  const all: Json[] = [];
  for (let page = 1; ; page++) {
    const { json, link } = await send(t, call, { ...call.query, per_page: PAGE_SIZE, page });
    if (!Array.isArray(json))
      throw new NodeOperationError('GitHub answered a list with something that is not a list');
    all.push(...json);
    if (all.length > MAX_LISTED)
      throw new NodeOperationError(
        `The list holds more than ${MAX_LISTED} items: turn "Return All" off and set a limit`,
      );
    if (!/rel="next"/.test(link) || json.length === 0) return all;
  }
}
