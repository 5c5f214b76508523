/**
 * A fake OpenAI API speaking its real wire format: `/v1/chat/completions` (a `chat.completion`, or SSE
 * `chat.completion.chunk` events ending `data: [DONE]`, with the usage chunk when
 * `stream_options.include_usage`), `/v1/embeddings` (floats or base64 float32), `/v1/models`. Errors
 * are `{error: {message, type, param, code}}`; a configured key is checked (401 otherwise).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  asObject,
  type Exchange,
  echoChunks,
  type FakeFormat,
  type FakeLlmServer,
  fakeEmbedding,
  fakeTokenCount,
  lastUserText,
  promptTokens,
  sendJson,
  startFake,
  streamFrames,
  toolCallsOf,
} from './fake-base.js';

export interface FakeOpenAiOptions {
  /** When set, requests must carry `Authorization: Bearer <apiKey>`. */
  apiKey?: string;
  models?: string[];
  /** Embedding dimensions when the request names none (default 8). */
  dims?: number;
}

export const FAKE_OPENAI_MODELS = ['gpt-4o-mini', 'text-embedding-3-small'];
/** Characters per streamed piece of tool call arguments. */
export const FAKE_ARGUMENT_PIECE = 7;
const CREATED = 1_735_689_600;
const FINGERPRINT = 'fp_fake';

/** Starts a fake OpenAI; `url` is `http://127.0.0.1:PORT/v1`. */
export async function startFakeOpenAi(options: FakeOpenAiOptions = {}): Promise<FakeLlmServer> {
  return startFake(openAiFormat(options), [...(options.models ?? FAKE_OPENAI_MODELS)]);
}

/** OpenAI's error body for a status. */
export function openAiError(status: number, message: string): { error: Record<string, unknown> } {
  const [type, code] =
    status === 401
      ? ['invalid_request_error', 'invalid_api_key']
      : status === 404
        ? ['invalid_request_error', 'model_not_found']
        : status === 429
          ? ['requests', 'rate_limit_exceeded']
          : status >= 500
            ? ['server_error', null]
            : ['invalid_request_error', null];
  return { error: { message, type, param: null, code } };
}

function openAiFormat(options: FakeOpenAiOptions): FakeFormat {
  const dims = options.dims ?? 8;
  return {
    basePath: '/v1',
    sendError: (res, status, message) => sendJson(res, status, openAiError(status, message)),
    failureMessage: (status) =>
      status === 429
        ? 'Rate limit reached for requests. Please try again in 20ms.'
        : status === 503
          ? 'The server is overloaded or not ready yet.'
          : 'The server had an error while processing your request. Sorry about that!',
    authorized: (req: IncomingMessage) =>
      options.apiKey === undefined || req.headers.authorization === `Bearer ${options.apiKey}`,
    async handle(ex: Exchange) {
      const { method } = ex.req;
      if (method === 'POST' && ex.path === '/v1/chat/completions') return chat(ex);
      if (method === 'POST' && ex.path === '/v1/embeddings') return embeddings(ex, dims);
      if (method === 'POST' && ex.path === '/v1/completions') return completions(ex);
      if (method === 'POST' && ex.path === '/v1/moderations') {
        const input = asObject(ex.body).input;
        const texts = Array.isArray(input) ? input : [input];
        return sendJson(ex.res, 200, {
          id: 'modr-fake',
          model: 'omni-moderation-latest',
          results: texts.map((t) => ({ flagged: String(t).includes('kill'), categories: {} })),
        });
      }
      if (method === 'GET' && ex.path === '/v1/models') {
        return sendJson(ex.res, 200, { object: 'list', data: ex.server.models.map(modelObject) });
      }
      if (method === 'GET' && ex.path.startsWith('/v1/models/')) {
        const id = decodeURIComponent(ex.path.slice('/v1/models/'.length));
        if (ex.server.models.includes(id)) return sendJson(ex.res, 200, modelObject(id));
        return sendJson(ex.res, 404, openAiError(404, notFound(id)));
      }
      sendJson(ex.res, 404, openAiError(404, `Invalid URL (${method} ${ex.path})`));
    },
  };
}

