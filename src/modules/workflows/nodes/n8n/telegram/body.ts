import { NodeOperationError } from '../../../engine/node-type.js';
import type { TelegramParams } from './schema.js';

/**
 * The attribution n8n appends to a sendMessage text from v1.1 unless `appendAttribution` is false
 * ("This message was sent automatically with n8n", linked): the same default, in this platform's words
 * and without n8n's tracking link.
 */
export const ATTRIBUTION = 'This message was sent automatically by a workflow';

/** The Bot API method and body of one item, as n8n's node builds them (Telegram.node.ts, GenericFunctions.ts). */
export interface TelegramCall {
  method: string;
  body: Record<string, unknown>;
  /** The multipart field of an upload from binary data (`photo`, `document`…), n8n's getPropertyName. */
  uploadField: string | null;
}

const SEND_FILE: Record<string, string> = {
  sendAnimation: 'animation',
  sendAudio: 'audio',
  sendDocument: 'document',
  sendPhoto: 'photo',
  sendSticker: 'sticker',
  sendVideo: 'video',
};

const CHAT_METHODS: Record<string, string> = {
  get: 'getChat',
  administrators: 'getChatAdministrators',
  leave: 'leaveChat',
  member: 'getChatMember',
  setDescription: 'setChatDescription',
  setTitle: 'setChatTitle',
};

export function telegramCall(p: TelegramParams, version: number): TelegramCall {
  const op = p.operation;
  const body: Record<string, unknown> = {};
  if (p.resource === 'callback') {
    if (op === 'answerQuery') {
      body.callback_query_id = p.queryId;
      Object.assign(body, p.additionalFields);
      return { method: 'answerCallbackQuery', body, uploadField: null };
    }
    if (op === 'answerInlineQuery') {
      body.inline_query_id = p.queryId;
      body.results = p.results;
      Object.assign(body, p.additionalFields);
      return { method: 'answerInlineQuery', body, uploadField: null };
    }
  } else if (p.resource === 'chat') {
    const method = CHAT_METHODS[op];
    if (method) {
      body.chat_id = p.chatId;
      if (op === 'member') body.user_id = p.userId;
      if (op === 'setDescription') body.description = p.description;
      if (op === 'setTitle') body.title = p.title;
      return { method, body, uploadField: null };
    }
  } else if (p.resource === 'file') {
    if (op === 'get') return { method: 'getFile', body: { file_id: p.fileId }, uploadField: null };
  } else {
    const fileField = SEND_FILE[op];
    if (fileField) {
      body.chat_id = p.chatId;
      body[fileField] = p.file;
      addAdditionalFields(p, body, version);
      return { method: op, body, uploadField: p.binaryData ? fileField : null };
    }
    switch (op) {
      case 'editMessageText':
        if (p.messageType === 'inlineMessage') body.inline_message_id = p.inlineMessageId;
        else {
          body.chat_id = p.chatId;
          body.message_id = p.messageId;
        }
        body.text = p.text;
        addAdditionalFields(p, body, version);
        return { method: op, body, uploadField: null };
      case 'deleteMessage':
      case 'unpinChatMessage':
        return { method: op, body: { chat_id: p.chatId, message_id: p.messageId }, uploadField: null };
      case 'pinChatMessage':
        body.chat_id = p.chatId;
        body.message_id = p.messageId;
        if (p.additionalFields.disable_notification) body.disable_notification = true;
        return { method: op, body, uploadField: null };
      case 'sendChatAction':
        return { method: op, body: { chat_id: p.chatId, action: p.action }, uploadField: null };
      case 'sendLocation':
        body.chat_id = p.chatId;
        body.latitude = p.latitude;
        body.longitude = p.longitude;
        addAdditionalFields(p, body, version);
        return { method: op, body, uploadField: null };
      case 'sendMessage':
        body.chat_id = p.chatId;
        body.text = p.text;
        addAdditionalFields(p, body, version);
        return { method: op, body, uploadField: null };
      case 'sendMediaGroup':
        body.chat_id = p.chatId;
        Object.assign(body, p.additionalFields);
        body.media = (p.media.media ?? []).map(({ additionalFields, ...entry }) => ({
          ...entry,
          ...additionalFields,
        }));
        return { method: op, body, uploadField: null };
    }
  }
  throw new NodeOperationError(`The operation "${op}" is not known for the resource "${p.resource}"`);
}

/** n8n's addAdditionalFields: the collection, sendMessage's defaults, then the reply markup. */
function addAdditionalFields(p: TelegramParams, body: Record<string, unknown>, version: number): void {
  const fields: Record<string, unknown> = { ...p.additionalFields };
  if (p.operation === 'sendMessage') {
    if (version >= 1.1 && fields.appendAttribution === undefined) fields.appendAttribution = true;
    if (!fields.parse_mode) fields.parse_mode = 'Markdown';
    // n8n's test for a link in the text: none, and no preview is wanted.
    if (!/(https?|ftp|file):\/\/\S+|www\.\S+|\S+\.\S+/.test(String(body.text)))
      body.disable_web_page_preview = true;
    if (fields.appendAttribution) {
      if (fields.parse_mode === 'Markdown') body.text = `${String(body.text)}\n\n_${ATTRIBUTION}_`;
      else if (fields.parse_mode === 'HTML') body.text = `${String(body.text)}\n\n<em>${ATTRIBUTION}</em>`;
    }
    if (version >= 1.2 && fields.disable_web_page_preview === undefined) body.disable_web_page_preview = true;
    delete fields.appendAttribution;
  }
  Object.assign(body, fields);
  if (p.operation === 'sendMediaGroup' || p.replyMarkup === 'none') return;
  if (p.replyMarkup === 'inlineKeyboard' || p.replyMarkup === 'replyKeyboard') {
    const rows = (p[p.replyMarkup].rows ?? []).flatMap((row) =>
      row.row?.buttons === undefined
        ? []
        : [row.row.buttons.map((button) => ({ text: button.text, ...button.additionalFields }))],
    );
    body.reply_markup =
      p.replyMarkup === 'inlineKeyboard'
        ? { inline_keyboard: rows }
        : { keyboard: rows, ...p.replyKeyboardOptions };
  } else if (p.replyMarkup === 'forceReply') body.reply_markup = { ...p.forceReply };
  else body.reply_markup = { ...p.replyKeyboardRemove };
}
