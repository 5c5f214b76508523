import { setTimeout as sleep } from 'node:timers/promises';
import { Value } from 'typebox/value';
import { withoutSecrets } from '../../../engine/credential-redaction.js';
import {
  defineNode,
  type NodeExecutionContext,
  NodeOperationError,
  output,
} from '../../../engine/node-type.js';
import type { Item, ValidationProblem } from '../../../engine/types.js';
import { type AppliedCredential, buildRequest, secretsOf, toOutbound } from './build.js';
import { isOAuth2Credential, oauth2Credential, sendSigned } from './oauth2.js';
import { paginate } from './pagination.js';
import { isPredefinedType, predefinedRefusal } from './predefined/index.js';
import { fileItem, isFileResponse, type ReceivedResponse, responseItems, statusError } from './response.js';
import {
  GENERIC_AUTH_TYPES,
  type GenericAuthType,
  HttpRequestV4Parameters,
  type HttpRequestV4Params,
  type PaginationParams,
  PaginationSettings,
  type ResponseParams,
} from './schema.js';

const RESPONSE_DEFAULTS: ResponseParams = {
  fullResponse: false,
  neverError: false,
  responseFormat: 'autodetect',
  outputPropertyName: 'data',
};

/**
 * n8n's HTTP Request node, typeVersion 3 and 4.0–4.4 (n8n's `HttpRequestV3` class): query, headers and
 * body as fields or JSON, generic and predefined credential types, response formats, pagination and
 * batching. What it cannot do here (proxies, client certificates, ignoring TLS errors, predefined
 * credential types not served) is refused when the workflow is saved, never skipped.
 */
export const n8nHttpRequestNode = defineNode({
  type: 'n8n-nodes-base.httpRequest',
  versions: [3, 4, 4.1, 4.2, 4.3, 4.4],
  schema: HttpRequestV4Parameters,
  // Pagination expressions read `$response` and `$pageCount`, which exist only while the node pages.
  rawParameters: ['options.pagination'],
  check: (params) => refusals(params),
  async execute(ctx) {
    const items = ctx.items;
    if (items.length === 0) return output([]);
    const version = ctx.node.typeVersion ?? 1;
    const first = await ctx.params(0);
    const credential = await credentialOf(ctx, first);
    try {
      return await requestAll(ctx, items, first, credential, version);
    } catch (error) {
      // An answer may echo what the credential injected: the error keeps the status, not the secret.
      throw withoutSecrets(error, secretsOf(credential));
    }
  },
});

/** Every item's request (and pages), in order. */
async function requestAll(
  ctx: NodeExecutionContext<HttpRequestV4Params>,
  items: Item[],
  first: HttpRequestV4Params,
  credential: AppliedCredential | null,
  version: number,
) {
  const pagination = rawPagination(ctx.node.parameters);
  const out: Item[] = [];
  for (let i = 0; i < items.length; i++) {
    const p = i === 0 ? first : await ctx.params(i);
    const batch = p.options.batching?.batch;
    // n8n pauses before every `batchSize`-th item; 0 counts as 1, -1 turns batching off.
    if (
      batch &&
      i > 0 &&
      batch.batchSize >= 0 &&
      batch.batchInterval > 0 &&
      i % Math.max(batch.batchSize, 1) === 0
    ) {
      await sleep(batch.batchInterval);
    }
    const response = { ...RESPONSE_DEFAULTS, ...p.options.response?.response };
    const req = buildRequest(p, version, credential, items[i]);
    let responses: ReceivedResponse[];
    if (pagination && pagination.paginationMode !== 'off') {
      const index = i;
      responses = await paginate(req, pagination, {
        send: (r) => sendSigned(ctx.deps.http, r, credential),
        evaluate: (source, scope) => ctx.evaluate(source, index, { ...scope }),
        version,
        neverError: response.neverError,
        autodetect: response.responseFormat === 'autodetect',
      });
    } else {
      const res = await sendSigned(ctx.deps.http, toOutbound(req), credential);
      if ((res.status < 200 || res.status >= 300) && !response.neverError)
        throw statusError(res, secretsOf(credential));
      responses = [
        {
          statusCode: res.status,
          headers: res.headers,
          text: res.body,
          ...(res.bytes ? { bytes: res.bytes } : {}),
        },
      ];
    }
    for (const res of responses) {
      if (isFileResponse(res, response)) out.push(fileItem(res, response, items[i]));
      else for (const json of responseItems(res, response)) out.push({ json });
    }
  }
  return output(out);
}

