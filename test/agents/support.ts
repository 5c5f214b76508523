/**
 * Helpers for the agent API suites (issue 15): raw HTTP calls over loopback, agents and knowledge
 * topics made through the platform's own API, the SSE frames of a streamed turn, what the fake model
 * received, and a script that makes a fake answer tool calls on some requests and text on the others.
 */
import { expect } from 'vitest';
import { call, type Doc, type Reply, seedDocs } from '../llm/calls.js';
import type { LlmTestbed } from '../llm/support.js';

export { call, type Doc, type Reply, tick } from '../llm/calls.js';

import type { FakeLlmServer, FakeToolCall } from '../support/fake-llm/index.js';

export type Tool = string | { name: string; description?: string; parameters?: Record<string, unknown> };

export interface Agent {
  id: string;
  name: string;
  instructions: string;
  model: string;
  knowledgeTopics: string[];
  tools: Tool[];
  temperature: number | null;
  maxToolCalls: number;
  createdAt: string;
  updatedAt: string;
}

export interface Conversation {
  id: string;
  agentId: string | null;
  userId: string | null;
  title: string | null;
  metadata: Record<string, unknown>;
  createdAt: string;
  updatedAt: string;
}

export interface Step {
  type: 'retrieval' | 'tool_call' | 'model';
  name: string;
  input: unknown;
  output: unknown;
  ms: number;
}

export interface Source {
  documentId: string;
  title: string | null;
  topic: string;
  pageNumber: number;
  score: number;
  text: string;
}

export interface Usage {
  promptTokens: number;
  completionTokens: number;
}

export interface Message {
  id: string;
  conversationId: string;
  role: 'user' | 'assistant' | 'tool';
  content: string;
  steps: Step[];
  sources: Source[];
  usage: Usage | null;
  createdAt: string;
}

export interface Turn {
  conversationId: string;
  messages: [Message, Message];
  usage: Usage;
  sources: Source[];
}

export interface Page<T> {
  data: T[];
  nextCursor: string | null;
}

/** Asserts the platform's error body `{error: true, code, message, details, requestId}`. */
export function expectError(res: Reply, status: number, code?: string): Record<string, unknown> {
  expect(res.status, res.text).toBe(status);
  const body = res.json() as Record<string, unknown>;
  expect(body).toMatchObject({ error: true, message: expect.any(String), requestId: expect.any(String) });
  if (code) expect(body.code, res.text).toBe(code);
  return body;
}

/** Asserts a 400 whose message or details name `field`. */
export function expectNamesField(res: Reply, field: string): void {
  const body = expectError(res, 400, 'VALIDATION_ERROR');
  const said = `${body.message as string} ${JSON.stringify(body.details ?? {})}`;
  expect(said, `400 should name ${field}`).toContain(field);
}

export async function createAgent(
  bed: LlmTestbed,
  body: Record<string, unknown>,
  key?: string,
): Promise<Agent> {
  const res = await call(bed, 'POST', '/api/agents', {
    body: { name: 'agent', ...body },
    ...(key ? { key } : {}),
  });
  expect(res.status, res.text).toBe(201);
  return res.json() as Agent;
}

export async function createConversation(
  bed: LlmTestbed,
  body: Record<string, unknown>,
  key?: string,
): Promise<Conversation> {
  const res = await call(bed, 'POST', '/api/conversations', { body, ...(key ? { key } : {}) });
  expect(res.status, res.text).toBe(201);
  return res.json() as Conversation;
}

/** Posts a message (JSON answer expected, 200). */
export async function send(
  bed: LlmTestbed,
  agentId: string,
  body: Record<string, unknown>,
  key?: string,
): Promise<Turn> {
  const res = await call(bed, 'POST', `/api/agents/${agentId}/messages`, { body, ...(key ? { key } : {}) });
  expect(res.status, res.text).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/^application\/json/);
  return res.json() as Turn;
}

/** A small corpus: facts a question finds by their words. */
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
];

/** Loads the corpus (or `docs`) into `topic` and indexes it; the document ids, in order. */
export const seedTopic = (bed: LlmTestbed, topic: string, docs: Doc[] = CORPUS): Promise<string[]> =>
  seedDocs(bed, topic, docs);

/** One SSE frame of a streamed turn. */
export interface AgentEvent {
  event: string;
  data: Record<string, unknown>;
}

