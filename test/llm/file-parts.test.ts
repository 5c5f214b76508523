/**
 * Issue 35, item 7: the neutral message's file part in each dialect, straight through the providers
 * against fake upstreams that record what they received: Anthropic reads a PDF as a base64 `document`
 * and a text document as its plain-text source; OpenAI gets a PDF as a `file` part and a text document
 * as text; Ollama's chat has no document, so it refuses a PDF by name (and reads a text one as text).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AnthropicProvider } from '../../src/modules/llm/providers/anthropic.js';
import { OllamaProvider } from '../../src/modules/llm/providers/ollama.js';
import { OpenAiProvider } from '../../src/modules/llm/providers/openai.js';
import type { ChatRequest, ModelEntry } from '../../src/modules/llm/types.js';
import { startFakeAnthropic } from '../support/fake-llm/anthropic-server.js';
import { type FakeLlmServer, startFakeOpenAi } from '../support/fake-llm/index.js';

const PDF = Buffer.from('%PDF-1.4\n%%EOF\n').toString('base64');
const NOTES = Buffer.from('pear,3\n').toString('base64');
const request = (model: string): ChatRequest => ({
  model,
  options: {},
  messages: [
    {
      role: 'user',
      content: 'Read these',
      files: [
        { mediaType: 'application/pdf', data: PDF, filename: 'report.pdf' },
        { mediaType: 'text/csv', data: NOTES, filename: 'stock.csv' },
      ],
    },
  ],
});
const entry = (provider: string, baseUrl: string, upstreamModel: string): ModelEntry => ({
  name: upstreamModel,
  provider,
  upstreamModel,
  kind: 'chat',
  contextWindow: 8192,
  fallbacks: [],
  timeoutMs: 10_000,
  baseUrl,
  apiKey: 'k',
});
const drain = async (events: AsyncIterable<unknown>) => {
  for await (const _ of events);
};
const lastBody = (fake: FakeLlmServer) =>
  fake.requests.at(-1)?.body as { messages: Array<{ role: string; content: unknown }> };

describe('file parts per dialect', () => {
  let anthropic: FakeLlmServer;
  let openai: FakeLlmServer;
  beforeAll(async () => {
    anthropic = await startFakeAnthropic({ apiKey: 'k' });
    openai = await startFakeOpenAi({ apiKey: 'k' });
  });
  afterAll(async () => {
    await anthropic?.close();
    await openai?.close();
  });

  it('Anthropic: a base64 PDF document and a text document, before the text', async () => {
    const provider = new AnthropicProvider();
    const signal = new AbortController().signal;
    await drain(
      await provider.chat(
        request('claude-sonnet-4-5'),
        entry('anthropic', anthropic.url, 'claude-sonnet-4-5'),
        signal,
      ),
    );
    expect(lastBody(anthropic).messages.at(-1)?.content).toEqual([
      {
        type: 'document',
        source: { type: 'base64', media_type: 'application/pdf', data: PDF },
        title: 'report.pdf',
      },
      {
        type: 'document',
        source: { type: 'text', media_type: 'text/plain', data: 'pear,3\n' },
        title: 'stock.csv',
      },
      { type: 'text', text: 'Read these' },
    ]);
    await provider.close?.();
  });

  it('OpenAI: a file part with the data URL; a text document as text', async () => {
    const provider = new OpenAiProvider();
    await drain(
      await provider.chat(
        request('gpt-4o-mini'),
        entry('openai', openai.url, 'gpt-4o-mini'),
        new AbortController().signal,
      ),
    );
    expect(lastBody(openai).messages.at(-1)?.content).toEqual([
      { type: 'text', text: 'Read these' },
      { type: 'file', file: { filename: 'report.pdf', file_data: `data:application/pdf;base64,${PDF}` } },
      { type: 'text', text: '--- stock.csv (text/csv) ---\npear,3\n' },
    ]);
    await provider.close?.();
  });

  it('Ollama: a PDF is refused by name; a text document alone is read as text', () => {
    const provider = new OllamaProvider();
    expect(provider.unsupported(request('llama3.2'))).toEqual({
      field: 'body.messages.0.content',
      reason: 'holds a file of type application/pdf, but an Ollama model takes text and images only',
    });
    const textOnly = request('llama3.2');
    textOnly.messages[0]!.files = textOnly.messages[0]!.files!.slice(1);
    expect(provider.unsupported(textOnly)).toBeNull();
  });
});
