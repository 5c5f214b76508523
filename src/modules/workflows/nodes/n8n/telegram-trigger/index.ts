import { createHmac } from 'node:crypto';
import { type Static, Type } from 'typebox';
import { binaryOf, mimeTypeOfName } from '../../../engine/binary.js';
import { shownWhen, versionAtLeast } from '../../../engine/display-options.js';
import { defineNode, NodeOperationError, output } from '../../../engine/node-type.js';
import { withDefaults } from '../../../engine/parameters.js';
import { credentialRefOf, type Item, type Json, type WorkflowNode } from '../../../engine/types.js';
import type { WebhookNodeInfo } from '../../../engine/webhook-nodes.js';
import { WebhookParameters, type WebhookParams } from '../../platform/webhook/index.js';
import { credentialOf } from '../credential-of.js';
import { botOf, callBot, downloadFile, type TelegramBot } from '../telegram/api.js';

const UPDATES = [
  '*',
  'callback_query',
  'channel_post',
  'edited_channel_post',
  'edited_message',
  'inline_query',
  'message',
  'poll',
  'pre_checkout_query',
  'shipping_query',
] as const;

const Parameters = Type.Object(
  {
    telegramTriggerNotice: Type.Optional(Type.String()),
    attachmentNotice: Type.Optional(Type.String()),
    updates: Type.Array(Type.Enum(UPDATES), { default: [], uniqueItems: true }),
    additionalFields: Type.Object(
      {
        download: Type.Optional(Type.Boolean()),
        imageSize: Type.Optional(Type.Enum(['small', 'medium', 'large', 'extraLarge'] as const)),
        // v1.2: only these chats' and users' messages start the workflow (comma-separated ids).
        chatIds: Type.Optional(
          Type.String({ maxLength: 10_000, ...shownWhen({ '@version': [versionAtLeast(1.2)] }) }),
        ),
        userIds: Type.Optional(
          Type.String({ maxLength: 10_000, ...shownWhen({ '@version': [versionAtLeast(1.2)] }) }),
        ),
      },
      { additionalProperties: false, default: {} },
    ),
  },
  { additionalProperties: false },
);
type Params = Static<typeof Parameters>;

/** The header Telegram sends the `secret_token` given at setWebhook in. */
const SECRET_HEADER = 'x-telegram-bot-api-secret-token';

/**
 * The secret_token of a node's webhook: an HMAC of its path under the bot's token, so only Telegram
 * (told it at setWebhook) and this platform know it. n8n's is `{workflowId}_{nodeId}`, which anyone
 * holding the export knows. Telegram allows 1–256 of A–Z, a–z, 0–9, `_` and `-`: base64url fits.
 */
export function telegramSecret(token: string, path: string): string {
  return createHmac('sha256', token).update(`telegram-trigger:${path}`).digest('base64url');
}

const pathOf = (node: WorkflowNode) => `${node.webhookId ?? node.id}/webhook`;
const paramsOf = (node: WorkflowNode) => withDefaults(Parameters, node.parameters) as Params;

/** n8n v1.2's chat and user filters: a message outside them starts nothing. */
function accepts(version: number, p: Params, body: unknown): boolean {
  if (version < 1.2) return true;
  const message = (body as { message?: { chat?: { id?: unknown }; from?: { id?: unknown } } } | null)
    ?.message;
  const listed = (ids: string | undefined, id: unknown) =>
    !ids ||
    ids
      .split(',')
      .map((s) => s.trim())
      .includes(String(id));
  return (
    listed(p.additionalFields.chatIds, message?.chat?.id) &&
    listed(p.additionalFields.userIds, message?.from?.id)
  );
}

/**
 * n8n's Telegram Trigger (v1, 1.1, 1.2): activation tells Telegram (setWebhook) to deliver the chosen
 * `updates` to `{PUBLIC_URL}/webhook/{webhookId}/webhook` with a secret token; a delivery without it is
 * refused (403, every version: n8n v1 checked none), deactivation calls deleteWebhook. Each update is
 * the trigger's item; `download` fetches its photo, video or document into binary `data` (getFile, at
 * most Telegram's 20 MB).
 */
