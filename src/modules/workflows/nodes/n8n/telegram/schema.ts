import { type Static, Type } from 'typebox';
import { shownWhen } from '../../../engine/display-options.js';

/**
 * n8n's Telegram node (v1, 1.1, 1.2) parameters: one object for every resource and operation, as n8n
 * describes them (Telegram.node.ts). Ids may come from expressions as numbers (a trigger's `chat.id`).
 */

const Id = Type.Union([Type.String({ maxLength: 1_000 }), Type.Number()], { default: '' });
/** An id among the additional fields: absent unless set (no default, so nothing is sent). */
const FieldId = Type.Union([Type.String({ maxLength: 1_000 }), Type.Number()]);
const Text = Type.Unknown({ default: '' });

export const RESOURCES = ['chat', 'callback', 'file', 'message'] as const;
export const OPERATIONS = [
  // chat
  'get',
  'administrators',
  'member',
  'leave',
  'setDescription',
  'setTitle',
  // callback
  'answerQuery',
  'answerInlineQuery',
  // message
  'deleteMessage',
  'editMessageText',
  'pinChatMessage',
  'sendAnimation',
  'sendAudio',
  'sendChatAction',
  'sendDocument',
  'sendLocation',
  'sendMediaGroup',
  'sendMessage',
  'sendAndWait',
  'sendPhoto',
  'sendSticker',
  'sendVideo',
  'unpinChatMessage',
] as const;

/** n8n's keyboard rows: `{rows: [{row: {buttons: [{text, additionalFields}]}}]}`. */
const Keyboard = Type.Object(
  {
    rows: Type.Optional(
      Type.Array(
        Type.Object(
          {
            row: Type.Optional(
              Type.Object(
                {
                  buttons: Type.Optional(
                    Type.Array(
                      Type.Object(
                        {
                          text: Type.Unknown({ default: '' }),
                          additionalFields: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
                        },
                        { additionalProperties: false },
                      ),
                      { maxItems: 100 },
                    ),
                  ),
                },
                { additionalProperties: false },
              ),
            ),
          },
          { additionalProperties: false },
        ),
        { maxItems: 100 },
      ),
    ),
  },
  { additionalProperties: false, default: {} },
);

/** The union of n8n's `additionalFields` collections (each operation shows its own). */
const AdditionalFields = Type.Object(
  {
    appendAttribution: Type.Optional(Type.Boolean()),
    caption: Type.Optional(Type.Unknown()),
    disable_notification: Type.Optional(Type.Boolean()),
    disable_web_page_preview: Type.Optional(Type.Boolean()),
    duration: Type.Optional(Type.Number({ minimum: 0 })),
    fileName: Type.Optional(Type.String({ maxLength: 1_000 })),
    height: Type.Optional(Type.Number({ minimum: 0 })),
    parse_mode: Type.Optional(Type.Enum(['Markdown', 'MarkdownV2', 'HTML'] as const)),
    performer: Type.Optional(Type.String({ maxLength: 1_000 })),
    reply_to_message_id: Type.Optional(FieldId),
    message_thread_id: Type.Optional(FieldId),
    title: Type.Optional(Type.String({ maxLength: 1_000 })),
    thumb: Type.Optional(Type.String({ maxLength: 10_000 })),
    width: Type.Optional(Type.Number({ minimum: 0 })),
    // callback: answerQuery / answerInlineQuery
    cache_time: Type.Optional(Type.Number({ minimum: 0 })),
    show_alert: Type.Optional(Type.Boolean()),
    text: Type.Optional(Type.Unknown()),
    url: Type.Optional(Type.String({ maxLength: 10_000 })),
    // file: get with download
    mimeType: Type.Optional(Type.String({ maxLength: 255 })),
  },
  { additionalProperties: false, default: {} },
);

