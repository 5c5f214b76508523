import { type Apply, keyQuery } from './types.js';

/** The credential types whose n8n class puts the secret in the query string. */
export const QUERY_TYPES: Record<string, Apply> = {
  googlePalmApi: keyQuery('key', 'apiKey'),
  pipedriveApi: keyQuery('api_token', 'apiToken'),
  facebookGraphApi: keyQuery('access_token', 'accessToken'),
  serpApi: keyQuery('api_key', 'apiKey'),
};
