/**
 * Helpers for the flows suites (issue 14): raw HTTP calls on the Flowise-compatible paths, flows and
 * knowledge-base topics made through the platform's own API, the SSE frames a streamed prediction
 * sends, and what the fake model received.
 */
import { expect } from 'vitest';
import { call, type Doc, type Reply, seedDocs } from '../llm/calls.js';
import type { LlmTestbed } from '../llm/support.js';

export { call, type Doc, type Reply, tick } from '../llm/calls.js';

import type { FakeLlmServer } from '../support/fake-llm/index.js';

/** A flow as GET answers it (the contract's fields). */
export interface Flow {
  id: string;
  name: string;
  kind: 'llm' | 'rag' | 'workflow';
  model?: string | null;
  systemPrompt: string;
  promptTemplate: string;
  topics: string[];
  topK: number;
  minScore?: number | null;
  temperature?: number | null;
  maxTokens?: number | null;
  memory: { type: 'none' | 'window'; windowSize: number };
  workflowId?: string | null;
  overridableFields: string[];
  isStreaming: boolean;
  rateLimit?: { limitMax: number; limitDuration: number; limitMsg?: string } | null;
  type: 'CHATFLOW';
  createdDate: string;
  updatedDate: string;
}

export interface Prediction {
  text: string;
  question: string;
  chatId: string;
  chatMessageId: string;
  sessionId: string;
  memoryType: string;
  sourceDocuments: Array<{
    pageContent: string;
    metadata: { documentId: string; title: string | null; pageNumber: number; score: number; topic: string };
  }>;
}

/** Asserts the flows error body: Flowise's `statusCode`/`success`/`message` plus the platform's `code`. */
export function expectFlowError(res: Reply, status: number, code: string): Record<string, unknown> {
  expect(res.status, res.text).toBe(status);
  const body = res.json() as Record<string, unknown>;
  expect(body).toMatchObject({ statusCode: status, success: false, message: expect.any(String), code });
  expect((body.message as string).length).toBeGreaterThan(0);
  expect(typeof body.requestId).toBe('string');
  return body;
}

/** Asserts a 400 whose body names `field` (in the message or the details). */
export function expectNamesField(res: Reply, field: string): void {
  const body = expectFlowError(res, 400, 'VALIDATION_ERROR');
  const said = `${body.message as string} ${JSON.stringify(body.details ?? {})}`;
  expect(said, `400 should name ${field}`).toContain(field);
}

export async function createFlow(
  bed: LlmTestbed,
  body: Record<string, unknown>,
  key?: string,
): Promise<Flow> {
  const res = await call(bed, 'POST', '/api/v1/chatflows', { body, ...(key ? { key } : {}) });
  expect(res.status, res.text).toBe(201);
  return res.json() as Flow;
}

/** A prediction answered in JSON (200 expected). */
export async function predict(
  bed: LlmTestbed,
  flowId: string,
  body: Record<string, unknown>,
  key?: string,
): Promise<Prediction> {
  const res = await call(bed, 'POST', `/api/v1/prediction/${flowId}`, { body, ...(key ? { key } : {}) });
  expect(res.status, res.text).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/^application\/json/);
  return res.json() as Prediction;
}

/** A small corpus: facts a question can find by their words. */
export const CORPUS: Doc[] = [
  {
    title: 'Otters',
    content:
      '# Otters\n\nSea otters hold hands while they sleep so that they do not drift apart on the water. A group of resting otters is called a raft.',
  },
  {
    title: 'Lighthouses',
    content:
      '# Lighthouses\n\nThe Bell Rock lighthouse stands on a reef in the North Sea. Its keepers lived in the tower for weeks at a time.',
  },
  {
    title: 'Sourdough',
    content:
      '# Sourdough\n\nA sourdough starter is flour and water fermented by wild yeast. Feed the starter every day to keep it lively.',
  },
  {
    title: 'Volcanoes',
    content:
      '# Volcanoes\n\nMauna Loa in Hawaii is the largest active volcano on Earth. Its lava flows are basalt and move slowly.',
  },
];

/** Loads the corpus (or `docs`) into `topic` and indexes it; the document ids, in order. */
export const seedTopic = (bed: LlmTestbed, topic: string, docs: Doc[] = CORPUS): Promise<string[]> =>
  seedDocs(bed, topic, docs);

/** One SSE frame of a streamed prediction. */
export interface FlowEvent {
  event: string;
  data: unknown;
}

/**
 * Parses a streamed body strictly: every frame must be `message:\ndata:<json>` followed by a blank
 * line (Flowise's exact framing, which its SDK and embed widget split on).
 */
export function sseFrames(text: string): FlowEvent[] {
  expect(text.endsWith('\n\n'), 'the stream ends with a blank line').toBe(true);
  const frames = text.slice(0, -2).split('\n\n');
  return frames.map((frame) => {
    const match = /^message:\ndata:(.*)$/s.exec(frame);
    expect(match, `frame ${JSON.stringify(frame)}`).not.toBeNull();
    return JSON.parse(match?.[1] as string) as FlowEvent;
  });
}

/** The `token` events' data joined: the streamed answer. */
export const tokensOf = (events: FlowEvent[]): string =>
  events
    .filter((e) => e.event === 'token')
    .map((e) => e.data as string)
    .join('');

/** What a chat call to a fake carried: messages by role, and all the text together. */
export interface ModelCall {
  model: string;
  messages: Array<{ role: string; content: string }>;
  system: string;
  /** The last user message (the rendered template). */
  user: string;
  /** Every message's content joined (memory turns, system prompt, question). */
  all: string;
  body: Record<string, unknown>;
}

/** The chat calls a fake received, oldest first. */
export function chatCalls(fake: FakeLlmServer): ModelCall[] {
  return fake.requests
    .filter((r) => r.method === 'POST' && (r.path === '/api/chat' || r.path === '/v1/chat/completions'))
    .map((r) => {
      const body = r.body as Record<string, unknown>;
      const messages = ((body.messages as Array<{ role: string; content: unknown }>) ?? []).map((m) => ({
        role: m.role,
        content: typeof m.content === 'string' ? m.content : JSON.stringify(m.content),
      }));
      const system = messages
        .filter((m) => m.role === 'system')
        .map((m) => m.content)
        .join('\n');
      const users = messages.filter((m) => m.role === 'user');
      return {
        model: body.model as string,
        messages,
        system: typeof body.system === 'string' ? `${body.system}\n${system}` : system,
        user: users[users.length - 1]?.content ?? '',
        all: messages.map((m) => m.content).join('\n'),
        body,
      };
    });
}

/** The last chat call a fake received. */
export function lastCall(fake: FakeLlmServer): ModelCall {
  const calls = chatCalls(fake);
  expect(calls.length, 'the model was called').toBeGreaterThan(0);
  return calls[calls.length - 1] as ModelCall;
}

/** Mints a customer token with flow scopes (the admin key holds them). */
export async function customerToken(bed: LlmTestbed): Promise<string> {
  const res = await call(bed, 'POST', '/v1/auth/tokens', {
    body: { customerId: 'shopper-1', scopes: ['flow:read', 'flow:write'] },
  });
  expect(res.status, res.text).toBe(201);
  return (res.json() as { token: string }).token;
}
