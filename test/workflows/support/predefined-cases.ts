/**
 * One case (or more) per predefined credential type the HTTP Request node serves: the credential's
 * data by n8n's field names, and what n8n's credential class puts on the request — the headers (an
 * `undefined` one must be absent) and the query string of a request to `/echo`.
 */
export interface PredefinedCase {
  type: string;
  /** The credential's id in the tests: the type, or `type:variant`. */
  id: string;
  data: Record<string, string>;
  headers: Record<string, string | undefined>;
  query: string;
}

const basic = (user: string, password: string) =>
  `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;

const c = (
  id: string,
  data: Record<string, string>,
  headers: Record<string, string | undefined>,
  query = '',
): PredefinedCase => ({ type: id.split(':')[0] ?? id, id, data, headers, query });

export const PREDEFINED_CASES: PredefinedCase[] = [
  c(
    'openAiApi',
    { apiKey: 'sk-open-1', organizationId: 'org-1' },
    { authorization: 'Bearer sk-open-1', 'openai-organization': 'org-1' },
  ),
  c('anthropicApi', { apiKey: 'ak-anth-1' }, { 'x-api-key': 'ak-anth-1' }),
  c('mistralCloudApi', { apiKey: 'mk-mist-1' }, { authorization: 'Bearer mk-mist-1' }),
  c(
    'googlePalmApi',
    { apiKey: 'g-palm-1', host: 'https://generativelanguage.googleapis.com' },
    {},
    'key=g-palm-1',
  ),
  c('qdrantApi', { apiKey: 'qd-key-1', apiUrl: 'http://localhost:6333' }, { 'api-key': 'qd-key-1' }),
  c('qdrantApi:open', { apiUrl: 'http://localhost:6333' }, { 'api-key': undefined }),
  c('n8nApi', { apiKey: 'n8n-key-1', baseUrl: 'https://n8n.test/api/v1' }, { 'x-n8n-api-key': 'n8n-key-1' }),
  c(
    'notionApi',
    { apiKey: 'secret_notion1' },
    { authorization: 'Bearer secret_notion1', 'notion-version': '2022-02-22' },
  ),
  c('airtableTokenApi', { accessToken: 'pat-air-1' }, { authorization: 'Bearer pat-air-1' }),
  c('slackApi', { accessToken: 'xoxb-slack-1' }, { authorization: 'Bearer xoxb-slack-1' }),
  c('todoistApi', { apiKey: 'todo-key-1' }, { authorization: 'Bearer todo-key-1' }),
  c('hubspotAppToken', { appToken: 'pat-na1-hub' }, { authorization: 'Bearer pat-na1-hub' }),
  c(
    'whatsAppApi',
    { accessToken: 'wa-token-1', businessAccountId: '1234' },
    { authorization: 'Bearer wa-token-1' },
  ),
  c('virusTotalApi', { accessToken: 'vt-key-1' }, { 'x-apikey': 'vt-key-1' }),
  c(
    'wordpressApi',
    { username: 'ada', password: 'wp-pass-1', url: 'https://blog.test' },
    { authorization: basic('ada', 'wp-pass-1') },
  ),
  c('cloudflareApi', { apiToken: 'cf-token-1' }, { authorization: 'Bearer cf-token-1' }),
  c('stripeApi', { secretKey: 'sk_test_stripe1' }, { authorization: 'Bearer sk_test_stripe1' }),
  c('clockifyApi', { apiKey: 'clock-key-1' }, { 'x-api-key': 'clock-key-1' }),
  c('serpApi', { apiKey: 'serp-key-1' }, {}, 'api_key=serp-key-1'),
  c(
    'qualysApi',
    { username: 'q-admin', password: 'q-pass-1' },
    { authorization: basic('q-admin', 'q-pass-1'), 'x-requested-with': 'n8n application' },
  ),
  c(
    'qualysApi:requestedWith',
    { username: 'q-admin', password: 'q-pass-2', requestedWith: 'audit bot' },
    { authorization: basic('q-admin', 'q-pass-2'), 'x-requested-with': 'audit bot' },
  ),
  c(
    'githubApi',
    { accessToken: 'ghp_github1', server: 'https://api.github.com', user: 'ada' },
    { authorization: 'token ghp_github1' },
  ),
  c(
    'erpNextApi',
    { apiKey: 'erp-key-1', apiSecret: 'erp-secret-1', environment: 'selfHosted', domain: 'https://erp.test' },
    { authorization: 'token erp-key-1:erp-secret-1' },
  ),
  c(
    'shopifyAccessTokenApi',
    { shopSubdomain: 'acme', accessToken: 'shpat_shop1', appSecretKey: 'shop-app-secret' },
    { 'x-shopify-access-token': 'shpat_shop1' },
  ),
  c('pipedriveApi', { apiToken: 'pipe-token-1' }, {}, 'api_token=pipe-token-1'),
  c(
    'nocoDbApiToken',
    { apiToken: 'noco-token-1', host: 'https://noco.test' },
    { 'xc-token': 'noco-token-1' },
  ),
  c(
    'zendeskApi',
    { subdomain: 'acme', email: 'ada@acme.test', apiToken: 'zd-token-1' },
    { authorization: basic('ada@acme.test/token', 'zd-token-1') },
  ),
  c('lemlistApi', { apiKey: 'lem-key-1' }, { authorization: basic('', 'lem-key-1'), 'user-agent': 'n8n' }),
  c('discordBotApi', { botToken: 'discord-bot-1' }, { authorization: 'Bot discord-bot-1' }),
  c(
    'wooCommerceApi',
    { consumerKey: 'ck_woo1', consumerSecret: 'cs_woo1', url: 'https://shop.test' },
    { authorization: basic('ck_woo1', 'cs_woo1') },
  ),
  c(
    'wooCommerceApi:inQuery',
    { consumerKey: 'ck_woo2', consumerSecret: 'cs_woo2', includeCredentialsInQuery: 'true' },
    { authorization: undefined },
    'consumer_key=ck_woo2&consumer_secret=cs_woo2',
  ),
  c('dropcontactApi', { apiKey: 'drop-key-1' }, { 'x-access-token': 'drop-key-1' }),
  c('calApi', { apiKey: 'cal_live_1', host: 'https://api.cal.com' }, { authorization: 'Bearer cal_live_1' }),
  c('huggingFaceApi', { apiKey: 'hf_hug1' }, { authorization: 'Bearer hf_hug1' }),
  c(
    'supabaseApi',
    { host: 'https://acme.supabase.co', serviceRole: 'supa-role-1' },
    { apikey: 'supa-role-1', authorization: 'Bearer supa-role-1' },
  ),
  c('mailerLiteApi', { apiKey: 'ml-key-1' }, { 'x-mailerlite-apikey': 'ml-key-1', authorization: undefined }),
  c(
    'mailerLiteApi:new',
    { apiKey: 'ml-key-2', classicApi: 'false' },
    { authorization: 'Bearer ml-key-2', 'x-mailerlite-apikey': undefined },
  ),
  c('facebookGraphApi', { accessToken: 'fb-token-1' }, {}, 'access_token=fb-token-1'),
];
