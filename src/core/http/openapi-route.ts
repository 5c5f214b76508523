import type { FastifySchema, RouteOptions } from 'fastify';
import type { TSchema } from 'typebox';
import { operationFor } from '../auth/principal.js';
import type { RouteAuth } from './auth-hook.js';
import { errorFormatSchemaName } from './error-handler.js';
import { documentedSchemaOf, ErrorBody, ListQuery } from './schemas.js';

/**
 * What the document transform needs to know of a route that the generated operation no longer
 * says: carried through @fastify/swagger as an `x-` key and removed again (openapi-document.ts).
 */
export interface RouteFacts {
  /** No platform credential (`config.public`). */
  public: boolean;
  /** Public, but behind the per-IP and per-endpoint limiters. */
  limited: boolean;
  /** Customer tokens are accepted besides API keys. */
  customerToken: boolean;
  /**
   * Answers in another product's error body (a format registered with `registerErrorFormat`): the
   * name of the shared component its error schemas are written once under (`OllamaError`), or null.
   */
  compatible: string | null;
  hasBody: boolean;
  /** The body is JSON (a 415 for anything else); webhooks take any media type. */
  jsonBody: boolean;
  hasPathParams: boolean;
  hasQuery: boolean;
  /** Statuses the route's schema answers with the platform's error body. */
  errorStatuses: string[];
}

export const FACTS_KEY = 'x-platform-route';

/**
 * A schema key for rules the document states but validation leaves to the service, which checks
 * them with its own messages (a money amount's two decimals, a country code): Ajv runs with
 * `strict: false` and ignores the key; the document shows the rules in place of it.
 */
const DOCUMENTED_ONLY = 'x-documented';

/** `Type.Number({ minimum: 0, ...documentedOnly({ multipleOf: 0.01 }) })`: see DOCUMENTED_ONLY. */
export const documentedOnly = (rules: Record<string, unknown>) => ({ [DOCUMENTED_ONLY]: rules });

type Node = Record<string, unknown>;
const isNode = (value: unknown): value is Node => value !== null && typeof value === 'object';

function containsDocumented(value: unknown): boolean {
  if (!isNode(value)) return false;
  if (Object.hasOwn(value, DOCUMENTED_ONLY)) return true;
  return Object.values(value).some(containsDocumented);
}

/** A copy with every DOCUMENTED_ONLY key merged into its schema (`required` lists are joined). */
function withDocumentedRules<T>(value: T): T {
  if (Array.isArray(value)) return value.map(withDocumentedRules) as T;
  if (!isNode(value)) return value;
  const out: Node = {};
  for (const [key, child] of Object.entries(value))
    if (key !== DOCUMENTED_ONLY) out[key] = withDocumentedRules(child);
  const rules = value[DOCUMENTED_ONLY];
  if (isNode(rules))
    for (const [key, rule] of Object.entries(rules))
      out[key] =
        key === 'required' && Array.isArray(out.required) && Array.isArray(rule)
          ? [...new Set([...out.required, ...rule])]
          : rule;
  return out as T;
}

/** Route schemas are shared, often module constants: only a copy is changed, and only if needed. */
const documentedRules = <T>(schema: T): T =>
  containsDocumented(schema) ? withDocumentedRules(schema) : schema;

/**
 * The query a list route documents (schemas.ts `listQueryOf`), with what the route's validating
 * schema adds to the list's rules: its own parameters and DOCUMENTED_ONLY rules.
 */
function documentedQuery(validating: unknown): unknown {
  const shown = documentedSchemaOf(validating);
  if (shown === validating || !isNode(validating) || !isNode(shown)) return validating;
  const own = isNode(validating.properties) ? validating.properties : {};
  const listed = isNode(shown.properties) ? shown.properties : {};
  // The shared list parameters are as the list's rules show them (no `fields` where nothing projects).
  const extra = Object.fromEntries(
    Object.entries(own).filter(([name]) => !(name in listed) && !(name in ListQuery.properties)),
  );
  const rules = validating[DOCUMENTED_ONLY];
  return { ...shown, properties: { ...listed, ...extra }, ...(rules ? { [DOCUMENTED_ONLY]: rules } : {}) };
}

/** Names for wildcard path parameters: `{*}` makes generated clients call `/webhook/%7B*%7D`. */
const WILDCARD_NAMES: Record<string, string> = { '/v1/models/*': 'model' };
const wildcardName = (url: string) => WILDCARD_NAMES[url] ?? 'path';