export const telegramTriggerNode = defineNode({
  type: 'n8n-nodes-base.telegramTrigger',
  versions: [1, 1.1, 1.2],
  schema: Parameters,
  trigger: true,
  inputs: 0,
  webhook: {
    parse(node): WebhookNodeInfo[] {
      const p = paramsOf(node);
      const path = pathOf(node);
      const defaults = withDefaults(WebhookParameters, { path }) as WebhookParams;
      const version = node.typeVersion ?? 1;
      return [
        {
          nodeName: node.name,
          nodeId: node.id,
          path,
          dynamicPrefix: null,
          httpMethod: 'POST',
          authentication: 'none',
          credentialId: credentialRefOf(node.credentials?.telegramApi),
          responseMode: 'onReceived',
          responseCode: 200,
          responseData: 'firstEntryJson',
          options: {
            ...defaults.options,
            dedupeKey: null,
            ipAllowList: null,
            binaryBody: 'never',
            binaryPropertyName: null,
            rawBodyAs: 'json',
          },
          responseBinaryPropertyName: 'data',
          delivery: {
            secretHeader: SECRET_HEADER,
            // HMAC('', path) is computable by anyone from the public path: no token (or only blanks,
            // which the credential API lets through), no secret.
            secretOf: (credential) =>
              credential.accessToken?.trim() ? telegramSecret(credential.accessToken, path) : null,
            accept: (body) => accepts(version, p, body),
          },
        },
      ];
    },
  },
  registration: {
    async register(ctx) {
      const p = ctx.parameters as Params;
      const bot = await botFor(ctx.node, ctx.credential, ctx.http);
      await callBot(bot, 'setWebhook', {
        url: ctx.webhook.url,
        allowed_updates: p.updates.includes('*') ? [] : p.updates,
        secret_token: telegramSecret(bot.token, ctx.webhook.path),
      });
    },
    async unregister(ctx) {
      const bot = await botFor(ctx.node, ctx.credential, ctx.http);
      await callBot(bot, 'deleteWebhook', {});
    },
  },
  async execute(ctx) {
    const p = await ctx.params(0);
    if (!p.additionalFields.download) return output(ctx.items);
    const bot = await botFor(ctx.node, ctx.credential, ctx.deps.http);
    const out: Item[] = [];
    for (const item of ctx.items)
      out.push(await withDownload(bot, item, p.additionalFields.imageSize ?? 'large'));
    return output(out);
  },
});

async function botFor(
  node: WorkflowNode,
  credential: (id: string) => Promise<Record<string, string>>,
  http: TelegramBot['http'],
): Promise<TelegramBot> {
  return botOf(await credentialOf(node, 'telegramApi', credential), http);
}

const SIZES = { small: 0, medium: 1, large: 2, extraLarge: 3 } as const;

/** n8n's download: the update's photo (by size, else the first), video or document as binary `data`. */
async function withDownload(bot: TelegramBot, item: Item, size: keyof typeof SIZES): Promise<Item> {
  const json = item.json as Record<string, Json>;
  const key = json.channel_post ? 'channel_post' : 'message';
  const message = json[key] as Record<string, Json> | undefined;
  const photos = Array.isArray(message?.photo) ? (message.photo as Array<Record<string, Json>>) : null;
  const file = (photos ? (photos[SIZES[size]] ?? photos[0]) : (message?.video ?? message?.document)) as
    | Record<string, Json>
    | undefined;
  const fileId = file?.file_id;
  if (typeof fileId !== 'string') return item;
  const answer = await callBot(bot, 'getFile', { file_id: fileId });
  const path = (answer.result as { file_path?: unknown } | undefined)?.file_path;
  if (typeof path !== 'string' || path === '')
    throw new NodeOperationError('Telegram answered getFile without a file_path to download');
  const bytes = await downloadFile(bot, path);
  const fileName = path.split('/').pop() ?? 'file';
  const mimeType = typeof file?.mime_type === 'string' ? file.mime_type : mimeTypeOfName(fileName);
  return { json, binary: { data: binaryOf(bytes, mimeType, fileName) } };
}
