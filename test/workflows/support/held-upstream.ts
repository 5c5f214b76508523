import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'vitest';

/**
 * A model upstream whose answers are given one at a time by the test (a call waits for its answer),
 * speaking a provider's real wire format: OpenAI's chat completions (server-sent events when asked to
 * stream), Anthropic's Messages events, Ollama's JSON lines, Gemini's `alt=sse` events. A streamed
 * answer writes its first text piece, then waits for `gate` (the test resolves it once its client has
 * read that piece) before the rest: the piece can only have reached the client while the upstream's
 * answer was still open.
 */

export interface HeldCall {
  url: string;
  headers: IncomingHttpHeaders;
  body: Record<string, unknown>;
  res: ServerResponse;
}

export interface StreamedAnswer {
  /** Text pieces: the first is written before `gate`, the others after. */
  pieces: string[];
  calls?: Array<{ name: string; arguments: string }>;
  gate?: Promise<void>;
  usage?: { prompt: number; completion: number };
}

export class HeldUpstream {
  private server: Server | null = null;
  private answers: HeldCall[] = [];
  private ready: Array<() => void> = [];
  readonly bodies: Array<Record<string, unknown>> = [];
  readonly urls: string[] = [];
  base = '';

  async start() {
    const server = createServer((req, res) => {
      let raw = '';
      req.on('data', (c) => {
        raw += c;
      });
      req.on('end', () => {
        const body = JSON.parse(raw || '{}') as Record<string, unknown>;
        this.bodies.push(body);
        this.urls.push(req.url ?? '');
        this.answers.push({ url: req.url ?? '', headers: req.headers, body, res });
        for (const wake of this.ready.splice(0)) wake();
      });
    });
    this.server = server;
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    this.base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  }

  /** The next call, once it has arrived. */
  async next(): Promise<HeldCall> {
    while (this.answers.length === 0) await new Promise<void>((r) => this.ready.push(r));
    return this.answers.shift() as HeldCall;
  }

  /** Answers the next call whole (a JSON body), or with an error status. */
  async answer(body: unknown, status = 200) {
    const { res } = await this.next();
    res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  }

  /** Answers the next (streamed) call as OpenAI's server-sent events, a piece per event. */
  async answerStream(
    pieces: string[],
    calls: Array<{ name: string; arguments: string }> = [],
    gate?: Promise<void>,
  ) {
    const call = await this.next();
    expect(call.body.stream).toBe(true);
    await openAiStream(call.res, { pieces, calls, ...(gate ? { gate } : {}) });
  }

  async stop() {
    this.server?.closeAllConnections();
    await new Promise<void>((r) => this.server?.close(() => r()));
  }
}

export async function openAiStream(res: ServerResponse, answer: StreamedAnswer) {
  const { pieces, calls = [], gate, usage = { prompt: 3, completion: 3 } } = answer;
  const event = (data: unknown) => res.write(`data: ${JSON.stringify(data)}\n\n`);
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  event({ choices: [{ index: 0, delta: { role: 'assistant', content: pieces[0] ?? '' } }] });
  await gate;
  for (const piece of pieces.slice(1)) event({ choices: [{ index: 0, delta: { content: piece } }] });
  calls.forEach((c, i) => {
    event({
      choices: [
        {
          index: 0,
          delta: {
            tool_calls: [
              { index: i, id: `call_${i}`, type: 'function', function: { name: c.name, arguments: '' } },
            ],
          },
        },
      ],
    });
    event({
      choices: [{ index: 0, delta: { tool_calls: [{ index: i, function: { arguments: c.arguments } }] } }],
    });
  });
  event({ choices: [{ index: 0, delta: {}, finish_reason: calls.length ? 'tool_calls' : 'stop' }] });
  event({
    choices: [],
    usage: {
      prompt_tokens: usage.prompt,
      completion_tokens: usage.completion,
      total_tokens: usage.prompt + usage.completion,
    },
  });
  res.end('data: [DONE]\n\n');
}

/** Splits a string in pieces of `size` characters (tool arguments sent as several deltas). */
const split = (text: string, size: number) =>
  Array.from({ length: Math.ceil(text.length / size) }, (_, i) => text.slice(i * size, (i + 1) * size));

/**
 * Anthropic's Messages stream, as its API sends it: `message_start`, a text block (`text_delta`s), one
 * `tool_use` block per call with its arguments in `input_json_delta` pieces, `message_delta` (stop
 * reason, output tokens) and `message_stop`, with a `ping` in between.
 */
