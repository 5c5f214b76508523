import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createOutboundHttp } from '../../src/core/http/outbound.js';
import { binaryOf } from '../../src/modules/workflows/engine/binary.js';
import type { EngineDeps, Item, WorkflowDefinition } from '../../src/modules/workflows/engine/types.js';
import { telegramSecret } from '../../src/modules/workflows/nodes/n8n/telegram-trigger/index.js';
import type { TestPlatform } from '../helpers/platform.js';
import { testDialects } from '../helpers/services.js';
import { until } from '../helpers/until.js';
import { FakeTelegram } from './support/fake-telegram.js';
import { runFixture } from './support/n8n-fixtures.js';
import { activate, createCredential, createWorkflow, settled, workflowPlatform } from './support.js';

/**
 * n8n's Telegram node and Telegram Trigger against a local Bot API server speaking Telegram's wire
 * format (JSON and multipart calls, `{ok, result}` / `{ok: false, description}` answers, file
 * downloads): every operation's method and body, uploads, errors, a bad token, a server that hangs, and
 * the trigger's registration (setWebhook / deleteWebhook) and secret token over real HTTP.
 */

const telegram = new FakeTelegram();
let deps: Partial<EngineDeps>;

beforeAll(async () => {
  await telegram.start();
  const http = createOutboundHttp({ allowHosts: [new URL(telegram.base).host], timeoutMs: 2_000 });
  deps = {
    http,
    credential: async (id) => {
      if (id === 'bot') return { accessToken: FakeTelegram.TOKEN, baseUrl: telegram.base };
      if (id === 'wrong') return { accessToken: '999:not-a-bot', baseUrl: telegram.base };
      throw new Error(`Credential '${id}' not found`);
    },
  };
});
afterAll(() => telegram.stop());
beforeEach(() => telegram.reset());

/** Manual trigger → one Telegram node. */
function sending(parameters: Record<string, unknown>, version = 1.2, credential = 'bot'): WorkflowDefinition {
  return {
    id: 'wf_telegram',
    name: 'telegram',
    nodes: [
      {
        id: 't',
        name: 'Start',
        type: 'n8n-nodes-base.manualTrigger',
        typeVersion: 1,
        position: [0, 0],
        parameters: {},
      },
      {
        id: 'tg',
        name: 'Telegram',
        type: 'n8n-nodes-base.telegram',
        typeVersion: version,
        position: [200, 0],
        parameters,
        credentials: { telegramApi: { id: credential, name: 'bot' } },
      },
    ],
    connections: { Start: { main: [[{ node: 'Telegram', type: 'main', index: 0 }]] } },
  };
}

async function run(def: WorkflowDefinition, items: Item[] = [{ json: {} }]) {
  return runFixture(def, deps, items);
}

