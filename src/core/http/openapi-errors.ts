import { ERROR_STATUS, type ErrorCode } from '../errors.js';
import type { RouteFacts } from './openapi-route.js';

/** The one error body of the platform, with `code` closed to the list of src/core/errors.ts. */
const ERROR_SCHEMA = {
  type: 'object',
  description:
    'Every error of the platform. `code` names the case (one status per code); `details` holds what the ' +
    'case needs (`fields` for VALIDATION_ERROR, `requiredScope` for FORBIDDEN, `limit` and `reset` for 429).',
  required: ['error', 'code', 'message', 'details', 'requestId'],
  properties: {
    error: { type: 'boolean', const: true },
    code: { type: 'string', enum: Object.keys(ERROR_STATUS) },
    message: { type: 'string', description: 'For people; may change between versions' },
    details: { type: 'object', additionalProperties: true },
    requestId: { type: 'string', description: 'The X-Request-Id header of the answer' },
  },
} as const;

const codesOf = (status: number) =>
  (Object.entries(ERROR_STATUS) as Array<[ErrorCode, number]>)
    .filter(([, s]) => s === status)
    .map(([code]) => code);

const RATE_HEADERS = {
  'Retry-After': {
    description: 'Seconds until the limit allows a request again',
    schema: { type: 'integer' },
  },
  'X-RateLimit-Limit': { schema: { type: 'integer' } },
  'X-RateLimit-Remaining': { schema: { type: 'integer' } },
  'X-RateLimit-Reset': { description: 'Unix seconds when the window resets', schema: { type: 'integer' } },
};

/** Component responses, by status; each points at the one Error schema. */
const RESPONSES: Record<string, { name: string; text: string; headers?: Record<string, unknown> }> = {
  '400': { name: 'BadRequest', text: 'The request is invalid; `details.fields` names each field' },
  '401': { name: 'Unauthorized', text: 'The credential is missing, malformed, unknown, revoked or expired' },
  '403': {
    name: 'Forbidden',
    text: 'The credential may not do this: service, scope, role, client address or principal kind',
  },
  '404': { name: 'NotFound', text: 'No such resource (or not visible to this credential)' },
  '405': { name: 'MethodNotAllowed', text: 'The path exists, the method does not; see the Allow header' },
  '409': { name: 'Conflict', text: 'The request conflicts with the current state' },
  '413': { name: 'PayloadTooLarge', text: 'The body is larger than the limit' },
  '415': { name: 'UnsupportedMediaType', text: 'The body is not application/json' },
  '422': { name: 'Unprocessable', text: 'Well-formed, but the platform cannot act on it' },
  '429': {
    name: 'TooManyRequests',
    text: 'A rate limit or the daily quota refused it',
    headers: RATE_HEADERS,
  },
  '5XX': { name: 'ServerError', text: 'The platform or an upstream failed; retry later' },
};

function componentResponse(status: string) {
  const entry = RESPONSES[status];
  if (!entry) throw new Error(`No error response for status ${status}`);
  const codes = status === '5XX' ? [500, 502, 503, 504].flatMap(codesOf) : codesOf(Number(status));
  return {
    description: `${entry.text}. Codes: ${codes.join(', ')}.`,
    ...(entry.headers ? { headers: entry.headers } : {}),
    content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
  };
}

export function errorComponents() {
  return {
    schemas: { Error: ERROR_SCHEMA },
    responses: Object.fromEntries(
      Object.keys(RESPONSES).map((status) => [RESPONSES[status]?.name, componentResponse(status)]),
    ),
  };
}

/**
 * Statuses an operation answers besides those its shape implies: conflicts, unprocessable
 * requests and look-ups of ids named in a body or query. Keyed by `METHOD path` as documented.
 */
/** A webhook node checks its own credential; its path answers only the method it was given. */
const WEBHOOK = [401, 403, 404, 405, 422];

