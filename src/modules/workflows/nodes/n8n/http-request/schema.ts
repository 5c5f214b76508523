import { type Static, Type } from 'typebox';
import { hiddenWhen, shownWhen, shownWhenAny } from '../../../engine/display-options.js';

/**
 * n8n's HTTP Request parameters as its `HttpRequestV3` class describes them (typeVersion 3 and 4.x).
 * n8n leaves out values equal to their defaults when it exports, so the defaults are n8n's. Options whose
 * default n8n's code reads from "absent" (timeout, redirects, array format) have none here: the node
 * decides from absence as n8n does. `displayOptions` are n8n's (its `HttpRequestV3` description).
 */

const closed = { additionalProperties: false } as const;

/** `{ name, value }` rows of a fixedCollection; a value may be any JSON once expressions ran. */
const pairs = (options: object = {}) =>
  Type.Object(
    {
      parameters: Type.Array(
        Type.Object({ name: Type.String({ default: '' }), value: Type.Unknown({ default: '' }) }, closed),
        { default: [] },
      ),
    },
    { ...closed, ...options },
  );

/** Body rows: multipart rows also say whether they are a field or a binary file. */
const bodyRows = Type.Object(
  {
    parameters: Type.Array(
      Type.Object(
        {
          name: Type.String({ default: '' }),
          // Multipart rows only: a field (the default) or a binary file of the item.
          value: Type.Unknown({ default: '', ...hiddenWhen({ parameterType: ['formBinaryData'] }) }),
          parameterType: Type.Optional(
            Type.Enum(['formData', 'formBinaryData'] as const, {
              ...shownWhen({ '/contentType': ['multipart-form-data'] }),
            }),
          ),
          inputDataFieldName: Type.Optional(Type.String(shownWhen({ parameterType: ['formBinaryData'] }))),
        },
        closed,
      ),
      { default: [] },
    ),
  },
  {
    ...closed,
    ...shownWhenAny(
      { show: { sendBody: [true], contentType: ['json'], specifyBody: ['keypair'] } },
      { show: { sendBody: [true], contentType: ['multipart-form-data'] } },
      { show: { sendBody: [true], contentType: ['form-urlencoded'], specifyBody: ['keypair'] } },
    ),
  },
);

const responseOptions = Type.Object(
  {
    response: Type.Object(
      {
        fullResponse: Type.Boolean({ default: false }),
        neverError: Type.Boolean({ default: false }),
        responseFormat: Type.Enum(['autodetect', 'file', 'json', 'text'] as const, { default: 'autodetect' }),
        outputPropertyName: Type.String({
          default: 'data',
          ...shownWhen({ responseFormat: ['file', 'text'] }),
        }),
      },
      closed,
    ),
  },
  closed,
);

/** Read raw (n8n's `rawExpressions`): its expressions see `$response`, `$pageCount`, `$request`. */
export const PaginationSettings = Type.Object(
  {
    paginationMode: Type.Enum(['off', 'updateAParameterInEachRequest', 'responseContainsNextURL'] as const, {
      default: 'updateAParameterInEachRequest',
    }),
    webhookNotice: Type.Optional(Type.String(hiddenWhen({ paginationMode: ['off'] }))),
    nextURL: Type.Unknown({ default: '', ...shownWhen({ paginationMode: ['responseContainsNextURL'] }) }),
    parameters: Type.Object(
      {
        parameters: Type.Array(
          Type.Object(
            {
              type: Type.Enum(['body', 'headers', 'qs'] as const, { default: 'qs' }),
              name: Type.String({ default: '' }),
              value: Type.Unknown({ default: '' }),
            },
            closed,
          ),
          { default: [] },
        ),
      },
      {
        ...closed,
        default: { parameters: [{ type: 'qs', name: '', value: '' }] },
        ...shownWhen({ paginationMode: ['updateAParameterInEachRequest'] }),
      },
    ),
    paginationCompleteWhen: Type.Enum(['responseIsEmpty', 'receiveSpecificStatusCodes', 'other'] as const, {
      default: 'responseIsEmpty',
      ...hiddenWhen({ paginationMode: ['off'] }),
    }),
    statusCodesWhenComplete: Type.String({
      default: '',
      ...shownWhen({ paginationCompleteWhen: ['receiveSpecificStatusCodes'] }),
    }),
    completeExpression: Type.Unknown({ default: '', ...shownWhen({ paginationCompleteWhen: ['other'] }) }),
    limitPagesFetched: Type.Boolean({ default: false, ...hiddenWhen({ paginationMode: ['off'] }) }),
    // Templates set it from the item (`={{ $json.max_page }}`); pagination is read raw, so evaluated there.
    maxRequests: Type.Union([Type.Number(), Type.String({ pattern: '^=' })], {
      default: 100,
      ...shownWhen({ limitPagesFetched: [true] }),
    }),
    requestInterval: Type.Number({ minimum: 0, default: 0, ...hiddenWhen({ paginationMode: ['off'] }) }),
  },
  closed,
);

const paginationOptions = Type.Object({ pagination: PaginationSettings }, closed);