/** Pagination as stored (n8n reads it with `rawExpressions`), n8n's defaults applied. */
function rawPagination(parameters: Record<string, unknown>): PaginationParams | null {
  const options = parameters.options as { pagination?: { pagination?: unknown } } | undefined;
  const raw = options?.pagination?.pagination;
  if (raw === undefined || raw === null || typeof raw !== 'object') return null;
  return Value.Default(PaginationSettings, structuredClone(raw)) as PaginationParams;
}

/** The credential for the generic auth type; n8n exports `{type: {id, name}}`, the platform `{slot: id}`. */
async function credentialOf(
  ctx: NodeExecutionContext<HttpRequestV4Params>,
  p: HttpRequestV4Params,
): Promise<AppliedCredential | null> {
  if (p.authentication === 'none') return null;
  const type = p.authentication === 'predefinedCredentialType' ? p.nodeCredentialType : p.genericAuthType;
  const served =
    p.authentication === 'predefinedCredentialType'
      ? isPredefinedType(type) || isOAuth2Credential(type)
      : isGenericAuthType(type) || type === 'oAuth2Api';
  if (!served || typeof type !== 'string') {
    throw new NodeOperationError(
      `Authentication '${p.authentication}'${type ? ` (${type})` : ''} is not supported here`,
    );
  }
  const ref: unknown = (ctx.node.credentials as Record<string, unknown> | undefined)?.[type];
  const id =
    typeof ref === 'string'
      ? ref
      : ref !== null && typeof ref === 'object' && typeof (ref as { id?: unknown }).id === 'string'
        ? (ref as { id: string }).id
        : undefined;
  if (id === undefined) throw new NodeOperationError(`Node does not have any credentials set for "${type}"`);
  if (isOAuth2Credential(type)) return oauth2Credential(ctx, type, id);
  return { type, data: await ctx.credential(id) };
}

const isGenericAuthType = (t: unknown): t is GenericAuthType =>
  typeof t === 'string' && (GENERIC_AUTH_TYPES as readonly string[]).includes(t);

/** What n8n can do but this platform cannot (yet, or on purpose): a 400 at save time naming each. */
function refusals(p: HttpRequestV4Params): ValidationProblem[] {
  const problems: ValidationProblem[] = [];
  const refuse = (path: string, message: string) => problems.push({ path: `parameters.${path}`, message });
  if (
    p.authentication === 'predefinedCredentialType' &&
    !isPredefinedType(p.nodeCredentialType) &&
    !isOAuth2Credential(p.nodeCredentialType)
  ) {
    refuse('nodeCredentialType', predefinedRefusal(p.nodeCredentialType));
  } else if (
    p.authentication === 'genericCredentialType' &&
    !isGenericAuthType(p.genericAuthType) &&
    p.genericAuthType !== 'oAuth2Api'
  ) {
    refuse(
      'genericAuthType',
      `'${p.genericAuthType ?? ''}' is not supported here (supported: ${[...GENERIC_AUTH_TYPES, 'oAuth2Api'].join(', ')})`,
    );
  }
  if (p.provideSslCertificates)
    refuse('provideSslCertificates', 'client certificates are not supported here');
  const o = p.options;
  if (o.allowUnauthorizedCerts) {
    refuse(
      'options.allowUnauthorizedCerts',
      'ignoring TLS certificate errors is not allowed: outbound calls always verify certificates',
    );
  }
  if (o.proxy)
    refuse('options.proxy', 'proxies are not supported: outbound calls go through the platform guard');
  if (o.sendCredentialsOnCrossOriginRedirect) {
    refuse(
      'options.sendCredentialsOnCrossOriginRedirect',
      'credentials are never sent on a redirect to another origin here',
    );
  }
  return problems;
}