const DOMAIN_STATUSES: Record<string, number[]> = {
  'PATCH /v1/api-keys/{id}': [409],
  'POST /v1/api-keys/{id}/rotate': [409],
  'POST /api/custom-blends': [404, 409, 422],
  'PATCH /api/custom-blends/{blendId}': [409, 422],
  'POST /api/custom-blends/{blendId}/test-product': [422],
  'POST /api/cart/items': [404, 409, 422],
  'PATCH /api/cart/items/{itemId}': [409, 422],
  'POST /api/cart/checkout': [409, 422],
  'POST /api/cart/discounts': [409, 422],
  'POST /api/cart/shipping-estimates': [422],
  'POST /v1/discounts': [409],
  'PUT /v1/inventory/{variantId}': [409],
  'POST /v1/orders': [404, 409, 422],
  'POST /api/v1/workflows': [409],
  // An id with a slash names n8n's version path `/api/v1/workflows/{id}/{versionId}` (GET only).
  'PUT /api/v1/workflows/{id}': [405, 409],
  'DELETE /api/v1/workflows/{id}': [405],
  'POST /api/v1/workflows/{id}/activate': [409],
  'POST /api/v1/workflows/{id}/publish': [409],
  'POST /api/v1/executions/{id}/stop': [409],
  'POST /api/v1/executions/{id}/retry': [409],
  'POST /api/v1/credentials': [409],
  'PATCH /api/v1/credentials/{id}': [409],
  'POST /api/v1/variables': [409],
  'PUT /api/v1/variables/{id}': [409],
  'POST /api/v1/tags': [409],
  'PUT /api/v1/tags/{id}': [409],
  'PUT /api/v1/workflows/{id}/tags': [404],
  // A node type or version the catalogue does not have.
  'GET /api/v1/node-types/schema': [404],
  'POST /webhook/{path}': WEBHOOK,
  'PUT /webhook/{path}': WEBHOOK,
  'PATCH /webhook/{path}': WEBHOOK,
  'GET /webhook/{path}': WEBHOOK,
  'DELETE /webhook/{path}': WEBHOOK,
  'POST /webhook-waiting/{executionId}': [401, 403, 409, 422],
  // n8n's Form node pages: signed as the resume URL; a page not reached yet or an ending (409).
  'GET /form-waiting/{executionId}': [401, 403, 422],
  'POST /form-waiting/{executionId}': [401, 403, 409, 422],
  // n8n's MCP Server Trigger: its credential, its path, and no stream or session (405).
  'POST /mcp/{path}': [401, 403, 404, 422],
  'GET /mcp/{path}': [404, 405],
  'DELETE /mcp/{path}': [404, 405],
  // Authenticated by the route itself, before the upgrade (docs/agents-websocket.md).
  'GET /api/agents/ws': [401, 403, 429],
  'GET /v1/usage': [404],
  'POST /api/documents/load': [422],
  'POST /api/documents/{id}/process': [422],
  'POST /api/knowledge/query': [409],
  'POST /api/agents': [404],
  'PATCH /api/agents/{agentId}': [404],
  'POST /api/agents/{agentId}/messages': [409],
  'POST /api/conversations': [404],
  // A pending connection that was used, expired elsewhere or never existed (docs/game.md, step 4b).
  'POST /game/oauth/complete': [404],
  // OAuth2 consent (docs/decisions.md): another member's link, or another site's form.
  'GET /oauth2-credential/start': [403],
  'POST /oauth2-credential/start': [403],
};

/** The error statuses of an operation, from how the route is protected and what it takes. */
export function errorStatuses(method: string, path: string, facts: RouteFacts): string[] {
  const statuses = new Set<string>();
  // A path that is not valid percent-encoding, a NUL, an unknown query parameter: any route.
  statuses.add('400');
  if (!facts.public) for (const s of ['401', '403', '429']) statuses.add(s);
  if (facts.limited) statuses.add('429');
  if (facts.hasPathParams) statuses.add('404');
  if (facts.hasBody) statuses.add('413');
  if (facts.jsonBody) statuses.add('415');
  for (const s of facts.errorStatuses) if (/^\d{3}$/.test(s)) statuses.add(s);
  // HEAD is the GET without its body: the same refusals.
  const key = method.toUpperCase() === 'HEAD' ? 'GET' : method.toUpperCase();
  for (const s of DOMAIN_STATUSES[`${key} ${path}`] ?? []) statuses.add(String(s));
  return [...statuses].sort();
}

export const errorResponseRef = (status: string) => ({
  $ref: `#/components/responses/${RESPONSES[status]?.name ?? RESPONSES['5XX']?.name}`,
});
