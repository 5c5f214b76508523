import { createHash } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { isExpression } from '../../../engine/expressions.js';
import { NodeOperationError } from '../../../engine/node-type.js';
import type { OutboundRequest, OutboundResponse } from '../../../engine/types.js';
import { type PreparedRequest, setPath, toOutbound } from './build.js';
import { bodyAsRequestParses, isSuccess, type ReceivedResponse } from './response.js';
import type { PaginationParams } from './schema.js';

/** What n8n binds in pagination expressions besides the item's data. */
interface PaginationScope {
  $response: unknown;
  $pageCount: number;
  $request: unknown;
  $version: number;
}

export interface PaginationRun {
  send(req: OutboundRequest): Promise<OutboundResponse>;
  /** Evaluates a pagination expression over the item in the expression sandbox, with the scope bound. */
  evaluate(source: string, scope: PaginationScope): Promise<unknown>;
  /** The node's typeVersion, as `$version`. */
  version: number;
  neverError: boolean;
  /** Autodetect reads `$response.body` by content type; a set format as request-promise parses it. */
  autodetect: boolean;
}

/**
 * n8n's paginated request: before each request the pagination parameters are evaluated with the
 * previous `$response` and `$pageCount` and merged into the request; after it, the page count limit,
 * then the "complete when" condition decide whether another request follows. Every response is kept.
 */
export async function paginate(
  base: PreparedRequest,
  pagination: PaginationParams,
  run: PaginationRun,
): Promise<ReceivedResponse[]> {
  const scope: PaginationScope = {
    $response: {},
    $pageCount: 0,
    $request: requestView(base),
    $version: run.version,
  };
  const responses: ReceivedResponse[] = [];
  const seen = { identical: 0, length: 0, hash: '' };
  // n8n's expressions in full (the node's rawExpressions), in the sandbox like any other; a plain
  // value is itself.
  const evaluate: Evaluate = async (value, what) => {
    if (typeof value !== 'string' || !isExpression(value)) return value;
    try {
      return await run.evaluate(value, scope);
    } catch (err) {
      throw new NodeOperationError(`Pagination ${what}: ${(err as Error).message}`);
    }
  };
  const maxRequests = Number(await evaluate(pagination.maxRequests, 'max requests'));
  if (pagination.limitPagesFetched && Number.isNaN(maxRequests))
    throw new NodeOperationError(
      `Pagination max requests must be a number (got '${String(pagination.maxRequests)}')`,
    );
  for (;;) {
    const req = await applyPage(base, pagination, evaluate, scope.$pageCount === 0);
    const res = await run.send(toOutbound(req));
    const contentType = res.headers['content-type'] ?? '';
    const body = run.autodetect
      ? contentType.includes('application/json')
        ? parseOr(res.body, {})
        : res.body
      : bodyAsRequestParses(res.body);
    checkIdentical(seen, res);
    responses.push({
      statusCode: res.status,
      headers: res.headers,
      text: res.body,
      body,
      ...(res.bytes ? { bytes: res.bytes } : {}),
    });
    scope.$response = { body, headers: res.headers, statusCode: res.status };
    scope.$pageCount += 1;
    if (pagination.limitPagesFetched && maxRequests > 0 && scope.$pageCount >= maxRequests) break;
    if (!(await continues(pagination, scope, run.neverError, evaluate))) break;
    if (pagination.requestInterval > 0) await sleep(pagination.requestInterval);
    if (!isSuccess(res.status)) {
      // Non-2xx answers pass while they may end the pagination; going on past one is an error.
      throw new NodeOperationError(`${res.status} - "${res.body.slice(0, 1000)}"`);
    }
  }
  return responses;
}

type Evaluate = (value: unknown, what: string) => Promise<unknown>;

async function continues(
  pagination: PaginationParams,
  scope: PaginationScope,
  neverError: boolean,
  evaluate: Evaluate,
): Promise<boolean> {
  const res = scope.$response as { body: unknown; statusCode: number };
  switch (pagination.paginationCompleteWhen) {
    case 'receiveSpecificStatusCodes': {
      const codes = pagination.statusCodesWhenComplete.split(',').map((c) => Number.parseInt(c.trim(), 10));
      return !codes.includes(res.statusCode);
    }
    case 'responseIsEmpty':
      return Array.isArray(res.body) ? res.body.length > 0 : Boolean(res.body);
    case 'other': {
      const expr = pagination.completeExpression;
      if (typeof expr !== 'string' || !expr.startsWith('=')) {
        throw new NodeOperationError('Invalid or empty Complete Expression');
      }
      const complete = Boolean(await evaluate(expr, 'complete expression'));
      return !complete || (!neverError && !isSuccess(res.statusCode));
    }
  }
}

