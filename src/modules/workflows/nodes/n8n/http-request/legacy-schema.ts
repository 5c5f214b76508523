import { type Static, Type } from 'typebox';

/** n8n's HTTP Request v1 and v2 parameters (its `HttpRequestV1`/`HttpRequestV2` classes). */

const closed = { additionalProperties: false } as const;

/** `{ parameter: [{ name, value }] }` rows of v1's fixedCollections. */
const rows = () =>
  Type.Object(
    {
      parameter: Type.Optional(
        Type.Array(
          Type.Object({ name: Type.String({ default: '' }), value: Type.Unknown({ default: '' }) }, closed),
        ),
      ),
    },
    { ...closed, default: {} },
  );

export const LEGACY_AUTHENTICATIONS = [
  // v1's own values
  'none',
  'basicAuth',
  'digestAuth',
  'headerAuth',
  'queryAuth',
  'oAuth1',
  'oAuth2',
  // v2's
  'predefinedCredentialType',
  'genericCredentialType',
] as const;

export const HttpRequestLegacyParameters = Type.Object(
  {
    authentication: Type.Enum(LEGACY_AUTHENTICATIONS, { default: 'none' }),
    nodeCredentialType: Type.Optional(Type.String()),
    genericAuthType: Type.Optional(Type.String()),
    requestMethod: Type.Enum(['DELETE', 'GET', 'HEAD', 'OPTIONS', 'PATCH', 'POST', 'PUT'] as const, {
      default: 'GET',
    }),
    url: Type.Unknown({ default: '' }),
    allowUnauthorizedCerts: Type.Boolean({ default: false }),
    responseFormat: Type.Enum(['file', 'json', 'string'] as const, { default: 'json' }),
    dataPropertyName: Type.String({ default: 'data' }),
    jsonParameters: Type.Boolean({ default: false }),
    options: Type.Object(
      {
        batchInterval: Type.Number({ minimum: 0, default: 1000 }),
        batchSize: Type.Number({ minimum: -1, default: 50 }),
        bodyContentType: Type.Enum(['json', 'raw', 'multipart-form-data', 'form-urlencoded'] as const, {
          default: 'json',
        }),
        fullResponse: Type.Boolean({ default: false }),
        followAllRedirects: Type.Optional(Type.Boolean()),
        followRedirect: Type.Optional(Type.Boolean()),
        ignoreResponseCode: Type.Boolean({ default: false }),
        bodyContentCustomMimeType: Type.Optional(Type.String()),
        proxy: Type.Optional(Type.String()),
        splitIntoItems: Type.Boolean({ default: false }),
        timeout: Type.Optional(Type.Number({ minimum: 1 })),
        useQueryString: Type.Boolean({ default: false }),
      },
      { ...closed, default: {} },
    ),
    sendBinaryData: Type.Boolean({ default: false }),
    binaryPropertyName: Type.String({ default: 'data' }),
    bodyParametersJson: Type.Unknown({ default: '' }),
    bodyParametersUi: rows(),
    headerParametersJson: Type.Unknown({ default: '' }),
    headerParametersUi: rows(),
    queryParametersJson: Type.Unknown({ default: '' }),
    queryParametersUi: rows(),
    infoMessage: Type.Optional(Type.String()),
  },
  closed,
);

export type HttpRequestLegacyParams = Static<typeof HttpRequestLegacyParameters>;
