import { type Static, Type } from 'typebox';

/**
 * n8n's HTTP Request parameters as its `HttpRequestV3` class describes them (typeVersion 3 and 4.x).
 * n8n leaves out values equal to their defaults when it exports, so the defaults are n8n's. Options whose
 * default n8n's code reads from "absent" (timeout, redirects, array format) have none here: the node
 * decides from absence as n8n does.
 */

const closed = { additionalProperties: false } as const;

/** `{ name, value }` rows of a fixedCollection; a value may be any JSON once expressions ran. */
const pairs = () =>
  Type.Object(
    {
      parameters: Type.Array(
        Type.Object({ name: Type.String({ default: '' }), value: Type.Unknown({ default: '' }) }, closed),
        { default: [] },
      ),
    },
    closed,
  );

/** Body rows: multipart rows also say whether they are a field or a binary file. */
const bodyRows = Type.Object(
  {
    parameters: Type.Array(
      Type.Object(
        {
          name: Type.String({ default: '' }),
          value: Type.Unknown({ default: '' }),
          parameterType: Type.Optional(Type.Enum(['formData', 'formBinaryData'] as const)),
          inputDataFieldName: Type.Optional(Type.String()),
        },
        closed,
      ),
      { default: [] },
    ),
  },
  closed,
);

const responseOptions = Type.Object(
  {
    response: Type.Object(
      {
        fullResponse: Type.Boolean({ default: false }),
        neverError: Type.Boolean({ default: false }),
        responseFormat: Type.Enum(['autodetect', 'file', 'json', 'text'] as const, { default: 'autodetect' }),
        outputPropertyName: Type.String({ default: 'data' }),
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
    webhookNotice: Type.Optional(Type.String()),
    nextURL: Type.Unknown({ default: '' }),
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
      { ...closed, default: { parameters: [{ type: 'qs', name: '', value: '' }] } },
    ),
    paginationCompleteWhen: Type.Enum(['responseIsEmpty', 'receiveSpecificStatusCodes', 'other'] as const, {
      default: 'responseIsEmpty',
    }),
    statusCodesWhenComplete: Type.String({ default: '' }),
    completeExpression: Type.Unknown({ default: '' }),
    limitPagesFetched: Type.Boolean({ default: false }),
    maxRequests: Type.Number({ default: 100 }),
    requestInterval: Type.Number({ minimum: 0, default: 0 }),
  },
  closed,
);

const paginationOptions = Type.Object({ pagination: PaginationSettings }, closed);

export const HttpRequestV4Parameters = Type.Object(
  {
    curlImport: Type.Optional(Type.Literal('')),
    infoMessage: Type.Optional(Type.String()),
    googleApiWarning: Type.Optional(Type.String()),
    provideSslCertificatesNotice: Type.Optional(Type.String()),
    method: Type.Enum(['DELETE', 'GET', 'HEAD', 'OPTIONS', 'PATCH', 'POST', 'PUT'] as const, {
      default: 'GET',
    }),
    url: Type.Unknown({ default: '' }),
    authentication: Type.Enum(['none', 'predefinedCredentialType', 'genericCredentialType'] as const, {
      default: 'none',
    }),
    nodeCredentialType: Type.Optional(Type.String()),
    genericAuthType: Type.Optional(Type.String()),
    provideSslCertificates: Type.Boolean({ default: false }),
    sendQuery: Type.Boolean({ default: false }),
    specifyQuery: Type.Enum(['keypair', 'json'] as const, { default: 'keypair' }),
    queryParameters: Type.Optional(pairs()),
    jsonQuery: Type.Unknown({ default: '' }),
    sendHeaders: Type.Boolean({ default: false }),
    specifyHeaders: Type.Enum(['keypair', 'json'] as const, { default: 'keypair' }),
    headerParameters: Type.Optional(pairs()),
    jsonHeaders: Type.Unknown({ default: '' }),
    sendBody: Type.Boolean({ default: false }),
    contentType: Type.Enum(['json', 'form-urlencoded', 'multipart-form-data', 'raw', 'binaryData'] as const, {
      default: 'json',
    }),
    specifyBody: Type.Enum(['keypair', 'json', 'string'] as const, { default: 'keypair' }),
    bodyParameters: Type.Optional(bodyRows),
    jsonBody: Type.Unknown({ default: '' }),
    body: Type.Unknown({ default: '' }),
    inputDataFieldName: Type.Optional(Type.String()),
    rawContentType: Type.String({ default: '' }),
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
        queryParameterArrays: Type.Optional(Type.Enum(['repeat', 'brackets', 'indices'] as const)),
        lowercaseHeaders: Type.Boolean({ default: true }),
        redirect: Type.Optional(
          Type.Object(
            {
              redirect: Type.Object(
                {
                  followRedirects: Type.Optional(Type.Boolean()),
                  maxRedirects: Type.Number({ default: 21 }),
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
