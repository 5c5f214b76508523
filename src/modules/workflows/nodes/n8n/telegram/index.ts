import { binaryBytes, binaryOf, mimeTypeOfName } from '../../../engine/binary.js';
import { defineNode, NodeOperationError, output } from '../../../engine/node-type.js';
import type { Item, Json } from '../../../engine/types.js';
import { credentialOf } from '../credential-of.js';
import { botOf, callBot, downloadFile, type TelegramBot } from './api.js';
import { telegramCall } from './body.js';
import { TelegramParameters, type TelegramParams, withResourceOperation } from './schema.js';
import { sendAndWait } from './send-and-wait.js';

/**
 * n8n's Telegram node (v1, 1.1, 1.2): every resource and operation of n8n's, each a Bot API call at
 * `${baseUrl}/bot${token}/${method}` through the outbound guard (uploads from binary data as multipart,
 * `file: get` downloading into binary `data`). Telegram's refusals are the node's errors naming its
 * description. Send and Wait for Response (approval or free text) waits at the execution's signed page.
 */
export const telegramNode = defineNode({
  type: 'n8n-nodes-base.telegram',
  versions: [1, 1.1, 1.2],
  schema: TelegramParameters,
  check(p) {
    if (p.operation !== 'sendAndWait' || p.responseType !== 'customForm') return [];
    return [
      {
        path: 'parameters.responseType',
        message:
          "Telegram's Send and Wait with a custom form ('customForm') is not supported here; use 'approval' or 'freeText', or an n8n Form node",
      },
    ];
  },
  async execute(ctx) {
    const data = await credentialOf(ctx.node, 'telegramApi', ctx.credential);
    const bot = botOf(data, ctx.deps.http);
    const version = ctx.node.typeVersion ?? 1;
    const out: Item[] = [];
    for (let i = 0; i < ctx.items.length; i++) {
      const p = withResourceOperation(await ctx.params(i), ctx.node.parameters);
      // n8n sends one message for the whole input and waits once.
      if (p.operation === 'sendAndWait') return sendAndWait(ctx, bot, p);
      const items = await runItem(bot, p, version, ctx.items[i]);
      for (const item of items) out.push({ ...item, pairedItem: { item: i } });
    }
    return output(out);
  },
});

async function runItem(bot: TelegramBot, p: TelegramParams, version: number, input: Item | undefined) {
  const call = telegramCall(p, version);
  let answer: Record<string, unknown>;
  if (call.uploadField) {
    const given = p.additionalFields.fileName ?? '';
    let file: ReturnType<typeof binaryBytes>;
    try {
      file = binaryBytes(input, p.binaryPropertyName);
    } catch (error) {
      throw new NodeOperationError((error as Error).message);
    }
    const fileName = given || file.meta.fileName;
    if (!fileName)
      throw new NodeOperationError(`File name is needed to ${p.operation}`, {
        description:
          'Make sure the binary property has a file name, or set File Name under Additional Fields',
      });
    const body: Record<string, unknown> = {
      ...call.body,
      disable_notification: String(call.body.disable_notification ?? 'false'),
    };
    delete body[call.uploadField];
    answer = await callBot(bot, call.method, body, {
      field: call.uploadField,
      file: { bytes: file.bytes, mimeType: file.meta.mimeType, fileName },
    });
  } else {
    answer = await callBot(bot, call.method, call.body);
  }
  if (p.resource === 'file' && p.operation === 'get' && p.download) {
    const path = (answer.result as { file_path?: unknown } | undefined)?.file_path;
    if (typeof path !== 'string' || path === '')
      throw new NodeOperationError('Telegram answered getFile without a file_path to download');
    const bytes = await downloadFile(bot, path);
    const fileName = path.split('/').pop() ?? 'file';
    const mimeType = p.additionalFields.mimeType || mimeTypeOfName(fileName);
    return [{ json: answer as Record<string, Json>, binary: { data: binaryOf(bytes, mimeType, fileName) } }];
  }
  if (p.resource === 'chat' && p.operation === 'administrators' && Array.isArray(answer.result))
    return (answer.result as Json[]).map((json) => ({ json: asObject(json) }));
  return [{ json: answer as Record<string, Json> }];
}

/** n8n's returnJsonArray: an object as it is, anything else under `json`… as n8n wraps it. */
const asObject = (value: Json): Record<string, Json> =>
  value !== null && typeof value === 'object' && !Array.isArray(value) ? value : { json: value };