describe('Telegram node: sendMessage', () => {
  it('v1.2 appends the attribution in Markdown by default, no link preview, and outputs the answer', async () => {
    const { outcome, outputs } = await run(sending({ chatId: '42', text: 'Hello' }));
    expect(outcome.state.error).toBeNull();
    const [call] = telegram.calls;
    expect(call?.method).toBe('sendMessage');
    expect(call?.token).toBe(FakeTelegram.TOKEN);
    expect(call?.body).toEqual({
      chat_id: '42',
      text: 'Hello\n\n_This message was sent automatically by a workflow_',
      parse_mode: 'Markdown',
      disable_web_page_preview: true,
    });
    expect(outputs.Telegram).toEqual([
      { ok: true, result: expect.objectContaining({ chat: { id: 42, type: 'private' } }) },
    ]);
  });

  it('v1 appends nothing; appendAttribution false turns it off; HTML puts it in <em>', async () => {
    await run(sending({ chatId: 7, text: 'plain' }, 1));
    await run(sending({ chatId: 7, text: 'quiet', additionalFields: { appendAttribution: false } }));
    await run(sending({ chatId: 7, text: '<b>x</b>', additionalFields: { parse_mode: 'HTML' } }, 1.1));
    const [v1, off, html] = telegram.called('sendMessage');
    expect(v1?.body).toEqual({
      chat_id: 7,
      text: 'plain',
      parse_mode: 'Markdown',
      disable_web_page_preview: true,
    });
    expect(off?.body.text).toBe('quiet');
    expect(html?.body.text).toBe('<b>x</b>\n\n<em>This message was sent automatically by a workflow</em>');
    // v1.1 keeps a preview for a text with a link only when it has one: this one has none.
    expect(html?.body.disable_web_page_preview).toBe(true);
  });

  it("the additional fields and an inline keyboard become the call's fields and reply_markup", async () => {
    await run(
      sending({
        chatId: '={{ 40 + 2 }}',
        text: 'see https://example.com',
        replyMarkup: 'inlineKeyboard',
        inlineKeyboard: {
          rows: [
            { row: { buttons: [{ text: 'Yes', additionalFields: { callback_data: 'yes' } }] } },
            { row: { buttons: [{ text: 'Docs', additionalFields: { url: 'https://example.com' } }] } },
          ],
        },
        additionalFields: {
          appendAttribution: false,
          parse_mode: 'MarkdownV2',
          disable_notification: true,
          reply_to_message_id: 5,
          disable_web_page_preview: false,
        },
      }),
    );
    expect(telegram.calls[0]?.body).toEqual({
      chat_id: 42,
      text: 'see https://example.com',
      parse_mode: 'MarkdownV2',
      disable_notification: true,
      reply_to_message_id: 5,
      disable_web_page_preview: false,
      reply_markup: {
        inline_keyboard: [
          [{ text: 'Yes', callback_data: 'yes' }],
          [{ text: 'Docs', url: 'https://example.com' }],
        ],
      },
    });
  });

  it('a reply keyboard carries its options; force reply and keyboard removal their fields', async () => {
    await run(
      sending({
        chatId: '1',
        text: 'pick',
        replyMarkup: 'replyKeyboard',
        replyKeyboard: { rows: [{ row: { buttons: [{ text: 'A' }, { text: 'B' }] } }] },
        replyKeyboardOptions: { one_time_keyboard: true },
        additionalFields: { appendAttribution: false },
      }),
    );
    await run(
      sending({ chatId: '1', text: 'r', replyMarkup: 'forceReply', forceReply: { force_reply: true } }, 1),
    );
    await run(
      sending(
        {
          chatId: '1',
          text: 'x',
          replyMarkup: 'replyKeyboardRemove',
          replyKeyboardRemove: { remove_keyboard: true },
        },
        1,
      ),
    );
    const [keyboard, force, remove] = telegram.called('sendMessage');
    expect(keyboard?.body.reply_markup).toEqual({
      keyboard: [[{ text: 'A' }, { text: 'B' }]],
      one_time_keyboard: true,
    });
    expect(force?.body.reply_markup).toEqual({ force_reply: true });
    expect(remove?.body.reply_markup).toEqual({ remove_keyboard: true });
  });
});

