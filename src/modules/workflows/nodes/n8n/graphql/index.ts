import { Type } from 'typebox';
import type { OutboundRequest } from '../../../../../core/http/outbound.js';
import { defineNode, NodeOperationError, output } from '../../../engine/node-type.js';
import type { Item, Json, ValidationProblem } from '../../../engine/types.js';
import { credentialOf } from '../credential-of.js';

/** n8n's authentication choices and the credential type each reads; the others are refused at save. */
const AUTH_CREDENTIALS = {
  basicAuth: 'httpBasicAuth',
  headerAuth: 'httpHeaderAuth',
  queryAuth: 'httpQueryAuth',
} as const;
const AUTHENTICATIONS = [
  'none',
  'basicAuth',
  'customAuth',
  'digestAuth',
  'headerAuth',
  'queryAuth',
  'oAuth1',
  'oAuth2',
] as const;

/** Longest one request may take (the outbound client caps it further by OUTBOUND_TIMEOUT_MS). */
const TIMEOUT_MS = 30_000;

const Header = Type.Object(
  { name: Type.String({ default: '' }), value: Type.String({ default: '' }) },
  { additionalProperties: false },
);

function schemaOf(defaultFormat: 'graphql' | 'json') {
  return Type.Object(
    {
      authentication: Type.Enum(AUTHENTICATIONS, { default: 'none' }),
      requestMethod: Type.Enum(['GET', 'POST'] as const, { default: 'POST' }),
      endpoint: Type.String({ default: '' }),
      allowUnauthorizedCerts: Type.Boolean({ default: false }),
      requestFormat: Type.Enum(['graphql', 'json'] as const, { default: defaultFormat }),
      query: Type.String({ default: '' }),
      variables: Type.Union([Type.String(), Type.Record(Type.String(), Type.Unknown())], { default: '' }),
      operationName: Type.String({ default: '' }),
      responseFormat: Type.Enum(['json', 'string'] as const, { default: 'json' }),
      dataPropertyName: Type.String({ default: 'data' }),
      headerParametersUi: Type.Object(
        { parameter: Type.Optional(Type.Array(Header, { maxItems: 100 })) },
        { additionalProperties: false, default: {} },
      ),
    },
    { additionalProperties: false },
  );
}

const GraphqlV1 = schemaOf('graphql');
type Params = {
  authentication: (typeof AUTHENTICATIONS)[number];
  requestMethod: 'GET' | 'POST';
  endpoint: string;
  allowUnauthorizedCerts: boolean;
  requestFormat: 'graphql' | 'json';
  query: string;
  variables: string | Record<string, unknown>;
  operationName: string;
  responseFormat: 'json' | 'string';
  dataPropertyName: string;
  headerParametersUi: { parameter?: Array<{ name: string; value: string }> };
};

function refusals(p: Params): ValidationProblem[] {
  const problems: ValidationProblem[] = [];
  if (p.authentication !== 'none' && !(p.authentication in AUTH_CREDENTIALS))
    problems.push({
      path: 'parameters.authentication',
      message: `'${p.authentication}' is not supported here (supported: none, ${Object.keys(AUTH_CREDENTIALS).join(', ')})`,
    });
  if (p.allowUnauthorizedCerts === true)
    problems.push({
      path: 'parameters.allowUnauthorizedCerts',
      message: 'ignoring TLS certificate errors is not allowed: outbound calls always verify certificates',
    });
  return problems;
}

function variablesOf(value: string | Record<string, unknown>): Record<string, unknown> {
  if (typeof value !== 'string') return value;
  if (value.trim() === '') return {};
  try {
    const parsed: unknown = JSON.parse(value);
    if (parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed))
      return parsed as Record<string, unknown>;
  } catch {
    // reported below
  }
  throw new NodeOperationError('Using variables failed', {
    description: `The variables must be a JSON object: ${value.slice(0, 200)}`,
  });
}

