import { errorComponents, errorResponseRef, errorStatuses } from './openapi-errors.js';
import { type RefResolver, sampleOf } from './openapi-examples.js';
import { FACTS_KEY, type RouteFacts } from './openapi-route.js';

type Json = Record<string, unknown>;
interface Operation extends Json {
  operationId?: string;
  responses?: Record<string, Json>;
}
export interface OpenApiObject extends Json {
  paths?: Record<string, Record<string, Operation>>;
  components?: Json & { schemas?: Json; responses?: Json };
}

const METHODS = new Set(['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace']);

/** `post /api/v1/workflows/{id}/activate` → `postApiV1WorkflowsByIdActivate`: stable and readable. */
function operationIdOf(method: string, path: string): string {
  const words = path
    .split('/')
    .filter(Boolean)
    .flatMap((segment) => {
      const param = /^\{(.+)\}$/.exec(segment);
      const parts = (param?.[1] ?? segment).split(/[^A-Za-z0-9]+/).filter(Boolean);
      const cased = parts.map((p) => p.charAt(0).toUpperCase() + p.slice(1));
      return param ? ['By', ...cased] : cased;
    });
  return method.toLowerCase() + words.join('');
}

/**
 * JSON Schema 2020-12 (OpenAPI 3.1) has no array form of `items`: TypeBox's tuples come out in the
 * draft-07 form (`items: [...]`, `additionalItems: false`), which 3.1 validators refuse.
 */
function toPrefixItems(node: unknown): void {
  if (Array.isArray(node)) {
    for (const item of node) toPrefixItems(item);
    return;
  }
  if (node === null || typeof node !== 'object') return;
  const schema = node as Json;
  if (Array.isArray(schema.items)) {
    schema.prefixItems = schema.items;
    if (schema.additionalItems === false) schema.items = false;
    else delete schema.items;
    delete schema.additionalItems;
  }
  for (const value of Object.values(schema)) toPrefixItems(value);
}

const STATUS_TEXT: Record<string, string> = {
  '200': 'OK',
  '201': 'Created',
  '202': 'Accepted: the work continues in the background',
  '204': 'Done; no content',
  '302': 'A redirect (Location)',
  '503': 'Unavailable (the body says what is down)',
};

/** @fastify/swagger's placeholder description says nothing; the status's meaning does. */
function describeResponses(responses: Record<string, Json>): void {
  for (const [status, response] of Object.entries(responses))
    if (response.description === 'Default Response') response.description = STATUS_TEXT[status] ?? status;
}

/** A response declared `contentMediaType` (an SVG, a text file) is served in that type, not JSON. */
function mediaTypes(responses: Record<string, Json>): void {
  for (const response of Object.values(responses)) {
    const content = response.content as Record<string, { schema?: Json }> | undefined;
    const schema = content?.['application/json']?.schema;
    const type = schema?.contentMediaType;
    if (content && schema && typeof type === 'string') {
      delete content['application/json'];
      content[type] = { schema };
    }
  }
}

/**
 * An absent body is validated as `{}` (src/app.ts), so a body whose fields are all optional may be
 * left out: generated clients must not insist on one.
 */
function optionalBody(op: Operation): void {
  const body = op.requestBody as
    | { required?: boolean; content?: Record<string, { schema?: Json }> }
    | undefined;
  const schema = body?.content?.['application/json']?.schema;
  if (!body || !schema) return;
  const objectLike = schema.type === 'object' || Object.keys(schema).every((k) => k === 'description');
  const required = Array.isArray(schema.required) && schema.required.length > 0;
  if (objectLike && !required) body.required = false;
}

/**
 * A compatible surface's error body (a registered format's, with the platform's fields) is written
 * once in `components.schemas` under the name the format registered, and referenced, like the
 * platform's own.
 */
function shareCompatibleErrors(name: string, op: Operation, schemas: Json): void {
  for (const [status, response] of Object.entries(op.responses ?? {})) {
    const media = (response.content as Record<string, { schema?: Json }> | undefined)?.['application/json'];
    if (!/^[45]/.test(status) || !media?.schema) continue;
    schemas[name] ??= media.schema;
    if (JSON.stringify(schemas[name]) === JSON.stringify(media.schema))
      media.schema = { $ref: `#/components/schemas/${name}` };
  }
}

/** A HEAD answer is the GET's headers without its body. */
function headOnly(op: Operation, responses: Record<string, Json>): void {
  if (typeof op.summary === 'string') op.summary = `${op.summary} (headers only)`;
  for (const response of Object.values(responses)) delete response.content;
}

function completeOperation(method: string, path: string, op: Operation, schemas: Json): void {
  const facts = op[FACTS_KEY] as RouteFacts | undefined;
  delete op[FACTS_KEY];
  op.operationId ??= operationIdOf(method, path);
  const responses = op.responses ?? {};
  op.responses = responses;
  mediaTypes(responses);
  describeResponses(responses);
  optionalBody(op);
  if (method === 'head') headOnly(op, responses);
  // 101 (a WebSocket upgrade) and 3xx (a redirect) are successes too.
  if (!Object.keys(responses).some((s) => /^[123]/.test(s)))
    responses['204'] = { description: 'Done; no content' };
  if (!facts) return;
  if (facts.compatible) {
    shareCompatibleErrors(facts.compatible, op, schemas);
    return;
  }
  for (const status of errorStatuses(method, path, facts)) responses[status] = errorResponseRef(status);
  responses['5XX'] = errorResponseRef('5XX');
}

const SCHEMA_REF = '#/components/schemas/';

/** Every JSON request body and JSON 2xx response shows an example: its own, or one from its schema. */
function addExamples(op: Operation, resolve: RefResolver): void {
  const body = (op.requestBody as { content?: Record<string, Json> } | undefined)?.content;
  const successes = Object.entries(op.responses ?? {})
    .filter(([status]) => /^2/.test(status))
    .map(([, response]) => response.content as Record<string, Json> | undefined);
  for (const content of [body, ...successes]) {
    const media = content?.['application/json'];
    if (!media || media.example !== undefined || media.examples !== undefined) continue;
    media.example = sampleOf(media.schema, resolve);
  }
}

/**
 * The swagger `transformObject`: what no single route can say. Operation ids, the shared error
 * responses, 2020-12 tuples, the components they point at, and examples.
 */
export function completeDocument(doc: OpenApiObject): OpenApiObject {
  const schemas: Json = {};
  for (const [path, item] of Object.entries(doc.paths ?? {})) {
    for (const [method, shared] of Object.entries(item)) {
      if (!METHODS.has(method)) continue;
      // The methods of one route share one object: each gets its own id and responses.
      const op = structuredClone(shared);
      item[method] = op;
      completeOperation(method, path, op, schemas);
    }
  }
  toPrefixItems(doc.paths);
  toPrefixItems(doc.components?.schemas);
  const errors = errorComponents();
  doc.components = {
    ...doc.components,
    schemas: { ...doc.components?.schemas, ...schemas, ...errors.schemas },
    responses: { ...doc.components?.responses, ...errors.responses },
  };
  const components = doc.components.schemas ?? {};
  const resolve: RefResolver = (ref) =>
    ref.startsWith(SCHEMA_REF) ? components[ref.slice(SCHEMA_REF.length)] : undefined;
  for (const item of Object.values(doc.paths ?? {}))
    for (const [method, op] of Object.entries(item)) if (METHODS.has(method)) addExamples(op, resolve);
  return doc;
}