describe('Telegram node: every other operation', () => {
  const cases: Array<[string, Record<string, unknown>, string, Record<string, unknown>]> = [
    ['chat get', { resource: 'chat', operation: 'get', chatId: '-100' }, 'getChat', { chat_id: '-100' }],
    [
      'chat member',
      { resource: 'chat', operation: 'member', chatId: '-100', userId: '9' },
      'getChatMember',
      { chat_id: '-100', user_id: '9' },
    ],
    [
      'chat leave',
      { resource: 'chat', operation: 'leave', chatId: '-100' },
      'leaveChat',
      { chat_id: '-100' },
    ],
    [
      'chat description',
      { resource: 'chat', operation: 'setDescription', chatId: '-1', description: 'About' },
      'setChatDescription',
      { chat_id: '-1', description: 'About' },
    ],
    [
      'chat title',
      { resource: 'chat', operation: 'setTitle', chatId: '-1', title: 'Team' },
      'setChatTitle',
      { chat_id: '-1', title: 'Team' },
    ],
    [
      'callback answerQuery',
      {
        resource: 'callback',
        operation: 'answerQuery',
        queryId: 'q1',
        additionalFields: { text: 'Done', show_alert: true },
      },
      'answerCallbackQuery',
      { callback_query_id: 'q1', text: 'Done', show_alert: true },
    ],
    [
      'callback answerInlineQuery',
      {
        resource: 'callback',
        operation: 'answerInlineQuery',
        queryId: 'q2',
        results: '[]',
        additionalFields: { cache_time: 5 },
      },
      'answerInlineQuery',
      { inline_query_id: 'q2', results: '[]', cache_time: 5 },
    ],
    [
      'deleteMessage',
      { operation: 'deleteMessage', chatId: '1', messageId: '10' },
      'deleteMessage',
      { chat_id: '1', message_id: '10' },
    ],
    [
      'pinChatMessage',
      {
        operation: 'pinChatMessage',
        chatId: '1',
        messageId: '10',
        additionalFields: { disable_notification: true },
      },
      'pinChatMessage',
      { chat_id: '1', message_id: '10', disable_notification: true },
    ],
    [
      'unpinChatMessage',
      { operation: 'unpinChatMessage', chatId: '1', messageId: '10' },
      'unpinChatMessage',
      { chat_id: '1', message_id: '10' },
    ],
    [
      'editMessageText',
      {
        operation: 'editMessageText',
        chatId: '1',
        messageId: '10',
        text: 'new',
        additionalFields: { parse_mode: 'HTML' },
      },
      'editMessageText',
      { chat_id: '1', message_id: '10', text: 'new', parse_mode: 'HTML' },
    ],
    [
      'editMessageText inline',
      { operation: 'editMessageText', messageType: 'inlineMessage', inlineMessageId: 'im', text: 'new' },
      'editMessageText',
      { inline_message_id: 'im', text: 'new' },
    ],
    [
      'sendChatAction',
      { operation: 'sendChatAction', chatId: '1', action: 'upload_photo' },
      'sendChatAction',
      { chat_id: '1', action: 'upload_photo' },
    ],
    [
      'sendLocation',
      { operation: 'sendLocation', chatId: '1', latitude: 52.5, longitude: 13.4 },
      'sendLocation',
      { chat_id: '1', latitude: 52.5, longitude: 13.4 },
    ],
    [
      'sendPhoto by URL',
      {
        operation: 'sendPhoto',
        chatId: '1',
        file: 'https://example.com/a.jpg',
        additionalFields: { caption: 'A' },
      },
      'sendPhoto',
      { chat_id: '1', photo: 'https://example.com/a.jpg', caption: 'A' },
    ],
    [
      'sendDocument by id',
      { operation: 'sendDocument', chatId: '1', file: 'file-id' },
      'sendDocument',
      { chat_id: '1', document: 'file-id' },
    ],
    [
      'sendAudio',
      { operation: 'sendAudio', chatId: '1', file: 'aud', additionalFields: { performer: 'P', title: 'T' } },
      'sendAudio',
      { chat_id: '1', audio: 'aud', performer: 'P', title: 'T' },
    ],
    [
      'sendVideo',
      { operation: 'sendVideo', chatId: '1', file: 'vid', additionalFields: { width: 640, height: 480 } },
      'sendVideo',
      { chat_id: '1', video: 'vid', width: 640, height: 480 },
    ],
    [
      'sendAnimation',
      { operation: 'sendAnimation', chatId: '1', file: 'gif' },
      'sendAnimation',
      { chat_id: '1', animation: 'gif' },
    ],
    [
      'sendSticker',
      { operation: 'sendSticker', chatId: '1', file: 'st' },
      'sendSticker',
      { chat_id: '1', sticker: 'st' },
    ],
    [
      'sendMediaGroup',
      {
        operation: 'sendMediaGroup',
        chatId: '1',
        media: {
          media: [
            { type: 'photo', media: 'p1', additionalFields: { caption: 'one' } },
            { type: 'video', media: 'v1' },
          ],
        },
      },
      'sendMediaGroup',
      {
        chat_id: '1',
        media: [
          { type: 'photo', media: 'p1', caption: 'one' },
          { type: 'video', media: 'v1' },
        ],
      },
    ],
    [
      'file get without download',
      { resource: 'file', operation: 'get', fileId: 'F1', download: false },
      'getFile',
      { file_id: 'F1' },
    ],
  ];
  it.each(cases)('%s calls %s', async (_name, parameters, method, body) => {
    const { outcome, outputs } = await run(sending(parameters));
    expect(outcome.state.error).toBeNull();
    expect(telegram.calls.map((c) => c.method)).toEqual([method]);
    expect(telegram.calls[0]?.body).toEqual(body);
    expect(outputs.Telegram?.[0]?.ok).toBe(true);
  });

  it('getAdministrators outputs one item per administrator', async () => {
    const { outputs } = await run(sending({ resource: 'chat', operation: 'administrators', chatId: '-100' }));
    expect(telegram.calls[0]?.method).toBe('getChatAdministrators');
    expect(outputs.Telegram?.map((i) => (i.user as { first_name: string }).first_name)).toEqual([
      'Ada',
      'Bob',
    ]);
  });

  it('file get downloads the file into binary data, its type from its name', async () => {
    telegram.files.set('photos/F9.jpg', Buffer.from([0xff, 0xd8, 0xff, 0xe0]));
    const { outcome } = await run(sending({ resource: 'file', operation: 'get', fileId: 'F9' }));
    expect(outcome.state.error).toBeNull();
    const item = outcome.state.runData.Telegram?.[0]?.output[0]?.[0];
    expect(item?.json.result).toMatchObject({ file_path: 'photos/F9.jpg' });
    expect(item?.binary?.data).toMatchObject({ fileName: 'F9.jpg', mimeType: 'image/jpeg' });
    expect(Buffer.from(item?.binary?.data?.data ?? '', 'base64')).toEqual(
      Buffer.from([0xff, 0xd8, 0xff, 0xe0]),
    );
  });

  it('a resource without an operation runs that resource’s own default (n8n leaves it out of exports)', async () => {
    telegram.files.set('photos/F7.jpg', Buffer.from([0xff, 0xd8]));
    const file = await run(sending({ resource: 'file', fileId: 'F7' }));
    expect(file.outcome.state.error).toBeNull();
    const chat = await run(sending({ resource: 'chat', chatId: '-100' }));
    expect(chat.outcome.state.error).toBeNull();
    expect(telegram.calls.map((c) => [c.method, c.body])).toEqual([
      ['getFile', { file_id: 'F7' }],
      ['getChat', { chat_id: '-100' }],
    ]);
  });

  it('a binary upload goes out as multipart: the file under its field, the rest as text', async () => {
    const input: Item = {
      json: {},
      binary: { data: binaryOf(Buffer.from('PNGDATA'), 'image/png', 'chart.png') },
    };
    const { outcome } = await run(
      sending({
        operation: 'sendPhoto',
        chatId: '5',
        binaryData: true,
        replyMarkup: 'inlineKeyboard',
        inlineKeyboard: {
          rows: [{ row: { buttons: [{ text: 'ok', additionalFields: { callback_data: 'ok' } }] } }],
        },
        additionalFields: { caption: 'Chart' },
      }),
      [input],
    );
    expect(outcome.state.error).toBeNull();
    const [call] = telegram.calls;
    expect(call?.headers['content-type']).toMatch(/^multipart\/form-data; boundary=/);
    expect(call?.body).toEqual({
      chat_id: '5',
      caption: 'Chart',
      disable_notification: 'false',
      reply_markup: JSON.stringify({ inline_keyboard: [[{ text: 'ok', callback_data: 'ok' }]] }),
    });
    expect(call?.files).toEqual([
      { field: 'photo', fileName: 'chart.png', contentType: 'image/png', bytes: Buffer.from('PNGDATA') },
    ]);
  });
});