function modelObject(id: string): Record<string, unknown> {
  return { id, object: 'model', created: CREATED, owned_by: 'system' };
}

function notFound(model: string): string {
  return `The model \`${model}\` does not exist or you do not have access to it.`;
}

/** The requested model, or null after answering 400/404 as OpenAI does. */
function requireModel(ex: Exchange): string | null {
  const model = asObject(ex.body).model;
  if (typeof model !== 'string' || model === '') {
    sendJson(ex.res, 400, openAiError(400, 'You must provide a model parameter.'));
    return null;
  }
  if (!ex.server.models.includes(model)) {
    sendJson(ex.res, 404, openAiError(404, notFound(model)));
    return null;
  }
  return model;
}

async function chat(ex: Exchange): Promise<void> {
  const body = asObject(ex.body);
  if (!Array.isArray(body.messages) || body.messages.length === 0) {
    sendJson(ex.res, 400, {
      error: { ...openAiError(400, "'messages' is a required property").error, param: 'messages' },
    });
    return;
  }
  const model = requireModel(ex);
  if (model === null) return;
  const text = lastUserText(body.messages);
  const calls = toolCallsOf(ex.server.toolCall).map((call, i) => ({
    id: `call_fake_${i}`,
    name: call.name,
    arguments: JSON.stringify(call.arguments),
  }));
  const wantsJson = asObject(body.response_format).type;
  let pieces =
    wantsJson === 'json_object' || wantsJson === 'json_schema'
      ? [JSON.stringify({ echo: text })]
      : echoChunks(text);
  let finish = 'stop';
  const max = body.max_completion_tokens ?? body.max_tokens;
  if (calls.length) {
    pieces = [];
    finish = 'tool_calls';
  } else if (typeof max === 'number' && max < pieces.length) {
    pieces = pieces.slice(0, max);
    finish = 'length';
  }
  const prompt = promptTokens(body.messages);
  const completion = calls.length
    ? calls.reduce((sum, call) => sum + fakeTokenCount(call.arguments) + 1, 0)
    : pieces.length;
  const usage = { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion };
  const id = `chatcmpl-fake${ex.server.requests.length}`;

  if (body.stream !== true) {
    if (ex.server.garbage) return sendGarbage(ex.res);
    const message: Record<string, unknown> = {
      role: 'assistant',
      content: calls.length ? null : pieces.join(''),
      refusal: null,
    };
    if (calls.length) {
      message.tool_calls = calls.map((c) => ({
        id: c.id,
        type: 'function',
        function: { name: c.name, arguments: c.arguments },
      }));
    }
    return sendJson(ex.res, 200, {
      id,
      object: 'chat.completion',
      created: CREATED,
      model,
      choices: [{ index: 0, message, logprobs: null, finish_reason: finish }],
      usage,
      system_fingerprint: FINGERPRINT,
    });
  }

  const includeUsage = asObject(body.stream_options).include_usage === true;
  const chunk = (delta: Record<string, unknown>, finishReason: string | null = null): string =>
    event({
      id,
      object: 'chat.completion.chunk',
      created: CREATED,
      model,
      system_fingerprint: FINGERPRINT,
      choices: [{ index: 0, delta, logprobs: null, finish_reason: finishReason }],
      ...(includeUsage ? { usage: null } : {}),
    });
  const frames = [chunk({ role: 'assistant', content: calls.length ? null : '', refusal: null })];
  for (const piece of pieces) frames.push(chunk({ content: piece }));
  // Tool calls go out as OpenAI sends them: id and name first, then the arguments in pieces, by index.
  calls.forEach((call, index) => {
    frames.push(
      chunk({
        tool_calls: [{ index, id: call.id, type: 'function', function: { name: call.name, arguments: '' } }],
      }),
    );
    for (let at = 0; at < call.arguments.length; at += FAKE_ARGUMENT_PIECE) {
      const piece = call.arguments.slice(at, at + FAKE_ARGUMENT_PIECE);
      frames.push(chunk({ tool_calls: [{ index, function: { arguments: piece } }] }));
    }
  });
  frames.push(chunk({}, finish));
  if (includeUsage) {
    frames.push(
      event({
        id,
        object: 'chat.completion.chunk',
        created: CREATED,
        model,
        system_fingerprint: FINGERPRINT,
        choices: [],
        usage,
      }),
    );
  }
  frames.push('data: [DONE]\n\n');
  await streamFrames(ex, 'text/event-stream; charset=utf-8', frames, openAiBadFrames);
}

