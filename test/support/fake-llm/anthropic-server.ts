/**
 * A fake Anthropic API speaking its real wire format: `/v1/messages` (a `message`, or SSE events
 * message_start, ping, content_block_start/delta/stop, message_delta, message_stop), `count_tokens`
 * and `/v1/models`. Errors are `{type: "error", error: {type, message}}`; `x-api-key` and
 * `anthropic-version` are required as Anthropic requires them.
 */
import type { IncomingMessage } from 'node:http';
import {
  asObject,
  type Exchange,
  echoChunks,
  type FakeFormat,
  type FakeLlmServer,
  fakeTokenCount,
  sendJson,
  startFake,
  streamFrames,
  toolCallsOf,
} from './fake-base.js';

export const FAKE_ANTHROPIC_MODELS = ['claude-sonnet-4-5'];
/** Characters per streamed piece of tool input JSON. */
export const FAKE_JSON_PIECE = 5;

export interface FakeAnthropicOptions {
  apiKey: string;
  models?: string[];
}

export async function startFakeAnthropic(options: FakeAnthropicOptions): Promise<FakeLlmServer> {
  return startFake(anthropicFormat(options), [...(options.models ?? FAKE_ANTHROPIC_MODELS)]);
}

const ERROR_TYPES: Record<number, string> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  403: 'permission_error',
  404: 'not_found_error',
  413: 'request_too_large',
  429: 'rate_limit_error',
  529: 'overloaded_error',
};

export function anthropicError(status: number, message: string) {
  return { type: 'error', error: { type: ERROR_TYPES[status] ?? 'api_error', message } };
}

function anthropicFormat(options: FakeAnthropicOptions): FakeFormat {
  return {
    basePath: '',
    sendError: (res, status, message) => sendJson(res, status, anthropicError(status, message)),
    failureMessage: (status) =>
      status === 529 ? 'Overloaded' : status === 429 ? 'Rate limited' : 'Internal server error',
    authorized: (req: IncomingMessage) => req.headers['x-api-key'] === options.apiKey,
    async handle(ex: Exchange) {
      const { method } = ex.req;
      if (typeof ex.req.headers['anthropic-version'] !== 'string')
        return sendJson(ex.res, 400, anthropicError(400, 'anthropic-version: header is required'));
      if (method === 'POST' && ex.path === '/v1/messages') return messages(ex);
      if (method === 'POST' && ex.path === '/v1/messages/count_tokens')
        return sendJson(ex.res, 200, { input_tokens: promptWords(asObject(ex.body)) });
      if (method === 'GET' && ex.path === '/v1/models')
        return sendJson(ex.res, 200, {
          data: ex.server.models.map((id) => ({
            type: 'model',
            id,
            display_name: id,
            created_at: '2025-09-29T00:00:00Z',
          })),
          has_more: false,
          first_id: ex.server.models[0] ?? null,
          last_id: ex.server.models.at(-1) ?? null,
        });
      sendJson(ex.res, 404, anthropicError(404, `Not found: ${method} ${ex.path}`));
    },
  };
}

/** Text of a message's content: a string, or its text blocks (and tool results' text). */
function blocksText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .map((b) => asObject(b))
    .map((b) => (b.type === 'text' ? String(b.text) : b.type === 'tool_result' ? blocksText(b.content) : ''))
    .filter(Boolean)
    .join('\n');
}

function promptWords(body: Record<string, unknown>): number {
  let total = typeof body.system === 'string' ? fakeTokenCount(body.system) : 0;
  for (const m of Array.isArray(body.messages) ? body.messages : [])
    total += fakeTokenCount(blocksText(asObject(m).content));
  return total;
}

/** The last user turn's text: what the fake echoes. */
function lastUserText(body: Record<string, unknown>): string {
  const list = Array.isArray(body.messages) ? body.messages : [];
  for (let i = list.length - 1; i >= 0; i--) {
    const m = asObject(list[i]);
    if (m.role === 'user') return blocksText(m.content);
  }
  return '';
}

async function messages(ex: Exchange): Promise<void> {
  const body = asObject(ex.body);
  if (typeof body.max_tokens !== 'number')
    return sendJson(ex.res, 400, anthropicError(400, 'max_tokens: Field required'));
  const model = body.model;
  if (typeof model !== 'string' || !ex.server.models.includes(model))
    return sendJson(ex.res, 404, anthropicError(404, `model: ${String(model)}`));
  const calls = toolCallsOf(ex.server.toolCall);
  let pieces = calls.length ? [] : echoChunks(lastUserText(body));
  let stop = calls.length ? 'tool_use' : 'end_turn';
  if (body.max_tokens < pieces.length) {
    pieces = pieces.slice(0, body.max_tokens);
    stop = 'max_tokens';
  }
  const input = promptWords(body);
  const output = calls.length ? calls.length * 5 : pieces.length;
  const id = `msg_fake${ex.server.requests.length}`;
  const message = (content: unknown[], stopReason: string | null, out: number) => ({
    id,
    type: 'message',
    role: 'assistant',
    model,
    content,
    stop_reason: stopReason,
    stop_sequence: null,
    usage: { input_tokens: input, output_tokens: out },
  });
  const toolBlocks = calls.map((call, i) => ({
    type: 'tool_use',
    id: `toolu_fake_${i}`,
    name: call.name,
    input: call.arguments,
  }));
  if (body.stream !== true) {
    const content = calls.length ? toolBlocks : [{ type: 'text', text: pieces.join('') }];
    return sendJson(ex.res, 200, message(content, stop, output));
  }
  const frames = [
    event('message_start', { type: 'message_start', message: message([], null, 1) }),
    event('ping', { type: 'ping' }),
  ];
  let index = 0;
  if (pieces.length) {
    frames.push(
      event('content_block_start', {
        type: 'content_block_start',
        index,
        content_block: { type: 'text', text: '' },
      }),
    );
    for (const piece of pieces)
      frames.push(
        event('content_block_delta', {
          type: 'content_block_delta',
          index,
          delta: { type: 'text_delta', text: piece },
        }),
      );
    frames.push(event('content_block_stop', { type: 'content_block_stop', index }));
    index++;
  }
  for (const block of toolBlocks) {
    frames.push(
      event('content_block_start', {
        type: 'content_block_start',
        index,
        content_block: { type: 'tool_use', id: block.id, name: block.name, input: {} },
      }),
    );
    const json = JSON.stringify(block.input);
    for (let at = 0; at < json.length; at += FAKE_JSON_PIECE)
      frames.push(
        event('content_block_delta', {
          type: 'content_block_delta',
          index,
          delta: { type: 'input_json_delta', partial_json: json.slice(at, at + FAKE_JSON_PIECE) },
        }),
      );
    frames.push(event('content_block_stop', { type: 'content_block_stop', index }));
    index++;
  }
  frames.push(
    event('message_delta', {
      type: 'message_delta',
      delta: { stop_reason: stop, stop_sequence: null },
      usage: { output_tokens: output },
    }),
  );
  frames.push(event('message_stop', { type: 'message_stop' }));
  await streamFrames(ex, 'text/event-stream; charset=utf-8', frames, {
    garbage: 'event: content_block_delta\ndata: {not json\n\n',
    error: event('error', anthropicError(529, 'Overloaded')),
  });
}

function event(name: string, data: unknown): string {
  return `event: ${name}\ndata: ${JSON.stringify(data)}\n\n`;
}