describe('Telegram node: unhappy paths', () => {
  it("Telegram's {ok: false} is the node's error naming its description; the token is in no message", async () => {
    telegram.refuse('sendMessage', 'Bad Request: chat not found');
    const { outcome } = await run(sending({ chatId: 'nobody', text: 'hi' }));
    expect(outcome.state.error?.message).toBe('Telegram refused sendMessage: Bad Request: chat not found');
    expect(JSON.stringify(outcome.state)).not.toContain(FakeTelegram.TOKEN);
  });

  it('a bad token is refused by Telegram (Unauthorized), named without the token', async () => {
    const { outcome } = await run(sending({ chatId: '1', text: 'hi' }, 1.2, 'wrong'));
    expect(outcome.state.error?.message).toBe('Telegram refused sendMessage: Unauthorized');
    expect(JSON.stringify(outcome.state)).not.toContain('not-a-bot');
  });

  it('a server that never answers ends the call at the outbound timeout', async () => {
    telegram.answer('sendMessage', 'hang');
    const started = Date.now();
    const { outcome } = await run(sending({ chatId: '1', text: 'hi' }));
    expect(outcome.state.error?.message).toMatch(/^Telegram sendMessage failed: .*timed out after 2000 ms/);
    expect(Date.now() - started).toBeLessThan(15_000);
    expect(JSON.stringify(outcome.state)).not.toContain(FakeTelegram.TOKEN);
  });

  it('an upload without a binary property, or without a file name, is a clear node error', async () => {
    const noBinary = await run(sending({ operation: 'sendDocument', chatId: '1', binaryData: true }));
    expect(noBinary.outcome.state.error?.message).toMatch(/binary file 'data'/);
    const unnamed = await run(sending({ operation: 'sendDocument', chatId: '1', binaryData: true }), [
      { json: {}, binary: { data: binaryOf(Buffer.from('x'), 'text/plain') } },
    ]);
    expect(unnamed.outcome.state.error?.message).toBe('File name is needed to sendDocument');
    expect(telegram.calls).toEqual([]);
  });

  it('a custom-form Send and Wait, unknown parameters and bad values are refused at save', async () => {
    await expect(
      run(sending({ operation: 'sendAndWait', chatId: '1', message: 'ok?', responseType: 'customForm' })),
    ).rejects.toThrow(/customForm.*not supported here/);
    await expect(run(sending({ chatId: '1', text: 'x', colour: 'red' }))).rejects.toThrow(/colour/);
    await expect(run(sending({ operation: 'sendLocation', chatId: '1', latitude: 123 }))).rejects.toThrow(
      /latitude/,
    );
  });
});