/** The request for this page: the base request with the evaluated pagination parameters merged in. */
async function applyPage(
  base: PreparedRequest,
  pagination: PaginationParams,
  evaluate: Evaluate,
  first: boolean,
): Promise<PreparedRequest> {
  const req: PreparedRequest = structuredClone(base);
  if (pagination.paginationMode === 'responseContainsNextURL') {
    // The first request goes to the node's URL: the next one comes from its response.
    if (first) return req;
    const next = await evaluate(pagination.nextURL, 'next URL');
    if (next !== undefined && next !== null) {
      let parsed: URL;
      try {
        parsed = new URL(String(next));
      } catch {
        throw new NodeOperationError(`'${String(next)}' is not a valid URL.`, {
          description: 'Make sure the "Next URL" parameter evaluates to a valid URL.',
        });
      }
      req.url = String(next);
      // A full next URL carries its own query: its keys are not sent twice.
      for (const key of parsed.searchParams.keys()) delete req.qs[key];
    }
    return req;
  }
  const rows = pagination.parameters.parameters;
  if (rows.length === 1 && rows[0]?.name === '' && rows[0]?.value === '') {
    throw new NodeOperationError(
      "At least one entry with 'Name' and 'Value' filled must be included in 'Parameters' to use 'Update a Parameter in Each Request' mode ",
    );
  }
  for (const [i, row] of rows.entries()) {
    if (row.name === '') {
      throw new NodeOperationError(
        `Parameter name must be set for parameter [${i + 1}] in pagination settings`,
      );
    }
    if (row.value === '') {
      throw new NodeOperationError(
        `Some value must be provided for parameter [${i + 1}] in pagination settings, omitting it will result in an infinite loop`,
      );
    }
    const value = await evaluate(row.value, `parameter '${row.name}'`);
    if (row.type === 'qs') req.qs[row.name] = value;
    else if (row.type === 'headers') req.headers[row.name] = value === undefined ? '' : String(value);
    else setBodyField(req, row.name, value);
  }
  return req;
}

function setBodyField(req: PreparedRequest, name: string, value: unknown): void {
  const body = req.body;
  if (body === undefined) {
    req.body = { kind: 'json', value: { [name]: value } };
  } else if (body.kind === 'json' || body.kind === 'form') {
    const target = body.value !== null && typeof body.value === 'object' ? body.value : {};
    setPath(target as Record<string, unknown>, name, value);
    body.value = target as Record<string, unknown>;
  } else if (body.kind === 'multipart') {
    body.fields = [...body.fields.filter(([n]) => n !== name), [name, value]];
  } else {
    throw new NodeOperationError('Pagination cannot set a body parameter on a raw body');
  }
}

/** n8n stops when the same answer (by content length, then ETag or body hash) comes 3 times more. */
function checkIdentical(
  seen: { identical: number; length: number; hash: string },
  res: OutboundResponse,
): void {
  const length = Number.parseInt(res.headers['content-length'] ?? '0', 10) || 0;
  if (seen.length === length) {
    const hash = res.headers.etag ?? createHash('md5').update(res.body).digest('base64');
    if (seen.hash === hash) {
      seen.identical += 1;
      if (seen.identical > 2) {
        throw new NodeOperationError('The returned response was identical 5x, so requests got stopped', {
          description: 'Check if "Pagination Completed When" has been configured correctly.',
        });
      }
    } else {
      seen.identical = 0;
    }
    seen.hash = hash;
  } else {
    seen.identical = 0;
  }
  seen.length = length;
}

function parseOr(text: string, fallback: unknown): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return fallback;
  }
}

/** `$request`: the first request, credentials hidden as n8n shows it. */
function requestView(req: PreparedRequest): Record<string, unknown> {
  const hidden = new Set(req.credentialHeaders.map((h) => h.toLowerCase()));
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(req.headers))
    headers[k] = hidden.has(k.toLowerCase()) ? '**hidden**' : v;
  const secretQuery = new Set(req.credentialQuery ?? []);
  const qs = Object.fromEntries(
    Object.entries(req.qs).map(([k, v]) => [k, secretQuery.has(k) ? '**hidden**' : v]),
  );
  const body = req.body?.kind === 'json' || req.body?.kind === 'form' ? req.body.value : undefined;
  return { method: req.method, uri: req.url, url: req.url, qs, headers, body };
}