export async function anthropicStream(res: ServerResponse, answer: StreamedAnswer) {
  const { pieces, calls = [], gate, usage = { prompt: 11, completion: 7 } } = answer;
  const event = (type: string, data: Record<string, unknown>) =>
    res.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`);
  res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8' });
  event('message_start', {
    message: {
      id: 'msg_01',
      type: 'message',
      role: 'assistant',
      content: [],
      model: 'claude-test',
      stop_reason: null,
      stop_sequence: null,
      usage: { input_tokens: usage.prompt, output_tokens: 1 },
    },
  });
  event('content_block_start', { index: 0, content_block: { type: 'text', text: '' } });
  event('ping', {});
  event('content_block_delta', { index: 0, delta: { type: 'text_delta', text: pieces[0] ?? '' } });
  await gate;
  for (const piece of pieces.slice(1))
    event('content_block_delta', { index: 0, delta: { type: 'text_delta', text: piece } });
  event('content_block_stop', { index: 0 });
  calls.forEach((c, i) => {
    const index = i + 1;
    event('content_block_start', {
      index,
      content_block: { type: 'tool_use', id: `toolu_${index}`, name: c.name, input: {} },
    });
    event('content_block_delta', { index, delta: { type: 'input_json_delta', partial_json: '' } });
    for (const part of split(c.arguments, 5))
      event('content_block_delta', { index, delta: { type: 'input_json_delta', partial_json: part } });
    event('content_block_stop', { index });
  });
  event('message_delta', {
    delta: { stop_reason: calls.length ? 'tool_use' : 'end_turn', stop_sequence: null },
    usage: { output_tokens: usage.completion },
  });
  event('message_stop', {});
  res.end();
}

/**
 * Ollama's streamed `/api/chat`: a JSON object a line, the text as `message.content` pieces, tool calls
 * whole in a piece of their own, and the last line `done: true` with the reason and the counts.
 */
export async function ollamaStream(res: ServerResponse, answer: StreamedAnswer) {
  const { pieces, calls = [], gate, usage = { prompt: 26, completion: 8 } } = answer;
  const line = (data: Record<string, unknown>) =>
    res.write(`${JSON.stringify({ model: 'llama3.2', created_at: new Date().toISOString(), ...data })}\n`);
  const message = (extra: Record<string, unknown>) => ({ role: 'assistant', content: '', ...extra });
  res.writeHead(200, { 'content-type': 'application/x-ndjson' });
  line({ message: message({ content: pieces[0] ?? '' }), done: false });
  await gate;
  for (const piece of pieces.slice(1)) line({ message: message({ content: piece }), done: false });
  if (calls.length > 0)
    line({
      message: message({
        tool_calls: calls.map((c) => ({ function: { name: c.name, arguments: JSON.parse(c.arguments) } })),
      }),
      done: false,
    });
  line({
    message: message({}),
    done: true,
    done_reason: 'stop',
    total_duration: 1_000_000,
    prompt_eval_count: usage.prompt,
    eval_count: usage.completion,
  });
  res.end();
}

/**
 * Gemini's `streamGenerateContent?alt=sse`: `data:` events with CRLF line ends, each a
 * GenerateContentResponse with the next parts and the usage so far; function calls whole in a part, the
 * finish reason on the last.
 */
export async function geminiStream(res: ServerResponse, answer: StreamedAnswer) {
  const { pieces, calls = [], gate, usage = { prompt: 9, completion: 5 } } = answer;
  let written = 0;
  const event = (parts: unknown[], finish?: string) => {
    written++;
    res.write(
      `data: ${JSON.stringify({
        candidates: [
          { content: { parts, role: 'model' }, index: 0, ...(finish ? { finishReason: finish } : {}) },
        ],
        usageMetadata: {
          promptTokenCount: usage.prompt,
          candidatesTokenCount: finish ? usage.completion : written,
          totalTokenCount: usage.prompt + (finish ? usage.completion : written),
        },
        modelVersion: 'gemini-2.5-flash',
      })}\r\n\r\n`,
    );
  };
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  event([{ text: pieces[0] ?? '' }]);
  await gate;
  for (const piece of pieces.slice(1)) event([{ text: piece }]);
  event(
    calls.map((c) => ({ functionCall: { name: c.name, args: JSON.parse(c.arguments) } })),
    'STOP',
  );
  res.end();
}
