// A fast fake OpenAI-compatible upstream for the language-model gateway bench: answers are built
// once and written whole, so the bench measures the gateway, not the fake. Runs as a child
// process (forked by bench/scenarios/llm.js) and reports its port over IPC.
// Tool calling, deterministic: a request that offers tools and whose last message is not a tool
// result is answered with calls of its first two tools (arguments `{}`, ids call_bench_0/1); once
// the results are there, with the usual text (bench/scenarios/agents.js's tools turn).
import { createServer } from 'node:http';

const CREATED = 1_735_689_600;
const MODEL = 'bench-model';
const PIECES = ['Hello', ' from', ' the', ' bench', ' model.'];
const usage = { prompt_tokens: 9, completion_tokens: PIECES.length, total_tokens: 9 + PIECES.length };

const completion = Buffer.from(
  JSON.stringify({
    id: 'chatcmpl-bench',
    object: 'chat.completion',
    created: CREATED,
    model: MODEL,
    choices: [
      {
        index: 0,
        message: { role: 'assistant', content: PIECES.join(''), refusal: null },
        logprobs: null,
        finish_reason: 'stop',
      },
    ],
    usage,
    system_fingerprint: 'fp_bench',
  }),
);

const frame = (choices, extra) =>
  `data: ${JSON.stringify({
    id: 'chatcmpl-bench',
    object: 'chat.completion.chunk',
    created: CREATED,
    model: MODEL,
    system_fingerprint: 'fp_bench',
    choices,
    ...extra,
  })}\n\n`;
const chunk = (delta, finishReason = null) =>
  frame([{ index: 0, delta, logprobs: null, finish_reason: finishReason }], { usage: null });

// Five content chunks, the finish chunk, the usage chunk (as with `stream_options.include_usage`), [DONE].
const stream = Buffer.from(
  [
    ...PIECES.map((content, i) => chunk(i === 0 ? { role: 'assistant', content } : { content })),
    chunk({}, 'stop'),
    frame([], { usage }),
    'data: [DONE]\n\n',
  ].join(''),
);

/** The calls of the first two offered tools, as a completion or as a stream. */
function toolCalls(tools, streamed) {
  const calls = tools.slice(0, 2).map((tool, index) => ({
    index,
    id: `call_bench_${index}`,
    type: 'function',
    function: { name: tool.function?.name ?? tool.name, arguments: '{}' },
  }));
  const callUsage = { prompt_tokens: 9, completion_tokens: 2, total_tokens: 11 };
  if (!streamed)
    return Buffer.from(
      JSON.stringify({
        id: 'chatcmpl-bench-tools',
        object: 'chat.completion',
        created: CREATED,
        model: MODEL,
        choices: [
          {
            index: 0,
            message: { role: 'assistant', content: null, tool_calls: calls.map(({ index, ...c }) => c) },
            logprobs: null,
            finish_reason: 'tool_calls',
          },
        ],
        usage: callUsage,
        system_fingerprint: 'fp_bench',
      }),
    );
  return Buffer.from(
    [
      chunk({ role: 'assistant', content: null, tool_calls: calls }),
      chunk({}, 'tool_calls'),
      frame([], { usage: callUsage }),
      'data: [DONE]\n\n',
    ].join(''),
  );
}
/** Tool-call answers by the offered tools' names (the bench offers the same tools every time). */
const toolAnswers = new Map();

function send(res, status, type, body) {
  res.writeHead(status, { 'content-type': type, 'content-length': body.length });
  res.end(body);
}

const notFound = Buffer.from(
  JSON.stringify({
    error: { message: 'Invalid URL', type: 'invalid_request_error', param: null, code: null },
  }),
);

const server = createServer((req, res) => {
  const parts = [];
  req.on('data', (part) => parts.push(part));
  req.on('end', () => {
    if (req.method !== 'POST' || req.url !== '/v1/chat/completions') {
      send(res, 404, 'application/json', notFound);
      return;
    }
    let request;
    try {
      request = JSON.parse(Buffer.concat(parts).toString('utf8'));
    } catch {
      send(res, 400, 'application/json', notFound);
      return;
    }
    const streamed = request.stream === true;
    const tools = Array.isArray(request.tools) ? request.tools : [];
    if (tools.length > 0 && request.messages?.at(-1)?.role !== 'tool') {
      const key = `${streamed}:${tools.map((t) => t.function?.name).join(',')}`;
      const body = toolAnswers.get(key) ?? toolCalls(tools, streamed);
      toolAnswers.set(key, body);
      if (streamed) {
        res.writeHead(200, {
          'content-type': 'text/event-stream; charset=utf-8',
          'cache-control': 'no-cache',
        });
        res.end(body);
      } else send(res, 200, 'application/json', body);
      return;
    }
    if (!streamed) {
      send(res, 200, 'application/json', completion);
      return;
    }
    // OpenAI streams chunked (no length); the whole stream goes out in one write.
    res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' });
    res.end(stream);
  });
});
// Longer than the bench's pauses between runs, so pooled connections are not dropped between them.
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => process.send?.({ port: server.address().port }));
process.on('SIGTERM', () => {
  server.closeAllConnections();
  server.close(() => process.exit(0));
});