const PUBLIC_URL = 'https://bots.example.test';
const [dialect = 'sqlite'] = await testDialects();

/** A Telegram Trigger (its version and fields) → Telegram sendMessage echoing the text to its chat. */
function bot(webhookId: string, credential: string, version = 1.1, additionalFields = {}) {
  return {
    name: `bot ${webhookId}`,
    nodes: [
      {
        id: 'trigger',
        name: 'Telegram Trigger',
        type: 'n8n-nodes-base.telegramTrigger',
        typeVersion: version,
        position: [0, 0],
        webhookId,
        parameters: { updates: ['message'], additionalFields },
        credentials: { telegramApi: { id: credential, name: 'bot' } },
      },
      {
        id: 'reply',
        name: 'Reply',
        type: 'n8n-nodes-base.telegram',
        typeVersion: 1.2,
        position: [200, 0],
        parameters: {
          chatId: '={{ $json.message.chat.id }}',
          text: '=echo: {{ $json.message.text }}',
          additionalFields: { appendAttribution: false },
        },
        credentials: { telegramApi: { id: credential, name: 'bot' } },
      },
    ],
    connections: { 'Telegram Trigger': { main: [[{ node: 'Reply', type: 'main', index: 0 }]] } },
    settings: {},
  };
}

const update = (text: string, chat = 77, from = 77) => ({
  update_id: 1,
  message: {
    message_id: 3,
    from: { id: from, is_bot: false, first_name: 'Ada' },
    chat: { id: chat, type: 'private' },
    date: 1,
    text,
  },
});

