import { createHash } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { NodeOperationError } from '../../engine/node-type.js';
import type { OutboundRequest, OutboundResponse } from '../../engine/types.js';
import { type PreparedRequest, setPath, toOutbound } from './http-request-build.js';
import {
  evaluatePaginationValue,
  PaginationExpressionError,
  type PaginationScope,
} from './http-request-pagination-expression.js';
import { bodyAsRequestParses, isSuccess, type ReceivedResponse } from './http-request-response.js';
import type { PaginationParams } from './http-request-schema.js';

export interface PaginationRun {
  send(req: OutboundRequest): Promise<OutboundResponse>;
  /** The item's json, as `$json` in the pagination expressions. */
  json: unknown;
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
    $json: run.json,
    $version: run.version,
  };
  const responses: ReceivedResponse[] = [];
  const seen = { identical: 0, length: 0, hash: '' };
  const evaluate = (value: unknown, what: string) => {
    try {
      return evaluatePaginationValue(value, scope);
    } catch (err) {
      if (!(err instanceof PaginationExpressionError)) throw err;
      throw new NodeOperationError(`Pagination ${what}: ${err.message}`);
    }
  };
  for (;;) {
    const req = applyPage(base, pagination, evaluate);
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
    if (pagination.limitPagesFetched && pagination.maxRequests && scope.$pageCount >= pagination.maxRequests)
      break;
    if (!continues(pagination, scope, run.neverError, evaluate)) break;
    if (pagination.requestInterval > 0) await sleep(pagination.requestInterval);
    if (!isSuccess(res.status)) {
      // Non-2xx answers pass while they may end the pagination; going on past one is an error.
      throw new NodeOperationError(`${res.status} - "${res.body.slice(0, 1000)}"`);
    }
  }
  return responses;
}

function continues(
  pagination: PaginationParams,
  scope: PaginationScope,
  neverError: boolean,
  evaluate: (value: unknown, what: string) => unknown,
): boolean {
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
      const complete = Boolean(evaluate(expr, 'complete expression'));
      return !complete || (!neverError && !isSuccess(res.statusCode));
    }
  }
}

/** The request for this page: the base request with the evaluated pagination parameters merged in. */
function applyPage(
  base: PreparedRequest,
  pagination: PaginationParams,
  evaluate: (value: unknown, what: string) => unknown,
): PreparedRequest {
  const req: PreparedRequest = structuredClone(base);
  if (pagination.paginationMode === 'responseContainsNextURL') {
    const next = evaluate(pagination.nextURL, 'next URL');
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
  rows.forEach((row, i) => {
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
    const value = evaluate(row.value, `parameter '${row.name}'`);
    if (row.type === 'qs') req.qs[row.name] = value;
    else if (row.type === 'headers') req.headers[row.name] = value === undefined ? '' : String(value);
    else setBodyField(req, row.name, value);
  });
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
  const body = req.body?.kind === 'json' || req.body?.kind === 'form' ? req.body.value : undefined;
  return { method: req.method, uri: req.url, url: req.url, qs: req.qs, headers, body };
}
