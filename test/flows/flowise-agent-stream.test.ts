/**
 * Flowise's Tool Agent template (its marketplace's `Tool Agent.json`, unmodified: ChatOpenAI, buffer
 * memory, calculator and SerpAPI) through the official `flowise-sdk`, streaming as Flowise streams an
 * agent: `start` at the model's first chunk, the final answer word by word in `token` events,
 * `usedTools`, `metadata`, `end`. The model is the fake OpenAI upstream calling the tools first; SerpAPI
 * is a local server speaking its wire format (issue 36).
 */
import { readFileSync } from 'node:fs';
import flowise from 'flowise-sdk';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ConfigError, parseConfig } from '../../src/config.js';
import { toolCallsThenText } from '../agents/support.js';
import { testDialects } from '../helpers/services.js';
import { type LlmTestbed, startLlmTestbed } from '../llm/support.js';
import { type FakeSearch, SEARCH_KEY, startFakeSearch } from './fake-search.js';
import { call, chatCalls, type Flow, type FlowEvent, predict, sseFrames, tokensOf } from './support.js';

const { FlowiseClient } = flowise;

const TEMPLATE = readFileSync(new URL('../fixtures/flowise/Tool Agent.json', import.meta.url), 'utf8');

interface UsedTool {
  tool: string;
  toolInput: Record<string, unknown>;
  toolOutput: unknown;
  error?: string;
}