describe(`Telegram Trigger over HTTP, platform on ${dialect}`, () => {
  let p: TestPlatform;
  let credential = '';

  beforeAll(async () => {
    p = await workflowPlatform(dialect, { PUBLIC_URL });
    await p.ctx.apis.workflows?.startWorker();
    credential = await createCredential(p, 'bot', 'telegramApi', {
      accessToken: FakeTelegram.TOKEN,
      baseUrl: telegram.base,
    });
  });
  afterAll(() => p.close());

  const deliver = (path: string, body: unknown, secret?: string) =>
    p.request({
      method: 'POST',
      url: `/webhook/${path}`,
      key: null,
      payload: body as object,
      headers: secret === undefined ? {} : { 'x-telegram-bot-api-secret-token': secret },
    });

  it('activation calls setWebhook with the public URL and a secret; a delivery with it runs the workflow', async () => {
    const id = await createWorkflow(p, bot('tg-echo', credential));
    await activate(p, id);
    const [set] = telegram.called('setWebhook');
    expect(set?.body).toEqual({
      url: `${PUBLIC_URL}/webhook/tg-echo/webhook`,
      allowed_updates: ['message'],
      secret_token: expect.stringMatching(/^[A-Za-z0-9_-]{20,256}$/),
    });
    const secret = String(set?.body.secret_token);

    const res = await deliver('tg-echo/webhook', update('hi there'), secret);
    expect(res.statusCode).toBe(200);
    const executionId = (res.json() as { executionId: string }).executionId;
    const execution = await settled(p, executionId);
    expect(execution.status).toBe('success');
    const sent = await until(() => telegram.called('sendMessage')[0], 'the reply');
    expect(sent.body).toMatchObject({ chat_id: 77, text: 'echo: hi there' });
    // The trigger's item is the update itself, and the secret header is kept out of the run data.
    expect(JSON.stringify(execution)).not.toContain(secret);
  });

  it('a delivery without the secret header, or with another, is refused with 403 and runs nothing', async () => {
    const id = await createWorkflow(p, bot('tg-secret', credential));
    await activate(p, id);
    telegram.calls.length = 0;
    const missing = await deliver('tg-secret/webhook', update('x'));
    const wrong = await deliver('tg-secret/webhook', update('x'), 'guessed');
    for (const res of [missing, wrong]) {
      expect(res.statusCode).toBe(403);
      expect(res.json()).toMatchObject({
        error: true,
        code: 'FORBIDDEN',
        message: 'Provided secret is not valid',
      });
    }
    const list = await p.request({ method: 'GET', url: `/api/v1/executions?workflowId=${id}` });
    expect((list.json() as { data: unknown[] }).data).toEqual([]);
    expect(telegram.calls).toEqual([]);
  });

  it('deactivation calls deleteWebhook, and the path no longer answers', async () => {
    const id = await createWorkflow(p, bot('tg-off', credential));
    await activate(p, id);
    const secret = String(telegram.called('setWebhook').at(-1)?.body.secret_token);
    telegram.calls.length = 0;
    const res = await p.request({ method: 'POST', url: `/api/v1/workflows/${id}/deactivate` });
    expect(res.statusCode).toBe(200);
    expect(telegram.calls.map((c) => c.method)).toEqual(['deleteWebhook']);
    expect((await deliver('tg-off/webhook', update('late'), secret)).statusCode).toBe(404);
  });

  it('saving an active workflow registers its new version; a trigger it no longer has is withdrawn', async () => {
    const id = await createWorkflow(p, bot('tg-saved', credential));
    await activate(p, id);
    telegram.calls.length = 0;
    const again = bot('tg-saved', credential);
    const put = await p.request({ method: 'PUT', url: `/api/v1/workflows/${id}`, payload: again });
    expect(put.statusCode).toBe(200);
    expect(telegram.calls.map((c) => c.method)).toEqual(['setWebhook']);
    telegram.calls.length = 0;
    const moved = bot('tg-moved', credential);
    expect(
      (await p.request({ method: 'PUT', url: `/api/v1/workflows/${id}`, payload: moved })).statusCode,
    ).toBe(200);
    // The old registration is withdrawn before the new one: Telegram keeps one webhook per bot.
    expect(telegram.calls.map((c) => [c.method, c.body.url])).toEqual([
      ['deleteWebhook', undefined],
      ['setWebhook', `${PUBLIC_URL}/webhook/tg-moved/webhook`],
    ]);
    await p.request({ method: 'POST', url: `/api/v1/workflows/${id}/deactivate` });
  });

  it('moving an active trigger to another bot withdraws the first bot’s webhook before registering the second', async () => {
    const other = await createCredential(p, 'bot B', 'telegramApi', {
      accessToken: FakeTelegram.OTHER_TOKEN,
      baseUrl: telegram.base,
    });
    const id = await createWorkflow(p, bot('tg-swap', credential));
    await activate(p, id);
    telegram.calls.length = 0;
    const put = await p.request({
      method: 'PUT',
      url: `/api/v1/workflows/${id}`,
      payload: bot('tg-swap', other),
    });
    expect(put.statusCode, put.body).toBe(200);
    // Same path, another bot: bot A no longer points at the platform.
    expect(telegram.calls.map((c) => [c.method, c.token])).toEqual([
      ['deleteWebhook', FakeTelegram.TOKEN],
      ['setWebhook', FakeTelegram.OTHER_TOKEN],
    ]);
    const set = telegram.called('setWebhook')[0];
    expect(set?.body.url).toBe(`${PUBLIC_URL}/webhook/tg-swap/webhook`);
    // Deliveries now carry bot B's secret; bot A's is refused.
    const secretB = String(set?.body.secret_token);
    const res = await deliver('tg-swap/webhook', update('from B'), secretB);
    expect(res.statusCode).toBe(200);
    await settled(p, (res.json() as { executionId: string }).executionId);
    await p.request({ method: 'POST', url: `/api/v1/workflows/${id}/deactivate` });
  });

  it('a delivery is refused (503) while the credential’s token is blank: HMAC of the path with it is public', async () => {
    const emptied = await createCredential(p, 'bot emptied', 'telegramApi', {
      accessToken: FakeTelegram.TOKEN,
      baseUrl: telegram.base,
    });
    const id = await createWorkflow(p, bot('tg-empty', emptied));
    await activate(p, id);
    const patch = await p.request({
      method: 'PATCH',
      url: `/api/v1/credentials/${emptied}`,
      payload: { data: { accessToken: '  ', baseUrl: telegram.base } },
    });
    // An empty token is refused by the credential API; blanks pass it, and empty data may be stored
    // by other means: both have a secret anyone can compute from the path.
    expect(patch.statusCode, patch.body).toBe(200);
    for (const token of ['  ', '']) {
      const guessed = telegramSecret(token, 'tg-empty/webhook');
      const res = await deliver('tg-empty/webhook', update('x'), guessed);
      expect(res.statusCode).toBe(503);
      expect(res.json()).toMatchObject({
        error: true,
        code: 'SERVICE_UNAVAILABLE',
        message: "The webhook's credential has no token to check deliveries with",
      });
    }
    const list = await p.request({ method: 'GET', url: `/api/v1/executions?workflowId=${id}` });
    expect((list.json() as { data: unknown[] }).data).toEqual([]);
  });

  it('an activation Telegram refuses is a 502 naming its reason, and the workflow stays inactive', async () => {
    telegram.refuse('setWebhook', 'Bad Request: bad webhook: HTTPS url must be provided for webhook');
    const id = await createWorkflow(p, bot('tg-refused', credential));
    const res = await p.request({ method: 'POST', url: `/api/v1/workflows/${id}/activate` });
    expect(res.statusCode).toBe(502);
    expect(res.json()).toMatchObject({
      code: 'UPSTREAM_ERROR',
      message:
        "Node 'Telegram Trigger' could not be registered: Telegram refused setWebhook: Bad Request: bad webhook: HTTPS url must be provided for webhook",
    });
    expect(res.body).not.toContain(FakeTelegram.TOKEN);
    const wf = await p.request({ method: 'GET', url: `/api/v1/workflows/${id}` });
    expect((wf.json() as { active: boolean }).active).toBe(false);
    telegram.reset();
  });

  it('v1.2 starts nothing for a chat or user outside chatIds / userIds (answered 200)', async () => {
    const id = await createWorkflow(p, bot('tg-only', credential, 1.2, { chatIds: '10, 11', userIds: '5' }));
    await activate(p, id);
    const secret = String(telegram.called('setWebhook').at(-1)?.body.secret_token);
    const other = await deliver('tg-only/webhook', update('x', 12, 5), secret);
    expect(other.statusCode).toBe(200);
    expect(other.json()).toEqual({});
    const stranger = await deliver('tg-only/webhook', update('x', 11, 6), secret);
    expect(stranger.json()).toEqual({});
    const listed = await deliver('tg-only/webhook', update('in', 11, 5), secret);
    const execution = await settled(p, (listed.json() as { executionId: string }).executionId);
    expect(execution.status).toBe('success');
    const list = await p.request({ method: 'GET', url: `/api/v1/executions?workflowId=${id}` });
    expect((list.json() as { data: unknown[] }).data).toHaveLength(1);
  });

  it('download fetches the message photo into binary data (getFile, then the file)', async () => {
    telegram.files.set('photos/big.jpg', Buffer.from('JPEGBYTES'));
    const id = await createWorkflow(p, bot('tg-photo', credential, 1.1, { download: true }));
    await activate(p, id);
    const secret = String(telegram.called('setWebhook').at(-1)?.body.secret_token);
    const photo = {
      update_id: 2,
      message: {
        message_id: 4,
        chat: { id: 77, type: 'private' },
        date: 1,
        photo: [
          { file_id: 'small', width: 90, height: 90 },
          { file_id: 'medium', width: 320, height: 320 },
          { file_id: 'big', width: 800, height: 800 },
        ],
      },
    };
    const res = await deliver('tg-photo/webhook', photo, secret);
    const execution = (await settled(p, (res.json() as { executionId: string }).executionId)) as {
      data: {
        resultData: {
          runData: Record<
            string,
            Array<{
              data: { main: Array<Array<{ binary?: Record<string, { fileName?: string; data?: string }> }>> };
            }>
          >;
        };
      };
    };
    expect(telegram.called('getFile')[0]?.body).toEqual({ file_id: 'big' });
    const item = execution.data.resultData.runData['Telegram Trigger']?.[0]?.data.main[0]?.[0];
    expect(item?.binary?.data?.fileName).toBe('big.jpg');
  });
});

