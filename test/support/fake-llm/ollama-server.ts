/**
 * A fake Ollama server speaking its real wire format (docs/api.md): `/api/chat` and `/api/generate`
 * (NDJSON by default, one object with `stream: false`), `/api/embed`, `/api/embeddings`, `/api/tags`,
 * `/api/show`, `/api/ps`, `/api/version`. Answers are deterministic: see `echoChunks`, `fakeEmbedding`.
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

export interface FakeOllamaOptions {
  /** Models served (a name without a tag means `:latest`). */
  models?: string[];
  /** When set, requests must carry `Authorization: Bearer <apiKey>` (an Ollama behind a proxy). */
  apiKey?: string;
  /** Embedding dimensions (default 8). */
  dims?: number;
}

export const FAKE_OLLAMA_MODELS = ['llama3.2', 'nomic-embed-text'];
export const FAKE_OLLAMA_VERSION = '0.12.3';
/** The durations (ns) every final chunk reports, besides total_duration (their sum). */
export const FAKE_OLLAMA_TIMINGS = {
  load_duration: 1_000_000,
  prompt_eval_duration: 2_000_000,
  eval_duration: 3_000_000,
};

const NDJSON = 'application/x-ndjson';
const CREATED_AT = '2025-01-01T00:00:00.000000Z';

/** Starts a fake Ollama; `url` is `http://127.0.0.1:PORT`. */
export async function startFakeOllama(options: FakeOllamaOptions = {}): Promise<FakeLlmServer> {
  return startFake(ollamaFormat(options), [...(options.models ?? FAKE_OLLAMA_MODELS)]);
}

/** `llama3.2` and `llama3.2:latest` are the same model. */
export function ollamaModelName(name: string): string {
  return name.includes(':') ? name : `${name}:latest`;
}

function ollamaFormat(options: FakeOllamaOptions): FakeFormat {
  const dims = options.dims ?? 8;
  return {
    basePath: '',
    sendError: (res, status, message) => sendJson(res, status, { error: message }),
    failureMessage: (status) =>
      status === 429
        ? 'server busy, please try again.  maximum pending requests exceeded'
        : status === 503
          ? 'service unavailable'
          : 'llama runner process has terminated: exit status 2',
    authorized: (req: IncomingMessage) =>
      options.apiKey === undefined || req.headers.authorization === `Bearer ${options.apiKey}`,
    async handle(ex: Exchange) {
      const key = `${ex.req.method} ${ex.path}`;
      switch (key) {
        case 'POST /api/chat':
          return chat(ex);
        case 'POST /api/generate':
          return generate(ex);
        case 'POST /api/embed':
          return embed(ex, dims);
        case 'POST /api/embeddings':
          return legacyEmbeddings(ex, dims);
        case 'GET /api/tags':
          return sendJson(ex.res, 200, { models: ex.server.models.map(tagOf) });
        case 'GET /api/ps':
          return sendJson(ex.res, 200, { models: [] });
        case 'GET /api/version':
          return sendJson(ex.res, 200, { version: FAKE_OLLAMA_VERSION });
        case 'POST /api/show':
          return show(ex);
        case 'POST /api/pull':
          return pull(ex);
        default:
          ex.res.writeHead(404, { 'content-type': 'text/plain' });
          ex.res.end('404 page not found');
      }
    },
  };
}

/** The requested model, or null after answering 400/404 like Ollama does. */
function requireModel(ex: Exchange, field = 'model'): string | null {
  const body = asObject(ex.body);
  const model = body[field] ?? body.name;
  if (typeof model !== 'string' || model === '') {
    sendJson(ex.res, 400, { error: 'model is required' });
    return null;
  }
  if (!ex.server.models.some((m) => ollamaModelName(m) === ollamaModelName(model))) {
    sendJson(ex.res, 404, { error: `model "${model}" not found` });
    return null;
  }
  return model;
}

function finalStats(prompt: number, completion: number): Record<string, number> {
  const t = FAKE_OLLAMA_TIMINGS;
  return {
    total_duration: t.load_duration + t.prompt_eval_duration + t.eval_duration,
    load_duration: t.load_duration,
    prompt_eval_count: prompt,
    prompt_eval_duration: t.prompt_eval_duration,
    eval_count: completion,
    eval_duration: t.eval_duration,
  };
}

