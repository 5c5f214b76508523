import { type Apply, keyHeader } from './types.js';

/** The credential types whose n8n class sends the secret as it is in a header of the service's own. */
export const KEY_HEADER_TYPES: Record<string, Apply> = {
  anthropicApi: (data, to, need) => {
    to.header('x-api-key', need('apiKey'));
    if (data.header === 'true' && data.headerName && typeof data.headerValue === 'string')
      to.header(data.headerName, data.headerValue);
  },
  // n8n sends Qdrant's `Api-Key` only when one is set (a local Qdrant has none).
  qdrantApi: (data, to) => {
    if (data.apiKey) to.header('api-key', data.apiKey);
  },
  n8nApi: keyHeader('x-n8n-api-key', 'apiKey'),
  virusTotalApi: keyHeader('x-apikey', 'accessToken'),
  clockifyApi: keyHeader('x-api-key', 'apiKey'),
  shopifyAccessTokenApi: keyHeader('x-shopify-access-token', 'accessToken'),
  nocoDbApiToken: keyHeader('xc-token', 'apiToken'),
  dropcontactApi: keyHeader('x-access-token', 'apiKey'),
};