type RouteSchema = Record<string, unknown> & {
  summary?: string;
  description?: string;
  params?: { type?: string; properties?: Record<string, unknown>; required?: string[] };
  body?: unknown;
  consumes?: string[];
  querystring?: unknown;
  response?: Record<string, unknown>;
};

/** The scope a route needs (`core:admin`), or the scopes it accepts any one of. */
function scopeText(auth: RouteAuth, method: string): string {
  if (auth.anyService) return 'No particular scope: the operation checks what the credential may do.';
  const operation = auth.operation ?? operationFor(method);
  const scopes = [operation].flat().map((op) => `\`${auth.service}:${op}\``);
  return scopes.length === 1
    ? `Requires the scope ${scopes[0]}.`
    : `Requires one of the scopes ${scopes.join(', ')}.`;
}

function credentialText(auth: RouteAuth): string {
  if (auth.principals && !auth.principals.includes('customer_token'))
    return auth.principals.includes('api_key') ? 'API keys only.' : '';
  return auth.customerFacing ? 'An API key or a customer token (acting for its customer).' : 'API keys only.';
}

/** The description a client reads: the route's own text, then who may call it and with which scope. */
function describe(schema: RouteSchema, config: { auth?: RouteAuth; public?: boolean }, method: string) {
  const own = schema.description ?? schema.summary ?? '';
  const access = config.auth
    ? [credentialText(config.auth), scopeText(config.auth, method)].filter(Boolean).join(' ')
    : 'Public: no platform credential.';
  return own ? `${own}\n\n${access}` : access;
}

/**
 * The swagger `transform`: one place that adds to every route what route files would otherwise
 * repeat (description with the scope, security, the facts the error responses are derived from),
 * and renames wildcard path parameters. Routes without a schema pass through unchanged.
 */
export function transformRoute({
  schema,
  url,
  route,
}: {
  schema: FastifySchema;
  url: string;
  route: RouteOptions;
}): {
  schema: FastifySchema;
  url: string;
} {
  const own = schema as RouteSchema | undefined;
  if (!own || own.hide) return { schema, url };
  const config = (route.config ?? {}) as {
    auth?: RouteAuth;
    public?: boolean;
    limited?: boolean;
    errorFormat?: string;
  };
  const method = [route.method].flat()[0] ?? 'GET';
  const out: RouteSchema = { ...own };
  if (own.querystring) out.querystring = documentedRules(documentedQuery(own.querystring));
  if (own.body !== undefined) out.body = documentedRules(own.body);
  if (own.params) out.params = documentedRules(own.params);
  let outUrl = url;

  if (url.endsWith('*')) {
    const name = wildcardName(url);
    outUrl = `${url.slice(0, -1)}{${name}}`;
    const wildcard = (own.params?.properties?.['*'] ?? { type: 'string' }) as Record<string, unknown>;
    out.params = { type: 'object', properties: { [name]: wildcard }, required: [name] };
  }

  // A webhook takes any body (JSON, form, text, bytes), kept raw for its signature check.
  if (url.startsWith('/webhook/') && own.body !== undefined) out.consumes = ['application/json', '*/*'];

  const compatible = errorFormatSchemaName(config.errorFormat);
  const errorStatuses: string[] = [];
  if (own.response) {
    const response: Record<string, unknown> = {};
    for (const [status, body] of Object.entries(own.response)) {
      // The platform's error body becomes a shared component response (openapi-document.ts).
      if (!compatible && (body as TSchema) === ErrorBody) errorStatuses.push(status);
      else response[status] = documentedRules(body);
    }
    out.response = response;
  }

  const auth = config.auth;
  const customerToken = Boolean(
    auth?.customerFacing && (!auth.principals || auth.principals.includes('customer_token')),
  );
  out.description = describe(own, config, method);
  // `[]` says "no credential"; the API key may also come in X-API-Key or X-WORKFLOW-API-KEY.
  out.security =
    config.public || !auth ? [] : customerToken ? [{ apiKey: [] }, { customerToken: [] }] : [{ apiKey: [] }];
  const facts: RouteFacts = {
    public: Boolean(config.public),
    limited: Boolean(config.limited),
    customerToken,
    compatible,
    hasBody: own.body !== undefined,
    jsonBody: own.body !== undefined && !url.startsWith('/webhook'),
    hasPathParams: url.includes(':') || url.endsWith('*'),
    hasQuery: own.querystring !== undefined,
    errorStatuses,
  };
  out[FACTS_KEY] = facts;
  return { schema: out, url: outUrl };
}