const MediaEntry = Type.Object(
  {
    type: Type.Enum(['photo', 'video'] as const, { default: 'photo' }),
    media: Type.String({ default: '', maxLength: 10_000 }),
    additionalFields: Type.Optional(
      Type.Object(
        {
          caption: Type.Optional(Type.Unknown()),
          parse_mode: Type.Optional(Type.Enum(['Markdown', 'MarkdownV2', 'HTML'] as const)),
        },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false },
);

export const TelegramParameters = Type.Object(
  {
    // n8n's editor callout (no value of its own).
    preBuiltAgentsCalloutTelegram: Type.Optional(Type.String()),
    resource: Type.Enum(RESOURCES, { default: 'message' }),
    operation: Type.Enum(OPERATIONS, { default: 'sendMessage' }),
    chatId: Id,
    messageId: Id,
    userId: Id,
    description: Type.String({
      default: '',
      maxLength: 255,
      ...shownWhen({ operation: ['setDescription'] }),
    }),
    title: Type.String({ default: '', maxLength: 255, ...shownWhen({ operation: ['setTitle'] }) }),
    queryId: Id,
    results: Type.Unknown({ default: '', ...shownWhen({ operation: ['answerInlineQuery'] }) }),
    fileId: Id,
    download: Type.Boolean({ default: true, ...shownWhen({ resource: ['file'], operation: ['get'] }) }),
    messageType: Type.Enum(['inlineMessage', 'message'] as const, {
      default: 'message',
      ...shownWhen({ operation: ['editMessageText'] }),
    }),
    inlineMessageId: Id,
    binaryData: Type.Boolean({ default: false }),
    binaryPropertyName: Type.String({ default: 'data', maxLength: 1_000 }),
    file: Type.String({ default: '', maxLength: 10_000 }),
    action: Type.Enum(
      [
        'find_location',
        'record_audio',
        'record_video',
        'record_video_note',
        'typing',
        'upload_audio',
        'upload_document',
        'upload_photo',
        'upload_video',
        'upload_video_note',
      ] as const,
      { default: 'typing', ...shownWhen({ operation: ['sendChatAction'] }) },
    ),
    latitude: Type.Number({ default: 0, minimum: -90, maximum: 90 }),
    longitude: Type.Number({ default: 0, minimum: -180, maximum: 180 }),
    media: Type.Object(
      { media: Type.Optional(Type.Array(MediaEntry, { maxItems: 10 })) },
      { additionalProperties: false, default: {} },
    ),
    text: Text,
    replyMarkup: Type.Enum(
      ['none', 'forceReply', 'inlineKeyboard', 'replyKeyboard', 'replyKeyboardRemove'] as const,
      {
        default: 'none',
      },
    ),
    forceReply: Type.Object(
      { force_reply: Type.Optional(Type.Boolean()), selective: Type.Optional(Type.Boolean()) },
      { additionalProperties: false, default: {} },
    ),
    inlineKeyboard: Keyboard,
    replyKeyboard: Keyboard,
    replyKeyboardOptions: Type.Object(
      {
        resize_keyboard: Type.Optional(Type.Boolean()),
        one_time_keyboard: Type.Optional(Type.Boolean()),
        selective: Type.Optional(Type.Boolean()),
      },
      { additionalProperties: false, default: {} },
    ),
    replyKeyboardRemove: Type.Object(
      { remove_keyboard: Type.Optional(Type.Boolean()), selective: Type.Optional(Type.Boolean()) },
      { additionalProperties: false, default: {} },
    ),
    additionalFields: AdditionalFields,
    // n8n's Send and Wait for Response (its shared sendAndWait parameters; `customForm` is refused at save).
    message: Type.Unknown({ default: '', ...shownWhen({ operation: ['sendAndWait'] }) }),
    responseType: Type.Enum(['approval', 'freeText', 'customForm'] as const, {
      default: 'approval',
      ...shownWhen({ operation: ['sendAndWait'] }),
    }),
    approvalOptions: Type.Object(
      {
        values: Type.Optional(
          Type.Object(
            {
              approvalType: Type.Optional(Type.Enum(['single', 'double'] as const)),
              approveLabel: Type.Optional(Type.String({ maxLength: 200 })),
              disapproveLabel: Type.Optional(Type.String({ maxLength: 200 })),
            },
            { additionalProperties: false },
          ),
        ),
      },
      { additionalProperties: false, default: {} },
    ),
    defineForm: Type.Optional(Type.Unknown()),
    formFields: Type.Optional(Type.Unknown()),
    jsonOutput: Type.Optional(Type.Unknown()),
    options: Type.Object(
      {
        limitWaitTime: Type.Optional(
          Type.Object(
            {
              values: Type.Optional(
                Type.Object(
                  {
                    limitType: Type.Optional(Type.Enum(['afterTimeInterval', 'atSpecifiedTime'] as const)),
                    resumeAmount: Type.Optional(Type.Number({ minimum: 0 })),
                    resumeUnit: Type.Optional(Type.Enum(['minutes', 'hours', 'days'] as const)),
                    maxDateAndTime: Type.Optional(Type.String({ maxLength: 100 })),
                  },
                  { additionalProperties: false },
                ),
              ),
            },
            { additionalProperties: false },
          ),
        ),
        appendAttribution: Type.Optional(Type.Boolean()),
        messageButtonLabel: Type.Optional(Type.String({ maxLength: 200 })),
        responseFormTitle: Type.Optional(Type.String({ maxLength: 1_000 })),
        responseFormDescription: Type.Optional(Type.String({ maxLength: 10_000 })),
        responseFormButtonLabel: Type.Optional(Type.String({ maxLength: 200 })),
        responseFormCustomCss: Type.Optional(Type.String({ maxLength: 100_000 })),
      },
      { additionalProperties: false, default: {}, ...shownWhen({ operation: ['sendAndWait'] }) },
    ),
  },
  { additionalProperties: false },
);

export type TelegramParams = Static<typeof TelegramParameters>;
export type TelegramOperation = (typeof OPERATIONS)[number];

/**
 * n8n's default operation of each resource: n8n describes `operation` once per resource, each with its
 * own default, so an export leaves it out for the default one (`resource: 'file'` alone is `file: get`).
 */
const DEFAULT_OPERATION: Record<TelegramParams['resource'], TelegramOperation> = {
  chat: 'get',
  callback: 'answerQuery',
  file: 'get',
  message: 'sendMessage',
};

/** The parameters with the resource's own default operation when the node's parameters name none. */
export function withResourceOperation(p: TelegramParams, raw: Record<string, unknown>): TelegramParams {
  return raw.operation === undefined ? { ...p, operation: DEFAULT_OPERATION[p.resource] } : p;
}