/** The reply pieces for a prompt: echo words, or a JSON object when a format was asked for. */
function replyPieces(text: string, format: unknown): string[] {
  if (format === undefined || format === null || format === '') return echoChunks(text);
  const json = JSON.stringify({ echo: text });
  const half = Math.ceil(json.length / 2);
  return [json.slice(0, half), json.slice(half)];
}

/** Cuts the pieces to `num_predict`; says whether that cut the answer short. */
function limit(pieces: string[], options: unknown): { pieces: string[]; reason: string } {
  const max = asObject(options).num_predict;
  if (typeof max === 'number' && max >= 0 && max < pieces.length)
    return { pieces: pieces.slice(0, max), reason: 'length' };
  return { pieces, reason: 'stop' };
}

async function chat(ex: Exchange): Promise<void> {
  const model = requireModel(ex);
  if (model === null) return;
  const body = asObject(ex.body);
  const text = lastUserText(body.messages);
  const thinking =
    body.think === true ? echoChunks(text).map((p) => p.replace('Echo:', 'Thinking about:')) : [];
  const calls = toolCallsOf(ex.server.toolCall);
  const { pieces, reason } = calls.length
    ? { pieces: [], reason: 'stop' }
    : limit(replyPieces(text, body.format), body.options);
  const prompt = promptTokens(body.messages);
  const completion = thinking.length + pieces.length + calls.length;
  const toolCalls = calls.map((call, index) => ({
    function: { index, name: call.name, arguments: call.arguments },
  }));
  const done = {
    model,
    created_at: CREATED_AT,
    message: { role: 'assistant', content: '' },
    done: true,
    done_reason: reason,
    ...finalStats(prompt, completion),
  };
  if (body.stream === false) {
    const message: Record<string, unknown> = { role: 'assistant', content: pieces.join('') };
    if (thinking.length) message.thinking = thinking.join('');
    if (toolCalls.length) message.tool_calls = toolCalls;
    if (ex.server.garbage) return sendGarbage(ex.res);
    return sendJson(ex.res, 200, { ...done, message });
  }
  const frame = (message: Record<string, unknown>): string =>
    `${JSON.stringify({ model, created_at: CREATED_AT, message: { role: 'assistant', content: '', ...message }, done: false })}\n`;
  const frames = [
    ...thinking.map((piece) => frame({ thinking: piece })),
    ...pieces.map((piece) => frame({ content: piece })),
    ...(toolCalls.length ? [frame({ tool_calls: toolCalls })] : []),
    `${JSON.stringify(done)}\n`,
  ];
  await streamFrames(ex, NDJSON, frames, ollamaBadFrames);
}

async function generate(ex: Exchange): Promise<void> {
  const model = requireModel(ex);
  if (model === null) return;
  const body = asObject(ex.body);
  const prompt = typeof body.prompt === 'string' ? body.prompt : '';
  const { pieces, reason } = limit(
    replyPieces(typeof body.suffix === 'string' ? `${prompt}<FILL>${body.suffix}` : prompt, body.format),
    body.options,
  );
  const promptCount =
    fakeTokenCount(prompt) + fakeTokenCount(typeof body.system === 'string' ? body.system : '');
  const done = {
    model,
    created_at: CREATED_AT,
    response: '',
    done: true,
    done_reason: reason,
    context: [1, 2, 3],
    ...finalStats(promptCount, pieces.length),
  };
  const logprobs = body.logprobs === true;
  const logprobsOf = (piece: string) => ({
    logprobs: [{ token: piece, logprob: -0.25, top_logprobs: [{ token: piece, logprob: -0.25 }] }],
  });
  if (body.stream === false) {
    if (ex.server.garbage) return sendGarbage(ex.res);
    // As Ollama: a whole answer carries the log probabilities of all its tokens.
    const all = logprobs ? { logprobs: pieces.flatMap((piece) => logprobsOf(piece).logprobs) } : {};
    return sendJson(ex.res, 200, { ...done, response: pieces.join(''), ...all });
  }
  const frames = pieces.map(
    (piece) =>
      `${JSON.stringify({
        model,
        created_at: CREATED_AT,
        response: piece,
        done: false,
        ...(logprobs ? logprobsOf(piece) : {}),
      })}\n`,
  );
  frames.push(`${JSON.stringify(done)}\n`);
  await streamFrames(ex, NDJSON, frames, ollamaBadFrames);
}

