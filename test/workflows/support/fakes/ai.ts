import { bearerCheck, type FakeServer, json, startFakeServer } from './fake-server.js';

/**
 * An Ollama-compatible language model: `POST /api/chat {model, messages, stream: false}` answers
 * `{model, created_at, message: {role: 'assistant', content}, done_reason, done: true, …durations}`.
 * The reply content is `reply(lastUserMessage, model)` (default: `Echo: <message>`).
 */
export async function startFakeLlm(
  options: { token?: string; reply?: (content: string, model: string) => string } = {},
): Promise<FakeServer> {
  const reply = options.reply ?? ((content: string) => `Echo: ${content}`);
  return startFakeServer(
    (req) => {
      const denied = bearerCheck(req, options.token);
      if (denied) return denied;
      if (req.method !== 'POST' || req.path !== '/api/chat') return json(404, { error: 'not found' });
      const b = (req.body ?? {}) as {
        model?: unknown;
        messages?: Array<{ role?: string; content?: string }>;
      };
      if (typeof b.model !== 'string' || !Array.isArray(b.messages)) {
        return json(400, { error: 'model and messages are required' });
      }
      const last = [...b.messages].reverse().find((m) => m.role === 'user');
      return json(200, {
        model: b.model,
        created_at: '2030-01-02T03:04:05.123456Z',
        message: { role: 'assistant', content: reply(last?.content ?? '', b.model) },
        done_reason: 'stop',
        done: true,
        total_duration: 4_935_886_791,
        load_duration: 534_986_708,
        prompt_eval_count: 26,
        prompt_eval_duration: 107_345_000,
        eval_count: 237,
        eval_duration: 4_289_432_000,
      });
    },
    (status) => ({ error: `fake model failure (${status})` }),
  );
}

/**
 * A Flowise-compatible flow builder: `POST /api/v1/prediction/{flowId} {question, overrideConfig?}`
 * answers `{text, question, chatId, chatMessageId, sessionId, memoryType}`; unknown flows (not in
 * `flows`, when given) are 404 like Flowise's "Chatflow … not found".
 */
export async function startFakeFlow(
  options: { token?: string; flows?: string[]; answer?: (question: string, flowId: string) => string } = {},
): Promise<FakeServer> {
  const answer = options.answer ?? ((q: string) => `Answer to: ${q}`);
  let n = 0;
  return startFakeServer(
    (req) => {
      const denied = bearerCheck(req, options.token);
      if (denied) return json(401, { message: 'Unauthorized Access' });
      const m = req.path.match(/^\/api\/v1\/prediction\/([^/]+)$/);
      if (req.method !== 'POST' || !m) return json(404, { error: 'not found' });
      const flowId = decodeURIComponent(m[1] as string);
      if (options.flows && !options.flows.includes(flowId)) {
        return json(404, { statusCode: 404, success: false, message: `Chatflow ${flowId} not found` });
      }
      const b = (req.body ?? {}) as { question?: unknown };
      if (typeof b.question !== 'string') return json(400, { message: 'question is required' });
      n += 1;
      const chatId = `3f1c2d4e-0000-4000-8000-${String(n).padStart(12, '0')}`;
      return json(200, {
        text: answer(b.question, flowId),
        question: b.question,
        chatId,
        chatMessageId: `9b8a7c6d-0000-4000-8000-${String(n).padStart(12, '0')}`,
        sessionId: chatId,
        memoryType: 'Buffer Memory',
      });
    },
    (status) => ({ statusCode: status, success: false, message: 'Fake flow failure' }),
  );
}

/**
 * A document-processing service, in the shape the document workflow documents:
 * `POST /api/documents/load {documentId, source, url}` → `{documentId, status: 'loaded', characters}`,
 * `POST /api/documents/{id}/chunks {chunkSize}` → `{documentId, chunkSize, chunks}`,
 * `POST /api/documents/{id}/embeddings {model}` → `{documentId, model, embedded, dimensions}`,
 * `POST /api/documents/{id}/index {model}` → `{documentId, indexed, index: 'documents'}`.
 */
export async function startFakeDocproc(options: { token?: string } = {}): Promise<FakeServer> {
  const chunks = 15;
  const topics = new Map<string, unknown>();
  return startFakeServer((req) => {
    const denied = bearerCheck(req, options.token);
    if (denied) return denied;
    if (req.method !== 'POST') return json(404, { error: 'not found' });
    const b = (req.body ?? {}) as Record<string, unknown>;
    // POST /api/documents/load {source, content, title, topic, metadata} → a loaded document
    if (req.path === '/api/documents/load') {
      if (typeof b.source !== 'string' || typeof b.content !== 'string' || b.content.trim() === '')
        return json(400, { error: true, code: 'VALIDATION_ERROR', message: 'content is required' });
      topics.set('doc-loaded-1', b.topic ?? 'default');
      return json(201, {
        documentId: 'doc-loaded-1',
        status: 'loaded',
        topic: b.topic ?? 'default',
        title: b.title ?? null,
        pages: [{ pageNumber: 1, text: b.content }],
      });
    }
    // POST /api/documents/{id}/process?wait=true {operations: [one], chunkSize, embeddingModel}
    const m = req.path.match(/^\/api\/documents\/([^/]+)\/process$/);
    if (!m) return json(404, { error: 'not found' });
    const documentId = decodeURIComponent(m[1] as string);
    const size = b.chunkSize === undefined ? 1000 : Number(b.chunkSize);
    if (!Number.isInteger(size) || size <= 0)
      return json(400, { error: 'chunkSize must be a positive integer' });
    // No operations: all three, as the real service (the answer is then the indexed document).
    const [operation] = (b.operations as string[] | undefined) ?? ['index'];
    const status = { chunk: 'chunked', embed: 'embedded', index: 'indexed' }[operation ?? ''] ?? 'loaded';
    return json(200, {
      documentId,
      status,
      topic: topics.get(documentId) ?? 'default',
      chunkCount: chunks,
      embeddingModel: b.embeddingModel ?? null,
    });
  });
}
