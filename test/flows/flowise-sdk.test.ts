/**
 * The official Flowise client, unmodified, against the platform: the proof that the flows surface
 * speaks Flowise's wire format (the streaming probe without a key, the prediction body, SSE lines).
 */
// flowise-sdk is CommonJS. Its index defines `FlowiseClient` through a getter wrapping
// `__importDefault(...)`, which Node's CJS export detection does not see: a named ESM import
// (`import { FlowiseClient } from 'flowise-sdk'`) fails, and the default import is `module.exports`
// itself (no `.default`), so the class is its `FlowiseClient` property.
import flowise from 'flowise-sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testDialects } from '../helpers/services.js';
import { type LlmTestbed, startLlmTestbed } from '../llm/support.js';
import { createFlow, type Flow, type Prediction, seedTopic } from './support.js';

const { FlowiseClient } = flowise;

interface StreamEvent {
  event: string;
  data: unknown;
}

describe.each(await testDialects())('flows: the flowise-sdk client on %s', (dialect) => {
  let bed: LlmTestbed;
  let client: InstanceType<typeof FlowiseClient>;
  let llm: Flow;
  let rag: Flow;

  beforeAll(async () => {
    bed = await startLlmTestbed(dialect);
    // A small corpus of four markdown documents.
    await seedTopic(bed, 'sdk');
    llm = await createFlow(bed, {
      name: 'sdk llm',
      kind: 'llm',
      model: 'llama3.2',
      systemPrompt: 'Be kind.',
    });
    rag = await createFlow(bed, {
      name: 'sdk rag',
      kind: 'rag',
      model: 'gpt-4o-mini',
      topics: ['sdk'],
      topK: 2,
    });
    client = new FlowiseClient({ baseUrl: bed.url, apiKey: bed.p.adminKey });
  });
  afterAll(() => bed?.close());

  const json = async (chatflowId: string, question: string): Promise<Prediction> =>
    (await client.createPrediction({ chatflowId, question })) as Prediction;

  const streamed = async (chatflowId: string, question: string): Promise<StreamEvent[]> => {
    const events: StreamEvent[] = [];
    const stream = await client.createPrediction({ chatflowId, question, streaming: true });
    for await (const event of stream) events.push(event as StreamEvent);
    return events;
  };

  const tokens = (events: StreamEvent[]) =>
    events
      .filter((e) => e.event === 'token')
      .map((e) => e.data as string)
      .join('');

  it('createPrediction without streaming: an llm flow answers Flowise’s JSON', async () => {
    const answer = await json(llm.id, 'hello from the sdk');
    expect(answer).toMatchObject({
      text: 'Echo: hello from the sdk',
      question: 'hello from the sdk',
      chatId: expect.any(String),
      chatMessageId: expect.any(String),
      sessionId: expect.any(String),
      sourceDocuments: [],
    });
  });

  it('createPrediction with streaming: an llm flow’s tokens are the JSON answer; metadata and end come', async () => {
    const question = 'stream to the sdk please';
    const events = await streamed(llm.id, question);
    const names = events.map((e) => e.event);
    expect(names[0]).toBe('start');
    expect(names).toContain('metadata');
    expect(names.at(-1)).toBe('end');
    expect(events.at(-1)?.data).toBe('[DONE]');
    expect(events.find((e) => e.event === 'metadata')?.data).toMatchObject({ question });
    expect(tokens(events)).toBe((await json(llm.id, question)).text);
  });

  it('a rag flow over the corpus, both ways: the same answer and the same sources', async () => {
    const question = 'Which volcano in Hawaii is the largest active volcano?';
    const answer = await json(rag.id, question);
    expect(answer.sourceDocuments.length).toBeGreaterThan(0);
    expect(answer.sourceDocuments[0]?.pageContent).toContain('Mauna Loa');
    expect(answer.sourceDocuments[0]?.metadata).toMatchObject({ topic: 'sdk', title: 'Volcanoes' });
    expect(answer.text).toContain('Mauna Loa');

    const events = await streamed(rag.id, question);
    expect(events.map((e) => e.event).slice(-3)).toEqual(['sourceDocuments', 'metadata', 'end']);
    expect(tokens(events)).toBe(answer.text);
    const sources = events.find((e) => e.event === 'sourceDocuments')?.data as Prediction['sourceDocuments'];
    expect(sources.map((s) => s.pageContent)).toEqual(answer.sourceDocuments.map((s) => s.pageContent));
  });

  it('a flow with isStreaming false answers JSON even when the client asks to stream', async () => {
    const plain = await createFlow(bed, {
      name: 'sdk plain',
      kind: 'llm',
      model: 'llama3.2',
      isStreaming: false,
    });
    const answer = (await client.createPrediction({
      chatflowId: plain.id,
      question: 'no stream',
      streaming: true,
    })) as Prediction | AsyncIterable<unknown>;
    expect(answer).toMatchObject({ text: 'Echo: no stream' });
  });

  it('without a key the client gets Flowise’s error body', async () => {
    const anonymous = new FlowiseClient({ baseUrl: bed.url });
    const answer = (await anonymous.createPrediction({ chatflowId: llm.id, question: 'who am I' })) as Record<
      string,
      unknown
    >;
    expect(answer).toMatchObject({ statusCode: 401, success: false, message: expect.any(String) });
  });
});
