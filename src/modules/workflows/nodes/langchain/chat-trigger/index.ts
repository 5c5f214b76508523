import { type Static, Type } from 'typebox';
import type { ChatMessage } from '../../../../llm/index.js';
import { isExpression } from '../../../engine/expressions.js';
import { defineNode, output } from '../../../engine/node-type.js';
import { withDefaults } from '../../../engine/parameters.js';
import {
  type ChatInfo,
  credentialRefOf,
  type Item,
  type Json,
  type WorkflowNode,
} from '../../../engine/types.js';
import type { WebhookNodeInfo } from '../../../engine/webhook-nodes.js';
import { WebhookParameters, type WebhookParams } from '../../platform/webhook/index.js';
import { LANGCHAIN, supplied } from '../ai-parts.js';

const Options = Type.Object(
  {
    allowFileUploads: Type.Optional(Type.Boolean()),
    allowedFilesMimeTypes: Type.Optional(Type.String({ maxLength: 1_000 })),
    allowedOrigins: Type.Optional(Type.String({ maxLength: 4_000 })),
    customCss: Type.Optional(Type.String({ maxLength: 100_000 })),
    getStarted: Type.Optional(Type.String({ maxLength: 1_000 })),
    inputFieldPlaceholder: Type.Optional(Type.String({ maxLength: 1_000 })),
    /** n8n's hosted chat's "Input Placeholder" (the name its exports carry from v1.1). */
    inputPlaceholder: Type.Optional(Type.String({ maxLength: 1_000 })),
    loadPreviousSession: Type.Optional(Type.Enum(['notSupported', 'memory', 'manually'] as const)),
    responseMode: Type.Optional(Type.Enum(['lastNode', 'responseNode', 'streaming'] as const)),
    showWelcomeScreen: Type.Optional(Type.Boolean()),
    subtitle: Type.Optional(Type.String({ maxLength: 1_000 })),
    title: Type.Optional(Type.String({ maxLength: 1_000 })),
  },
  { additionalProperties: false, default: {} },
);

const Parameters = Type.Object(
  {
    public: Type.Boolean({ default: false }),
    mode: Type.Enum(['hostedChat', 'webhook'] as const, { default: 'hostedChat' }),
    authentication: Type.Enum(['none', 'basicAuth', 'n8nUserAuth'] as const, { default: 'none' }),
    initialMessages: Type.Optional(Type.String({ maxLength: 10_000 })),
    availableInChat: Type.Optional(Type.Boolean()),
    agentName: Type.Optional(Type.String({ maxLength: 200 })),
    agentDescription: Type.Optional(Type.String({ maxLength: 2_000 })),
    options: Options,
    notice: Type.Optional(Type.String()),
  },
  { additionalProperties: false },
);

/** The most of a chat message this trigger passes on (a chat turn, not a document upload). */
const MAX_CHAT_BYTES = 256 * 1024;

/**
 * n8n's Chat Trigger ("When chat message received"). Made public, it is reached as n8n's chat webhook:
 * `POST /webhook/{webhookId}/chat` with `{action: 'sendMessage', sessionId, chatInput}` (what n8n's
 * `@n8n/chat` widget sends); the answer is the last node's first item (`{output}` of an agent), or what a
 * Respond to Webhook node answers. Its item is the message itself, as in n8n: `{sessionId, action,
 * chatInput}`. In hosted mode `GET` on the same path is the chat page (the platform's own, speaking the
 * same webhook); `allowedOrigins` decides which other origins' pages may read the answers. The widget's
 * `loadPreviousSession` action answers the attached memory's messages of that session (n8n's `{data}`,
 * LangChain's serialized messages) without running the rest. With `responseMode: 'streaming'` the answer
 * is n8n's JSON lines: the chunks the nodes send (an AI Agent's text as the model writes it), or the
 * last node's answer as one chunk when none streams.
 */
export const chatTriggerNode = defineNode({
  type: `${LANGCHAIN}.chatTrigger`,
  versions: [1, 1.1, 1.2, 1.3, 1.4],
  schema: Parameters,
  trigger: true,
  inputs: 0,
  webhook: { parse: chatWebhook },
  // With `loadPreviousSession: 'memory'`, the memory the session's earlier messages are read from.
  aiInputs: ['ai_memory'],
  check(params) {
    const problems: Array<{ path: string; message: string }> = [];
    // Refused rather than ignored: the chat would lose its history without saying so.
    if (params.options.loadPreviousSession === 'manually')
      problems.push({
        path: 'parameters.options.loadPreviousSession',
        message: "loading a previous session 'manually' is not supported here: use 'memory'",
      });
    if (isExpression(params.options.customCss ?? ''))
      problems.push({
        path: 'parameters.options.customCss',
        message: 'must be fixed: it styles the chat page, which is made before any message',
      });
    // n8n's own editor login has no counterpart here: an open chat would be worse than a refusal.
    if (params.authentication === 'n8nUserAuth')
      problems.push({
        path: 'parameters.authentication',
        message: "n8n user authentication is not available here: use 'basicAuth' (or 'none')",
      });
    return problems;
  },
  async execute(ctx) {
    const items = ctx.items.length > 0 ? ctx.items : [{ json: {} }];
    const chat = items.map(chatItem);
    const asked = chat.findIndex((item) => item.json.action === 'loadPreviousSession');
    if (asked < 0) return output(chat);
    // n8n's widget asks for the session's earlier messages when it opens; nothing else runs.
    const p = await ctx.params(asked);
    const memory = p.options.loadPreviousSession === 'memory' ? ctx.subNodes('ai_memory')[0] : undefined;
    const store = memory ? await supplied(memory, asked, 'memory') : undefined;
    // Only the caller's own session: with a key fixed in the memory node, every visitor of a public
    // chat would read the one shared conversation.
    if (store && !store.sessionFromInput)
      return {
        kind: 'respond',
        output: [[]],
        response: {
          statusCode: 400,
          headers: {},
          body: {
            message:
              "loadPreviousSession needs the memory's session id from the chat input (sessionIdType 'fromInput'); a fixed session key would show every visitor the same conversation",
          },
        },
      };
    const messages = store ? await store.load() : [];
    return {
      kind: 'respond',
      output: [[]],
      response: { statusCode: 200, headers: {}, body: { data: messages.flatMap(langChainMessage) } },
    };
  },
});