export const HttpRequestV4Parameters = Type.Object(
  {
    curlImport: Type.Optional(Type.Literal('')),
    infoMessage: Type.Optional(Type.String()),
    googleApiWarning: Type.Optional(Type.String(shownWhen({ nodeCredentialType: ['googleApi'] }))),
    provideSslCertificatesNotice: Type.Optional(Type.String(shownWhen({ provideSslCertificates: [true] }))),
    /**
     * n8n's credential-only variants (an HTTP Request for one product's credential) add a notice
     * (`httpVariantWarning`) and a nameless credentials field (`""`); exports carry both, empty.
     */
    httpVariantWarning: Type.Optional(Type.String({ maxLength: 10_000 })),
    '': Type.Optional(Type.Literal('')),
    method: Type.Enum(['DELETE', 'GET', 'HEAD', 'OPTIONS', 'PATCH', 'POST', 'PUT'] as const, {
      default: 'GET',
    }),
    url: Type.Unknown({ default: '' }),
    authentication: Type.Enum(['none', 'predefinedCredentialType', 'genericCredentialType'] as const, {
      default: 'none',
    }),
    nodeCredentialType: Type.Optional(
      Type.String(shownWhen({ authentication: ['predefinedCredentialType'] })),
    ),
    genericAuthType: Type.Optional(Type.String(shownWhen({ authentication: ['genericCredentialType'] }))),
    provideSslCertificates: Type.Boolean({ default: false }),
    sendQuery: Type.Boolean({ default: false }),
    specifyQuery: Type.Enum(['keypair', 'json'] as const, {
      default: 'keypair',
      ...shownWhen({ sendQuery: [true] }),
    }),
    queryParameters: Type.Optional(pairs(shownWhen({ sendQuery: [true], specifyQuery: ['keypair'] }))),
    jsonQuery: Type.Unknown({ default: '', ...shownWhen({ sendQuery: [true], specifyQuery: ['json'] }) }),
    sendHeaders: Type.Boolean({ default: false }),
    specifyHeaders: Type.Enum(['keypair', 'json'] as const, {
      default: 'keypair',
      ...shownWhen({ sendHeaders: [true] }),
    }),
    headerParameters: Type.Optional(pairs(shownWhen({ sendHeaders: [true], specifyHeaders: ['keypair'] }))),
    jsonHeaders: Type.Unknown({
      default: '',
      ...shownWhen({ sendHeaders: [true], specifyHeaders: ['json'] }),
    }),
    sendBody: Type.Boolean({ default: false }),
    contentType: Type.Enum(['json', 'form-urlencoded', 'multipart-form-data', 'raw', 'binaryData'] as const, {
      default: 'json',
      ...shownWhen({ sendBody: [true] }),
    }),
    specifyBody: Type.Enum(['keypair', 'json', 'string'] as const, {
      default: 'keypair',
      ...shownWhen({ sendBody: [true], contentType: ['json', 'form-urlencoded'] }),
    }),
    bodyParameters: Type.Optional(bodyRows),
    jsonBody: Type.Unknown({
      default: '',
      ...shownWhen({ sendBody: [true], contentType: ['json'], specifyBody: ['json'] }),
    }),
    body: Type.Unknown({
      default: '',
      ...shownWhenAny(
        { show: { sendBody: [true], specifyBody: ['string'] } },
        { show: { sendBody: [true], contentType: ['raw'] } },
      ),
    }),
    inputDataFieldName: Type.Optional(
      Type.String(shownWhen({ sendBody: [true], contentType: ['binaryData'] })),
    ),
    rawContentType: Type.String({ default: '', ...shownWhen({ sendBody: [true], contentType: ['raw'] }) }),
    options: Type.Object(
      {
        batching: Type.Optional(
          Type.Object(
            {
              batch: Type.Object(
                {
                  batchSize: Type.Number({ minimum: -1, default: 50 }),
                  batchInterval: Type.Number({ minimum: 0, default: 1000 }),
                },
                { ...closed, default: {} },
              ),
            },
            closed,
          ),
        ),
        allowUnauthorizedCerts: Type.Optional(Type.Boolean()),
        requestUncompressedResponse: Type.Optional(Type.Boolean()),
        queryParameterArrays: Type.Optional(
          Type.Enum(['repeat', 'brackets', 'indices'] as const, shownWhen({ '/sendQuery': [true] })),
        ),
        lowercaseHeaders: Type.Boolean({ default: true }),
        redirect: Type.Optional(
          Type.Object(
            {
              redirect: Type.Object(
                {
                  followRedirects: Type.Optional(Type.Boolean()),
                  // n8n's v4 follows by default (v3 did not): shown unless following is off.
                  maxRedirects: Type.Number({
                    default: 21,
                    ...shownWhen({ followRedirects: [{ _cnd: { not: false } }] }),
                  }),
                },
                { ...closed, default: {} },
              ),
            },
            closed,
          ),
        ),
        response: Type.Optional(responseOptions),
        pagination: Type.Optional(paginationOptions),
        proxy: Type.Optional(Type.String()),
        timeout: Type.Optional(Type.Number({ minimum: 1 })),
        sendCredentialsOnCrossOriginRedirect: Type.Optional(Type.Boolean()),
      },
      { ...closed, default: {} },
    ),
  },
  closed,
);

export type HttpRequestV4Params = Static<typeof HttpRequestV4Parameters>;
export type PaginationParams = Static<typeof PaginationSettings>;
export type ResponseParams = NonNullable<HttpRequestV4Params['options']['response']>['response'];

/** The generic credential types this node can apply (n8n's `genericAuthType` values we implement). */
export const GENERIC_AUTH_TYPES = [
  'httpBasicAuth',
  'httpBearerAuth',
  'httpHeaderAuth',
  'httpQueryAuth',
  'httpCustomAuth',
  'httpMultipleHeadersAuth',
] as const;
export type GenericAuthType = (typeof GENERIC_AUTH_TYPES)[number];