async function embeddings(ex: Exchange, defaultDims: number): Promise<void> {
  const model = requireModel(ex);
  if (model === null) return;
  const body = asObject(ex.body);
  const input = typeof body.input === 'string' ? [body.input] : Array.isArray(body.input) ? body.input : null;
  // Token ids as OpenAI takes them: one array of integers, or arrays of them (embedded as their text).
  const texts0 =
    input && typeof input[0] === 'number'
      ? [JSON.stringify(input)]
      : input?.map((x) => (Array.isArray(x) ? JSON.stringify(x) : x));
  if (texts0 === undefined || texts0.length === 0 || texts0.some((x) => typeof x !== 'string')) {
    sendJson(ex.res, 400, {
      error: { ...openAiError(400, "'input' is a required property").error, param: 'input' },
    });
    return;
  }
  if (ex.server.garbage) return sendGarbage(ex.res);
  const dims = typeof body.dimensions === 'number' ? body.dimensions : defaultDims;
  const base64 = body.encoding_format === 'base64';
  const texts = texts0 as string[];
  const tokens = texts.reduce((sum, text) => sum + fakeTokenCount(text), 0);
  sendJson(ex.res, 200, {
    object: 'list',
    data: texts.map((text, index) => {
      const vector = fakeEmbedding(text, dims);
      return { object: 'embedding', index, embedding: base64 ? float32Base64(vector) : vector };
    }),
    model,
    usage: { prompt_tokens: tokens, total_tokens: tokens },
  });
}

/** OpenAI's base64 form: little-endian float32s. */
export function float32Base64(vector: number[]): string {
  const bytes = Buffer.alloc(vector.length * 4);
  for (let i = 0; i < vector.length; i++) bytes.writeFloatLE(vector[i] as number, i * 4);
  return bytes.toString('base64');
}

function event(data: unknown): string {
  return `data: ${JSON.stringify(data)}\n\n`;
}

function sendGarbage(res: ServerResponse): void {
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end('<html>this is not json</html>');
}

const openAiBadFrames = {
  garbage: 'data: {this is not json\n\n',
  error: event(openAiError(500, 'fake upstream failure')),
};

/** Legacy `/v1/completions`: echoes the prompt (and the suffix after `|`), one choice per `n`. */
async function completions(ex: Exchange): Promise<void> {
  const model = requireModel(ex);
  if (model === null) return;
  const body = asObject(ex.body);
  const text = `${String(body.prompt)}|${String(body.suffix ?? '')}`;
  const n = typeof body.n === 'number' ? body.n : 1;
  const usage = { prompt_tokens: 2, completion_tokens: 2, total_tokens: 4 };
  const logprobs =
    typeof body.logprobs === 'number'
      ? { tokens: ['Echo'], token_logprobs: [-0.5], top_logprobs: [{ Echo: -0.5 }], text_offset: [0] }
      : null;
  const head = { id: 'cmpl-fake', object: 'text_completion', created: CREATED, model };
  if (body.stream !== true) {
    return sendJson(ex.res, 200, {
      ...head,
      choices: Array.from({ length: n }, (_, index) => ({
        text: `Echo ${index}: ${text}`,
        index,
        logprobs,
        finish_reason: 'stop',
      })),
      usage,
    });
  }
  const frames: string[] = [];
  for (let index = 0; index < n; index++)
    frames.push(
      event({ ...head, choices: [{ text: `Echo ${index}: ${text}`, index, logprobs, finish_reason: null }] }),
    );
  for (let index = 0; index < n; index++)
    frames.push(event({ ...head, choices: [{ text: '', index, logprobs: null, finish_reason: 'stop' }] }));
  frames.push(event({ ...head, choices: [], usage }));
  frames.push('data: [DONE]\n\n');
  await streamFrames(ex, 'text/event-stream; charset=utf-8', frames, openAiBadFrames);
}