/** A chat turn as LangChain serializes a message (`toJSON()`), which n8n's chat widget reads. */
function langChainMessage(message: ChatMessage): Json[] {
  const content = typeof message.content === 'string' ? message.content : null;
  if (content === null || (message.role !== 'user' && message.role !== 'assistant')) return [];
  const human = message.role === 'user';
  const kwargs: Record<string, Json> = { content, additional_kwargs: {}, response_metadata: {} };
  if (!human) Object.assign(kwargs, { tool_calls: [], invalid_tool_calls: [] });
  return [
    {
      lc: 1,
      type: 'constructor',
      id: ['langchain_core', 'messages', human ? 'HumanMessage' : 'AIMessage'],
      kwargs,
    },
  ];
}

/** A webhook call's item (`{headers, params, query, body}`) as n8n's chat item: the body's fields. */
function chatItem(item: Item): Item {
  const json = item.json;
  const fromWebhook = 'body' in json && 'headers' in json && 'query' in json;
  if (!fromWebhook) return item;
  const body = json.body;
  const fields: Record<string, Json> =
    body && typeof body === 'object' && !Array.isArray(body) ? { ...(body as Record<string, Json>) } : {};
  if (typeof fields.chatInput === 'string' && fields.chatInput.length > MAX_CHAT_BYTES)
    fields.chatInput = fields.chatInput.slice(0, MAX_CHAT_BYTES);
  fields.action ??= 'sendMessage';
  return { json: fields, ...(item.binary ? { binary: item.binary } : {}) };
}

/** n8n's defaults for the hosted chat's texts. */
const DEFAULT_INITIAL_MESSAGES = 'Hi there! 👋\nMy name is Nathan. How can I assist you today?';

function chatWebhook(node: WorkflowNode): WebhookNodeInfo[] {
  const p = withDefaults(Parameters, node.parameters) as Static<typeof Parameters>;
  if (!p.public || p.authentication === 'n8nUserAuth') return [];
  const defaults = withDefaults(WebhookParameters, { path: 'chat' }) as WebhookParams;
  const hosted = p.mode === 'hostedChat';
  const chat: ChatInfo = {
    page: false,
    title: p.options.title ?? 'Hi there! 👋',
    subtitle: p.options.subtitle ?? "Start a chat. We're here to help you 24/7.",
    inputPlaceholder: p.options.inputPlaceholder ?? p.options.inputFieldPlaceholder ?? 'Type your question..',
    initialMessages: hosted
      ? (p.initialMessages ?? DEFAULT_INITIAL_MESSAGES).split('\n').filter((line) => line.trim() !== '')
      : [],
    allowedOrigins: p.options.allowedOrigins ?? '*',
    // n8n styles its hosted chat with it; a webhook-mode chat has no page.
    ...(hosted && p.options.customCss ? { customCss: p.options.customCss } : {}),
  };
  const entry = (httpMethod: 'POST' | 'GET', page: boolean): WebhookNodeInfo => ({
    nodeName: node.name,
    nodeId: node.id,
    path: `${node.webhookId ?? node.id}/chat`,
    dynamicPrefix: null,
    httpMethod,
    authentication: p.authentication === 'basicAuth' ? 'basicAuth' : 'none',
    credentialId:
      p.authentication === 'basicAuth' ? (credentialRefOf(node.credentials?.httpBasicAuth) ?? null) : null,
    responseMode: p.options.responseMode === 'responseNode' ? 'responseNode' : 'lastNode',
    ...(p.options.responseMode === 'streaming' ? { streaming: true } : {}),
    responseCode: 200,
    responseData: 'firstEntryJson',
    options: {
      ...defaults.options,
      bodyLimitBytes: MAX_CHAT_BYTES * 2,
      rawBody: false,
      dedupeKey: null,
      ipAllowList: null,
      binaryBody: 'never',
      binaryPropertyName: null,
      rawBodyAs: 'json',
    },
    responseBinaryPropertyName: 'data',
    chat: { ...chat, page },
  });
  return hosted ? [entry('POST', false), entry('GET', true)] : [entry('POST', false)];
}