/** The request n8n's GraphQL node sends for one item (credential applied). */
async function requestOf(p: Params, credential: Record<string, string> | null): Promise<OutboundRequest> {
  if (!p.endpoint) throw new NodeOperationError('The parameter "Endpoint" has to be set');
  let url: URL;
  try {
    url = new URL(p.endpoint);
  } catch {
    throw new NodeOperationError(`The endpoint '${p.endpoint}' is not a valid URL`);
  }
  const format = p.requestMethod === 'GET' ? 'json' : p.requestFormat;
  const headers: Record<string, string> = { 'content-type': `application/${format}` };
  for (const h of p.headerParametersUi.parameter ?? []) if (h.name) headers[h.name.toLowerCase()] = h.value;
  const credentialHeaders: string[] = [];
  if (credential) {
    const need = (field: string) => {
      const v = credential[field];
      if (typeof v !== 'string') throw new NodeOperationError(`The credential has no '${field}'`);
      return v;
    };
    if (p.authentication === 'basicAuth')
      headers.authorization = `Basic ${Buffer.from(`${need('user')}:${need('password')}`).toString('base64')}`;
    else if (p.authentication === 'headerAuth') {
      headers[need('name').toLowerCase()] = need('value');
      credentialHeaders.push(need('name'));
    } else if (p.authentication === 'queryAuth') url.searchParams.set(need('name'), need('value'));
  }
  if (p.requestMethod === 'GET') {
    url.searchParams.set('query', p.query);
    return { method: 'GET', url: url.toString(), headers, timeoutMs: TIMEOUT_MS, credentialHeaders };
  }
  const body =
    format === 'json'
      ? JSON.stringify({
          query: p.query,
          variables: variablesOf(p.variables),
          operationName: p.operationName === '' ? null : p.operationName,
        })
      : p.query;
  return { method: 'POST', url: url.toString(), headers, body, timeoutMs: TIMEOUT_MS, credentialHeaders };
}

/** GraphQL's `errors` (a list of `{message}`, or a string) as one node error, as n8n raises it. */
function graphqlErrors(response: Record<string, Json>): NodeOperationError | null {
  const errors = response.errors;
  if (errors === undefined || errors === null) return null;
  const messages = Array.isArray(errors)
    ? errors.map((e) =>
        e !== null && typeof e === 'object' && !Array.isArray(e) && typeof e.message === 'string'
          ? e.message
          : JSON.stringify(e),
      )
    : [typeof errors === 'string' ? errors : JSON.stringify(errors)];
  return new NodeOperationError(messages.join(', ') || 'Unexpected error', {
    description: JSON.stringify(errors).slice(0, 2_000),
  });
}

/**
 * n8n's GraphQL node (v1, v1.1): a query with variables and operation name, by POST (JSON or raw
 * GraphQL) or GET (`?query=`), through the platform's guarded outbound client; a response with
 * `errors` fails the node as n8n does.
 */
function graphqlNode(versions: number[], schema: typeof GraphqlV1) {
  return defineNode({
    type: 'n8n-nodes-base.graphql',
    versions,
    schema,
    check: (p) => refusals(p as Params),
    async execute(ctx) {
      const out: Item[] = [];
      for (let i = 0; i < ctx.items.length; i++) {
        const p = (await ctx.params(i)) as Params;
        const slot = p.authentication === 'none' ? null : AUTH_CREDENTIALS[p.authentication as 'basicAuth'];
        if (p.authentication !== 'none' && !slot)
          throw new NodeOperationError(`Authentication '${p.authentication}' is not supported here`);
        const credential = slot ? await credentialOf(ctx.node, slot, (id) => ctx.credential(id)) : null;
        const res = await ctx.deps.http(await requestOf(p, credential));
        if (p.responseFormat === 'string') {
          out.push({ json: { [p.dataPropertyName]: res.body }, pairedItem: { item: i } });
          continue;
        }
        let json: unknown;
        try {
          json = JSON.parse(res.body);
        } catch {
          throw new NodeOperationError(
            'Response body is not valid JSON. Change "Response Format" to "String"',
            {
              description: `HTTP ${res.status}`,
            },
          );
        }
        if (json === null || typeof json !== 'object' || Array.isArray(json))
          throw new NodeOperationError('The GraphQL response is not a JSON object', {
            description: `HTTP ${res.status}`,
          });
        const error = graphqlErrors(json as Record<string, Json>);
        if (error) throw error;
        if (res.status >= 400)
          throw new NodeOperationError(`The GraphQL endpoint answered HTTP ${res.status}`, {
            description: res.body.slice(0, 2_000),
          });
        out.push({ json: json as Record<string, Json>, pairedItem: { item: i } });
      }
      return output(out);
    },
  });
}

export const graphqlNodes = [
  graphqlNode([1], GraphqlV1),
  graphqlNode([1.1], schemaOf('json') as unknown as typeof GraphqlV1),
];