async function embed(ex: Exchange, dims: number): Promise<void> {
  const model = requireModel(ex);
  if (model === null) return;
  const body = asObject(ex.body);
  const input = typeof body.input === 'string' ? [body.input] : Array.isArray(body.input) ? body.input : null;
  if (input === null || input.some((x) => typeof x !== 'string')) {
    return sendJson(ex.res, 400, { error: 'invalid input type' });
  }
  if (ex.server.garbage) return sendGarbage(ex.res);
  const size = typeof body.dimensions === 'number' ? body.dimensions : dims;
  sendJson(ex.res, 200, {
    model,
    embeddings: (input as string[]).map((text) => fakeEmbedding(text, size)),
    total_duration: 4_000_000,
    load_duration: FAKE_OLLAMA_TIMINGS.load_duration,
    prompt_eval_count: (input as string[]).reduce((sum, text) => sum + fakeTokenCount(text), 0),
  });
}

async function legacyEmbeddings(ex: Exchange, dims: number): Promise<void> {
  const model = requireModel(ex);
  if (model === null) return;
  const prompt = asObject(ex.body).prompt;
  sendJson(ex.res, 200, { embedding: fakeEmbedding(typeof prompt === 'string' ? prompt : '', dims) });
}

function show(ex: Exchange): void {
  const model = requireModel(ex);
  if (model === null) return;
  const embedding = model.includes('embed');
  sendJson(ex.res, 200, {
    license: 'fake license',
    modelfile: `FROM ${ollamaModelName(model)}`,
    parameters: 'stop "<|eot_id|>"',
    template: '{{ .Prompt }}',
    details: detailsOf(model),
    model_info: {
      'general.architecture': embedding ? 'nomic-bert' : 'llama',
      'general.parameter_count': 3_212_749_888,
      [embedding ? 'nomic-bert.context_length' : 'llama.context_length']: embedding ? 2048 : 131072,
      [embedding ? 'nomic-bert.embedding_length' : 'llama.embedding_length']: embedding ? 768 : 3072,
    },
    capabilities: embedding ? ['embedding'] : ['completion', 'tools'],
    modified_at: CREATED_AT,
  });
}

function detailsOf(model: string): Record<string, unknown> {
  const family = model.includes('embed') ? 'nomic-bert' : 'llama';
  return {
    parent_model: '',
    format: 'gguf',
    family,
    families: [family],
    parameter_size: family === 'llama' ? '3.2B' : '137M',
    quantization_level: 'Q4_K_M',
  };
}

function tagOf(model: string): Record<string, unknown> {
  const name = ollamaModelName(model);
  return {
    name,
    model: name,
    modified_at: CREATED_AT,
    size: 2_019_393_189,
    digest: 'a80c4f17acd55265feec403c7aef86be0c25983ab279d83f3bcd3abbcb5b8b72',
    details: detailsOf(model),
  };
}

function sendGarbage(res: ServerResponse): void {
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end('<html>this is not json</html>');
}

const ollamaBadFrames = {
  garbage: 'this is not json\n',
  error: `${JSON.stringify({ error: 'fake upstream failure' })}\n`,
};

/** Models the fake's "library" has: a pull of one adds it to the server's models. */
export const FAKE_PULLABLE = ['qwen3:0.6b', 'smollm2:135m'];

/** `/api/pull`: Ollama's progress lines, or an `error` line for a name the library lacks. */
function pull(ex: Exchange): void {
  const body = asObject(ex.body);
  const name = String(body.model ?? body.name ?? '');
  ex.res.writeHead(200, { 'content-type': 'application/x-ndjson' });
  const known = ex.server.models.some((m) => ollamaModelName(m) === ollamaModelName(name));
  if (!known && !FAKE_PULLABLE.includes(name)) {
    ex.res.end(`${JSON.stringify({ error: 'pull model manifest: file does not exist' })}\n`);
    return;
  }
  if (!known) ex.server.models.push(name);
  const digest = `sha256:${'a'.repeat(64)}`;
  const lines = [
    { status: 'pulling manifest' },
    { status: `pulling ${digest.slice(7, 19)}`, digest, total: 100, completed: 100 },
    { status: 'verifying sha256 digest' },
    { status: 'writing manifest' },
    { status: 'success' },
  ];
  ex.res.end(lines.map((l) => `${JSON.stringify(l)}\n`).join(''));
}
