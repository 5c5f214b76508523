import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createOutboundHttp } from '../../src/core/http/outbound.js';
import { binaryOf } from '../../src/modules/workflows/engine/binary.js';
import type { EngineDeps, Item, WorkflowDefinition } from '../../src/modules/workflows/engine/types.js';
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

  it('sendAndWait, unknown parameters and bad values are refused at save', async () => {
    await expect(run(sending({ operation: 'sendAndWait', chatId: '1', message: 'ok?' }))).rejects.toThrow(
      /sendAndWait.*not supported here/,
    );
    await expect(run(sending({ chatId: '1', text: 'x', colour: 'red' }))).rejects.toThrow(/colour/);
    await expect(run(sending({ operation: 'sendLocation', chatId: '1', latitude: 123 }))).rejects.toThrow(
      /latitude/,
    );
  });
});
