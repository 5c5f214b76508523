/**
 * n8n's "predefined credential types" the HTTP Request node can use here: each as n8n's credential
 * definition authenticates a request (its `authenticate` property), for the service credentials the
 * templates use most whose authentication is a header, a query parameter or basic auth. Other types
 * need the service's own node or OAuth and are refused at save, naming these.
 */
interface Target {
  header(name: string, value: string): void;
  query(name: string, value: string): void;
  /** A header the request already has (n8n's Notion credential keeps a `Notion-Version` it was given). */
  has(name: string): boolean;
}
type Apply = (data: Record<string, string>, to: Target, need: (field: string) => string) => void;

const bearer =
  (field: string): Apply =>
  (_data, to, need) =>
    to.header('authorization', `Bearer ${need(field)}`);

const PREDEFINED: Record<string, Apply> = {
  openAiApi: (data, to, need) => {
    to.header('authorization', `Bearer ${need('apiKey')}`);
    if (data.organizationId) to.header('openai-organization', data.organizationId);
  },
  anthropicApi: (data, to, need) => {
    to.header('x-api-key', need('apiKey'));
    if (data.header === 'true' && data.headerName && typeof data.headerValue === 'string')
      to.header(data.headerName, data.headerValue);
  },
  mistralCloudApi: bearer('apiKey'),
  googlePalmApi: (_data, to, need) => to.query('key', need('apiKey')),
  qdrantApi: (data, to) => {
    if (data.apiKey) to.header('api-key', data.apiKey);
  },
  n8nApi: (_data, to, need) => to.header('x-n8n-api-key', need('apiKey')),
  notionApi: (_data, to, need) => {
    to.header('authorization', `Bearer ${need('apiKey')}`);
    if (!to.has('notion-version')) to.header('notion-version', '2022-02-22');
  },
  airtableTokenApi: bearer('accessToken'),
  slackApi: bearer('accessToken'),
  todoistApi: bearer('apiKey'),
  hubspotAppToken: bearer('appToken'),
  whatsAppApi: bearer('accessToken'),
  virusTotalApi: (_data, to, need) => to.header('x-apikey', need('accessToken')),
  wordpressApi: (_data, to, need) =>
    to.header(
      'authorization',
      `Basic ${Buffer.from(`${need('username')}:${need('password')}`).toString('base64')}`,
    ),
};

export const PREDEFINED_CREDENTIAL_TYPES = Object.keys(PREDEFINED);

export const isPredefinedType = (type: unknown): type is string =>
  typeof type === 'string' && Object.hasOwn(PREDEFINED, type);

export function applyPredefined(
  type: string,
  data: Record<string, string>,
  to: Target,
  need: (field: string) => string,
): void {
  PREDEFINED[type]?.(data, to, need);
}

/** The save-time refusal of a predefined credential type not served, naming those that are. */
export const predefinedRefusal = (type: unknown): string =>
  `predefined credential type '${typeof type === 'string' ? type : ''}' is not available here (served: ${PREDEFINED_CREDENTIAL_TYPES.join(', ')}); use authentication 'genericCredentialType' with a generic auth type`;
