import { type Apply, authorization, isOn } from './types.js';

/**
 * The credential types whose n8n class authenticates with an `Authorization` header of a scheme and
 * the secret (`Bearer`, GitHub's and ERPNext's `token`, Discord's `Bot`), a few with a second header.
 */
export const AUTHORIZATION_TYPES: Record<string, Apply> = {
  openAiApi: (data, to, need) => {
    to.header('authorization', `Bearer ${need('apiKey')}`);
    if (data.organizationId) to.header('openai-organization', data.organizationId);
  },
  mistralCloudApi: authorization('apiKey'),
  notionApi: (_data, to, need) => {
    to.header('authorization', `Bearer ${need('apiKey')}`);
    // n8n sets its version only when the request has none (the Notion node sends its own).
    if (!to.has('notion-version')) to.plain('notion-version', '2022-02-22');
  },
  airtableTokenApi: authorization('accessToken'),
  slackApi: authorization('accessToken'),
  todoistApi: authorization('apiKey'),
  hubspotAppToken: authorization('appToken'),
  whatsAppApi: authorization('accessToken'),
  cloudflareApi: authorization('apiToken'),
  stripeApi: authorization('secretKey'),
  huggingFaceApi: authorization('apiKey'),
  calApi: authorization('apiKey'),
  githubApi: authorization('accessToken', 'token'),
  discordBotApi: authorization('botToken', 'Bot'),
  erpNextApi: (_data, to, need) => to.header('authorization', `token ${need('apiKey')}:${need('apiSecret')}`),
  // Supabase's gateway reads the key twice: as `apikey` and as the bearer token.
  supabaseApi: (_data, to, need) => {
    to.header('apikey', need('serviceRole'));
    to.header('authorization', `Bearer ${need('serviceRole')}`);
  },
  // MailerLite's classic API (n8n's default) takes its own header; the new one a bearer token.
  mailerLiteApi: (data, to, need) => {
    if (isOn(data.classicApi, true)) to.header('x-mailerlite-apikey', need('apiKey'));
    else to.header('authorization', `Bearer ${need('apiKey')}`);
  },
};