describe.each(await testDialects())('flows: a Tool Agent chatflow streaming on %s', (dialect) => {
  let bed: LlmTestbed;
  let search: FakeSearch;
  let flow: Flow;
  let client: InstanceType<typeof FlowiseClient>;

  beforeAll(async () => {
    search = await startFakeSearch();
    bed = await startLlmTestbed(dialect, {
      OUTBOUND_ALLOW_HOSTS: search.host,
      FLOWISE_SERPAPI_URL: search.url,
    });
    const res = await call(bed, 'POST', '/api/v1/chatflows', {
      body: { name: 'Tool Agent', flowData: TEMPLATE },
    });
    expect(res.status, res.text).toBe(201);
    flow = res.json() as Flow;
    client = new FlowiseClient({ baseUrl: bed.url, apiKey: bed.p.adminKey });
  });
  afterAll(async () => {
    await bed?.close();
    await search?.close();
  });
  beforeEach(() => bed.openai.reset());

  const setKey = async (value: string) => {
    const res = await call(bed, 'POST', '/flowise/api/v1/variables', {
      body: { name: 'SERPAPI_API_KEY', value, type: 'static' },
    });
    expect(res.status, res.text).toBe(200);
    return (res.json() as { id: string }).id;
  };

  /** The model searches, then computes, then answers (word by word when streamed). */
  const scriptTools = () =>
    toolCallsThenText(
      bed.openai,
      { name: 'search', arguments: { input: 'age of the universe' } },
      { name: 'calculator', arguments: { input: '13.8 * 2' } },
    );

  it('without the SerpAPI key the model is told which variable is missing, and the agent still answers', async () => {
    scriptTools();
    const answer = (await predict(bed, flow.id, { question: 'How old is the universe?' })) as unknown as {
      text: string;
      usedTools: UsedTool[];
    };
    expect(answer.text).toBe('Echo: How old is the universe?');
    expect(answer.usedTools[0]).toMatchObject({ tool: 'search', toolOutput: '' });
    expect(answer.usedTools[0]?.error).toMatch(/SERPAPI_API_KEY not set/);
    expect(search.requests).toHaveLength(0);
  });

  it('the official SDK streams the answer word by word after the tools ran; usedTools, metadata and end follow', async () => {
    const variable = await setKey(SEARCH_KEY);
    try {
      scriptTools();
      const question = 'How old is the universe, twice?';
      const stream = await client.createPrediction({ chatflowId: flow.id, question, streaming: true });
      const events: FlowEvent[] = [];
      for await (const event of stream) events.push(event as FlowEvent);

      const names = events.map((e) => e.event);
      // Flowise starts the stream at the model's first chunk, a tool call's: an empty start, no token.
      expect(events[0]).toEqual({ event: 'start', data: '' });
      expect(names.slice(-3)).toEqual(['usedTools', 'metadata', 'end']);
      const tokens = events.filter((e) => e.event === 'token').map((e) => e.data as string);
      expect(tokens).toEqual(['Echo:', ' How', ' old', ' is', ' the', ' universe,', ' twice?']);
      expect(tokensOf(events)).toBe(`Echo: ${question}`);

      const used = events.find((e) => e.event === 'usedTools')?.data as UsedTool[];
      expect(used).toEqual([
        {
          tool: 'search',
          toolInput: { input: 'age of the universe' },
          toolOutput: 'SerpAPI says: age of the universe is 42',
        },
        { tool: 'calculator', toolInput: { input: '13.8 * 2' }, toolOutput: '27.6' },
      ]);
      expect(search.requests.at(-1)?.query).toMatchObject({ api_key: SEARCH_KEY, q: 'age of the universe' });
      // The tool results went back to the model before it answered.
      const lastCall = chatCalls(bed.openai).at(-1);
      expect(lastCall?.messages.filter((m) => m.role === 'tool').map((m) => m.content)).toEqual([
        'SerpAPI says: age of the universe is 42',
        '27.6',
      ]);
      const metadata = events.find((e) => e.event === 'metadata')?.data as {
        chatId: string;
        chatMessageId: string;
      };
      expect(metadata).toMatchObject({ question, memoryType: 'Buffer Window Memory' });

      // The stored answer carries the tools, as Flowise's chat message does.
      const messages = await call(bed, 'GET', `/api/v1/chatmessage/${flow.id}?chatId=${metadata.chatId}`);
      const stored = (messages.json() as Array<{ id: string; role: string; usedTools: string | null }>).find(
        (m) => m.role === 'apiMessage',
      );
      expect(stored?.id).toBe(metadata.chatMessageId);
      expect(JSON.parse(stored?.usedTools ?? 'null')).toEqual(used);
    } finally {
      await call(bed, 'DELETE', `/flowise/api/v1/variables/${variable}`);
    }
  });

  it('raw SSE: Flowise’s framing for every event; JSON and the stream agree', async () => {
    const variable = await setKey(SEARCH_KEY);
    try {
      scriptTools();
      const res = await call(bed, 'POST', `/api/v1/prediction/${flow.id}`, {
        body: { question: 'stream it', streaming: true },
      });
      expect(res.status, res.text).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
      const events = sseFrames(res.text);
      expect(events.filter((e) => e.event === 'start')).toHaveLength(1);

      scriptTools();
      const answer = (await predict(bed, flow.id, { question: 'stream it' })) as unknown as {
        text: string;
        usedTools: UsedTool[];
      };
      expect(answer.text).toBe(tokensOf(events));
      expect(answer.usedTools).toEqual(events.find((e) => e.event === 'usedTools')?.data);
    } finally {
      await call(bed, 'DELETE', `/flowise/api/v1/variables/${variable}`);
    }
  });

  it('an agent that answers without tools streams from its first token, with no usedTools event', async () => {
    const res = await call(bed, 'POST', `/api/v1/prediction/${flow.id}`, {
      body: { question: 'just talk', streaming: true },
    });
    const events = sseFrames(res.text);
    expect(events[0]).toEqual({ event: 'start', data: 'Echo:' });
    expect(events.map((e) => e.event)).not.toContain('usedTools');
    expect(tokensOf(events)).toBe('Echo: just talk');
  });
});

describe('web-search base addresses', () => {
  it('are http(s) without a query string, checked at start (a key there would reach error messages)', () => {
    for (const bad of [
      'serpapi.com',
      'ftp://serpapi.com',
      'https://serpapi.com/?api_key=secret',
      'https://x#y',
    ]) {
      expect(() => parseConfig({ FLOWISE_SERPAPI_URL: bad }), bad).toThrow(ConfigError);
      expect(() => parseConfig({ FLOWISE_BRAVE_SEARCH_URL: bad }), bad).toThrow(/FLOWISE_BRAVE_SEARCH_URL/);
    }
    expect(parseConfig({ FLOWISE_SERPER_URL: 'http://127.0.0.1:9999/base' }).FLOWISE_SERPER_URL).toBe(
      'http://127.0.0.1:9999/base',
    );
  });
});