describe(`Telegram Send and Wait for Response, platform on ${dialect}`, () => {
  let p: TestPlatform;
  let credential = '';

  beforeAll(async () => {
    p = await workflowPlatform(dialect, { PUBLIC_URL });
    await p.ctx.apis.workflows?.startWorker();
    credential = await createCredential(p, 'bot', 'telegramApi', {
      accessToken: FakeTelegram.TOKEN,
      baseUrl: telegram.base,
    });
  });
  afterAll(() => p.close());

  /** Trigger → Send and Wait (its parameters) → a Set that reads the answer. */
  function asking(webhookId: string, parameters: Record<string, unknown>) {
    const def = bot(webhookId, credential) as unknown as {
      nodes: Array<Record<string, unknown>>;
      connections: Record<string, unknown>;
    };
    def.nodes[1] = {
      ...def.nodes[1],
      parameters: { operation: 'sendAndWait', chatId: '500', ...parameters },
    };
    def.nodes.push({
      id: 'after',
      name: 'After',
      type: 'n8n-nodes-base.set',
      typeVersion: 3.4,
      position: [400, 0],
      parameters: {
        assignments: {
          assignments: [
            { id: 'a', name: 'answer', type: 'string', value: '={{ JSON.stringify($json.data) }}' },
          ],
        },
        options: {},
      },
    });
    def.connections.Reply = { main: [[{ node: 'After', type: 'main', index: 0 }]] };
    return def;
  }

  async function start(webhookId: string, parameters: Record<string, unknown>) {
    const id = await createWorkflow(p, asking(webhookId, parameters));
    await activate(p, id);
    const secret = String(telegram.called('setWebhook').at(-1)?.body.secret_token);
    const res = await p.request({
      method: 'POST',
      url: `/webhook/${webhookId}/webhook`,
      key: null,
      payload: update('help'),
      headers: { 'x-telegram-bot-api-secret-token': secret },
    });
    const executionId = (res.json() as { executionId: string }).executionId;
    await settled(p, executionId);
    const sent = await until(() => telegram.called('sendMessage').at(-1), 'the question');
    const keyboard =
      (sent.body.reply_markup as { inline_keyboard: Array<Array<{ text: string; url: string }>> })
        .inline_keyboard[0] ?? [];
    return { executionId, sent, keyboard };
  }

  it('free text: the button opens the signed page; its answer resumes the run with {data: {text}}', async () => {
    const { executionId, sent, keyboard } = await start('tg-ask', {
      message: 'Take over?',
      responseType: 'freeText',
      options: { appendAttribution: false },
    });
    expect(sent.body).toMatchObject({ chat_id: '500', text: 'Take over?', parse_mode: 'Markdown' });
    expect(keyboard).toHaveLength(1);
    expect(keyboard[0]?.text).toBe('Respond');
    expect(keyboard[0]?.url).toMatch(new RegExp(`^${PUBLIC_URL}/form-waiting/${executionId}\\?signature=`));
    const path = (keyboard[0]?.url ?? '').slice(PUBLIC_URL.length);

    const page = await p.request({ method: 'GET', url: path, key: null });
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('Response');
    const answer = await p.request({ method: 'POST', url: path, key: null, payload: { text: 'all done' } });
    expect(answer.statusCode).toBe(200);
    const execution = (await settled(p, executionId, 20_000, ['waiting'])) as {
      status: string;
      data: {
        resultData: { runData: Record<string, Array<{ data: { main: Array<Array<{ json: unknown }>> } }>> };
      };
    };
    expect(execution.status).toBe('success');
    expect(execution.data.resultData.runData.After?.[0]?.data.main[0]?.[0]?.json).toEqual({
      answer: '{"text":"all done"}',
    });
    // Without the signature the page is refused.
    const unsigned = await p.request({ method: 'GET', url: `/form-waiting/${executionId}`, key: null });
    expect(unsigned.statusCode).toBe(401);
  });

  it('approval with two buttons: the decline link resumes with {data: {approved: false}}; bots decide nothing', async () => {
    const { executionId, sent, keyboard } = await start('tg-approve', {
      message: 'Refund?',
      approvalOptions: { values: { approvalType: 'double' } },
    });
    expect(sent.body.text).toBe('Refund?\n\n_This message was sent automatically by a workflow_');
    expect(keyboard.map((b) => b.text)).toEqual(['❌ Decline', '✅ Approve']);
    const decline = (keyboard[0]?.url ?? '').slice(PUBLIC_URL.length);
    expect(decline).toMatch(/&approved=false$/);
    const preview = await p.request({
      method: 'GET',
      url: decline,
      key: null,
      headers: { 'user-agent': 'TelegramBot (like TwitterBot)' },
    });
    expect(preview.body).toBe('');
    const still = await p.request({ method: 'GET', url: `/api/v1/executions/${executionId}` });
    expect((still.json() as { status: string }).status).toBe('waiting');

    const click = await p.request({ method: 'GET', url: decline, key: null });
    expect(click.statusCode).toBe(200);
    expect(click.body).toContain('Got it, thanks');
    const execution = (await settled(p, executionId, 20_000, ['waiting'])) as {
      data: {
        resultData: { runData: Record<string, Array<{ data: { main: Array<Array<{ json: unknown }>> } }>> };
      };
    };
    expect(execution.data.resultData.runData.After?.[0]?.data.main[0]?.[0]?.json).toEqual({
      answer: '{"approved":false}',
    });
  });

  it('a custom form is refused at save, naming what is supported', async () => {
    const res = await p.request({
      method: 'POST',
      url: '/api/v1/workflows',
      payload: asking('tg-form', { message: 'x', responseType: 'customForm' }),
    });
    expect(res.statusCode).toBe(400);
    expect(res.body).toContain("use 'approval' or 'freeText'");
  });
});