/** Parses a streamed body strictly: every frame `event: <type>\ndata: <json>` then a blank line. */
export function sseEvents(text: string): AgentEvent[] {
  expect(text.endsWith('\n\n'), `the stream ends with a blank line: ${JSON.stringify(text.slice(-80))}`).toBe(
    true,
  );
  return text
    .slice(0, -2)
    .split('\n\n')
    .filter((frame) => !frame.startsWith(':'))
    .map((frame) => {
      const match = /^event: ?([^\n]+)\ndata: ?(.*)$/s.exec(frame);
      expect(match, `frame ${JSON.stringify(frame)}`).not.toBeNull();
      return {
        event: match?.[1] as string,
        data: JSON.parse(match?.[2] as string) as Record<string, unknown>,
      };
    });
}

/** The deltas of a stream joined. */
export const deltasOf = (events: AgentEvent[]): string =>
  events
    .filter((e) => e.event === 'message.delta')
    .map((e) => e.data.delta as string)
    .join('');

/** A chat call a fake received: its messages (content kept as sent) and the tools offered. */
export interface ModelCall {
  model: string;
  messages: Array<Record<string, unknown> & { role: string }>;
  /** Every system message's text joined. */
  system: string;
  /** The function tools offered: name, description, JSON schema. */
  tools: Array<{ name: string; description?: string; parameters?: Record<string, unknown> }>;
  body: Record<string, unknown>;
}

const isChat = (path: string): boolean => path === '/api/chat' || path === '/v1/chat/completions';

/** The chat calls a fake received, oldest first (embedding and metadata calls left out). */
export function chatCalls(fake: FakeLlmServer): ModelCall[] {
  return fake.requests
    .filter((r) => r.method === 'POST' && isChat(r.path))
    .map((r) => {
      const body = r.body as Record<string, unknown>;
      const messages = (body.messages as ModelCall['messages']) ?? [];
      const tools = ((body.tools as Array<{ function?: ModelCall['tools'][number] }>) ?? []).map(
        (t) => t.function ?? { name: '' },
      );
      return {
        model: body.model as string,
        messages,
        system: messages
          .filter((m) => m.role === 'system')
          .map((m) => textOf(m.content))
          .join('\n'),
        tools,
        body,
      };
    });
}

/** A message content as text (a string, or OpenAI content parts). */
export function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) return content.map((p) => (p as { text?: string }).text ?? '').join('\n');
  return content === null || content === undefined ? '' : JSON.stringify(content);
}

/** What a script sees of the chat call being answered. */
export interface ScriptedCall {
  /** 0 for the first chat call since the script was set. */
  index: number;
  call: ModelCall;
}

/**
 * Makes `fake` answer each chat call with the tool calls `script` returns for it (null: text, as
 * usual). The fakes read their `toolCall` knob when a request arrives, after logging it, so a getter
 * on the knob sees the request being answered. `fake.reset()` (or assigning the knob) ends the script.
 */
export function scriptToolCalls(
  fake: FakeLlmServer,
  script: (current: ScriptedCall) => FakeToolCall | FakeToolCall[] | null,
): void {
  const start = chatCalls(fake).length;
  Object.defineProperty(fake, 'toolCall', {
    configurable: true,
    enumerable: true,
    get() {
      const calls = chatCalls(fake);
      const current = calls[calls.length - 1];
      if (!current || calls.length <= start) return null;
      return script({ index: calls.length - 1 - start, call: current });
    },
    set(value: FakeToolCall | FakeToolCall[] | null) {
      Object.defineProperty(fake, 'toolCall', {
        value,
        writable: true,
        configurable: true,
        enumerable: true,
      });
    },
  });
}

/** Tool calls on the first chat calls (one entry each), text afterwards. */
export function toolCallsThenText(
  fake: FakeLlmServer,
  ...rounds: Array<FakeToolCall | FakeToolCall[]>
): void {
  scriptToolCalls(fake, ({ index }) => rounds[index] ?? null);
}

/** The function name a model is offered for an agent tool (`workflow:<id>` is not a valid one). */
export function offeredName(call: ModelCall, tool: string): string {
  const id = tool.replace(/^workflow:/, '');
  const found = call.tools.find(
    (t) => t.name === tool || (tool.startsWith('workflow:') && t.name.includes(id)),
  );
  expect(found, `tool ${tool} offered among ${call.tools.map((t) => t.name).join(', ')}`).toBeDefined();
  return found?.name as string;
}

/** Mints a customer token (the admin key holds every agent scope). */
export async function customerToken(
  bed: LlmTestbed,
  customerId: string,
  scopes: string[] = ['agent:read', 'agent:write'],
): Promise<string> {
  const res = await call(bed, 'POST', '/v1/auth/tokens', { body: { customerId, scopes } });
  expect(res.status, res.text).toBe(201);
  return (res.json() as { token: string }).token;
}
