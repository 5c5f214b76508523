import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { testDialects } from '../helpers/services.js';
import { type LlmTestbed, startLlmTestbed } from '../llm/support.js';
import { createWorkflow, flow as workflowBody } from '../workflows/support.js';
import {
  call,
  createFlow,
  customerToken,
  expectFlowError,
  expectNamesField,
  type FlowEvent,
  lastCall,
  type Prediction,
  predict,
  seedTopic,
  sseFrames,
  tokensOf,
} from './support.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

describe.each(await testDialects())('flows: prediction on %s', (dialect) => {
  let bed: LlmTestbed;
  let docIds: string[];

  beforeAll(async () => {
    bed = await startLlmTestbed(dialect);
    docIds = await seedTopic(bed, 'kb');
  });
  afterAll(() => bed?.close());
  beforeEach(() => {
    bed.ollama.reset();
    bed.openai.reset();
  });

  const llmFlow = (extra: Record<string, unknown> = {}) =>
    createFlow(bed, { name: 'llm', kind: 'llm', model: 'llama3.2', ...extra });
  const ragFlow = (extra: Record<string, unknown> = {}) =>
    createFlow(bed, { name: 'rag', kind: 'rag', model: 'llama3.2', topics: ['kb'], ...extra });
  const stream = (flowId: string, body: Record<string, unknown>, signal?: AbortSignal) =>
    call(bed, 'POST', `/api/v1/prediction/${flowId}`, {
      body: { ...body, streaming: true },
      ...(signal ? { signal } : {}),
    });

  it('answers in Flowise’s JSON; the system prompt and the rendered template reach the model', async () => {
    const f = await llmFlow({ systemPrompt: 'You are terse.', promptTemplate: 'Q: {question} !' });
    const answer = await predict(bed, f.id, { question: 'what is up' });
    expect(answer).toMatchObject({
      text: 'Echo: Q: what is up !',
      question: 'what is up',
      chatId: expect.stringMatching(UUID),
      chatMessageId: expect.any(String),
      memoryType: expect.any(String),
      sourceDocuments: [],
    });
    // sessionId defaults to the chatId.
    expect(answer.sessionId).toBe(answer.chatId);
    const model = lastCall(bed.ollama);
    expect(model.model).toMatch(/^llama3\.2/);
    expect(model.system).toContain('You are terse.');
    expect(model.user).toBe('Q: what is up !');
  });

  it('chatId and sessionId: given ones kept; sessionId from overrideConfig, else the chatId', async () => {
    const f = await llmFlow();
    const a = await predict(bed, f.id, { question: 'one', chatId: 'chat-1' });
    expect(a).toMatchObject({ chatId: 'chat-1', sessionId: 'chat-1' });
    const b = await predict(bed, f.id, {
      question: 'two',
      chatId: 'chat-2',
      overrideConfig: { sessionId: 'sess-2' },
    });
    expect(b).toMatchObject({ chatId: 'chat-2', sessionId: 'sess-2' });
    const c = await predict(bed, f.id, { question: 'three', sessionId: 'sess-3' });
    expect(c.sessionId).toBe('sess-3');
    expect(c.chatId).toMatch(UUID);
  });

  it('memory window sends the last N turns of the same session only', async () => {
    const f = await llmFlow({ memory: { type: 'window', windowSize: 2 } });
    for (const q of ['alpha one', 'bravo two', 'charlie three'])
      await predict(bed, f.id, { question: q, sessionId: 'A' });
    await predict(bed, f.id, { question: 'delta four', sessionId: 'B' });
    const last = await predict(bed, f.id, { question: 'echo five', sessionId: 'A' });
    expect(last.text).toBe('Echo: echo five');
    const model = lastCall(bed.ollama);
    expect(model.user).toBe('echo five');
    // The two latest pairs of session A: both the questions and the answers.
    for (const turn of ['bravo two', 'Echo: bravo two', 'charlie three', 'Echo: charlie three'])
      expect(model.all).toContain(turn);
    expect(model.all).not.toContain('alpha one');
    expect(model.all).not.toContain('delta four');
    // Memory turns go in order, oldest first.
    expect(model.all.indexOf('bravo two')).toBeLessThan(model.all.indexOf('charlie three'));
  });

  it('memory none sends no earlier turns', async () => {
    const f = await llmFlow();
    await predict(bed, f.id, { question: 'first question', sessionId: 'N' });
    await predict(bed, f.id, { question: 'second question', sessionId: 'N' });
    expect(lastCall(bed.ollama).all).not.toContain('first question');
  });

  it('a request history replaces the stored memory', async () => {
    const f = await llmFlow({ memory: { type: 'window', windowSize: 5 } });
    await predict(bed, f.id, { question: 'foxtrot six', sessionId: 'H' });
    await predict(bed, f.id, {
      question: 'india nine',
      sessionId: 'H',
      history: [
        { role: 'userMessage', content: 'golf seven' },
        { type: 'apiMessage', message: 'hotel eight' },
      ],
    });
    const model = lastCall(bed.ollama);
    expect(model.all).toContain('golf seven');
    expect(model.all).toContain('hotel eight');
    expect(model.all).not.toContain('foxtrot six');
    expect(model.user).toBe('india nine');
  });

  it('a rag flow puts the passages in the prompt and returns them as sourceDocuments', async () => {
    const f = await ragFlow({ topK: 2 });
    const answer = await predict(bed, f.id, { question: 'Why do sea otters hold hands while they sleep?' });
    expect(answer.sourceDocuments.length).toBeGreaterThan(0);
    expect(answer.sourceDocuments.length).toBeLessThanOrEqual(2);
    const [top] = answer.sourceDocuments;
    expect(top?.pageContent).toContain('hold hands');
    expect(top?.metadata).toMatchObject({
      documentId: docIds[0],
      topic: 'kb',
      pageNumber: expect.any(Number),
      score: expect.any(Number),
    });
    const model = lastCall(bed.ollama);
    expect(model.user).toContain('Question: Why do sea otters hold hands while they sleep?');
    for (const doc of answer.sourceDocuments) expect(model.user).toContain(doc.pageContent);
    expect(answer.text).toBe(`Echo: ${model.user}`);
  });

  it('overrideConfig: a field outside overridableFields is 403 naming it; an allowed one applies', async () => {
    const f = await llmFlow({ systemPrompt: 'Plain.', overridableFields: ['systemPrompt'] });
    const refused = await call(bed, 'POST', `/api/v1/prediction/${f.id}`, {
      body: { question: 'q', overrideConfig: { maxTokens: 5, topK: 2, systemPrompt: 'ok' } },
    });
    const body = expectFlowError(refused, 403, 'FORBIDDEN');
    const fields = (body.details as { fields: string[] }).fields;
    expect([...fields].sort()).toEqual(['maxTokens', 'topK']);
    expect(body.message).toContain('maxTokens');
    expect(bed.ollama.requests).toHaveLength(0);
    await predict(bed, f.id, { question: 'arr', overrideConfig: { systemPrompt: 'Speak like a pirate.' } });
    const model = lastCall(bed.ollama);
    expect(model.system).toContain('Speak like a pirate.');
    expect(model.system).not.toContain('Plain.');
  });

  it('an overridable model is switched per request, within the key’s models', async () => {
    const f = await llmFlow({ overridableFields: ['model'] });
    const answer = await predict(bed, f.id, {
      question: 'which model',
      overrideConfig: { model: 'gpt-4o-mini' },
    });
    expect(answer.text).toBe('Echo: which model');
    expect(lastCall(bed.openai).model).toBe('gpt-4o-mini');
    expect(bed.ollama.requests).toHaveLength(0);
    const { key: limited } = await bed.p.createKey({
      name: 'mini only',
      type: 'development',
      services: ['flow'],
      role: 'Writer',
      models: ['gpt-4o-mini'],
    });
    const mini = await createFlow(bed, {
      name: 'mini',
      kind: 'llm',
      model: 'gpt-4o-mini',
      overridableFields: ['model'],
    });
    expect((await predict(bed, mini.id, { question: 'ok' }, limited)).text).toBe('Echo: ok');
    expectFlowError(
      await call(bed, 'POST', `/api/v1/prediction/${mini.id}`, {
        key: limited,
        body: { question: 'sneaky', overrideConfig: { model: 'llama3.2' } },
      }),
      403,
      'FORBIDDEN',
    );
    expect(bed.ollama.requests).toHaveLength(0);
  });

  it('customer tokens may not predict', async () => {
    const f = await llmFlow();
    const token = await customerToken(bed);
    expectFlowError(
      await call(bed, 'POST', `/api/v1/prediction/${f.id}`, { key: token, body: { question: 'hi' } }),
      403,
      'FORBIDDEN',
    );
  });

  it('vars and sessionId are always allowed; vars fill {vars.NAME}; vars.context joins {context}', async () => {
    const f = await llmFlow({ promptTemplate: 'Context: {context}\n{vars.tone}: {question}' });
    const answer = await predict(bed, f.id, {
      question: 'hello',
      overrideConfig: { sessionId: 'vs', vars: { tone: 'cheerful', context: 'The vault code is 4242.' } },
    });
    expect(answer.sessionId).toBe('vs');
    const model = lastCall(bed.ollama);
    expect(model.user).toContain('The vault code is 4242.');
    expect(model.user).toContain('cheerful: hello');
  });

  it('on a rag flow vars.context is added to the retrieved passages', async () => {
    const f = await ragFlow({ topK: 1 });
    const answer = await predict(bed, f.id, {
      question: 'What is a sourdough starter?',
      overrideConfig: { vars: { context: 'Extra note: rye flour works too.' } },
    });
    const model = lastCall(bed.ollama);
    expect(model.user).toContain('Extra note: rye flour works too.');
    expect(model.user).toContain(answer.sourceDocuments[0]?.pageContent as string);
  });

  it('streams Flowise’s SSE frames: start, tokens, metadata, end; tokens joined are the answer', async () => {
    const f = await llmFlow();
    const res = await stream(f.id, { question: 'stream this please', chatId: 'sc-1' });
    expect(res.status, res.text).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const events = sseFrames(res.text);
    const names = events.map((e) => e.event);
    expect(names[0]).toBe('start');
    expect(names.slice(-2)).toEqual(['metadata', 'end']);
    expect(new Set(names.slice(1, -2))).toEqual(new Set(['token']));
    // The fake streams word by word: the flow passes tokens on, not one block.
    expect(names.filter((n) => n === 'token').length).toBeGreaterThan(1);
    expect(events.at(-1)?.data).toBe('[DONE]');
    const text = tokensOf(events);
    expect(text).toBe('Echo: stream this please');
    expect(text.startsWith(events[0]?.data as string)).toBe(true);
    const metadata = events.at(-2)?.data as Record<string, unknown>;
    expect(metadata).toMatchObject({
      chatId: 'sc-1',
      chatMessageId: expect.any(String),
      question: 'stream this please',
      sessionId: 'sc-1',
      memoryType: expect.any(String),
    });
    const json = await predict(bed, f.id, { question: 'stream this please' });
    expect(json.text).toBe(text);
  });

  it('a streamed rag answer sends its sourceDocuments before the metadata', async () => {
    const f = await ragFlow({ topK: 2 });
    const res = await stream(f.id, { question: 'Which volcano is the largest active volcano?' });
    expect(res.status, res.text).toBe(200);
    const events = sseFrames(res.text);
    const names = events.map((e) => e.event);
    expect(names[0]).toBe('start');
    expect(names.slice(-3)).toEqual(['sourceDocuments', 'metadata', 'end']);
    const docs = events.at(-3)?.data as Prediction['sourceDocuments'];
    expect(Array.isArray(docs)).toBe(true);
    expect(docs[0]?.metadata.documentId).toBe(docIds[3]);
    expect(tokensOf(events)).toBe(`Echo: ${lastCall(bed.ollama).user}`);
  });

  it('asking to stream a flow with isStreaming false answers JSON', async () => {
    const f = await llmFlow({ isStreaming: false });
    const res = await stream(f.id, { question: 'json please' });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(res.json()).toMatchObject({ text: 'Echo: json please', question: 'json please' });
  });

  it('a model failure before the first token is a 502 JSON, streaming or not', async () => {
    const f = await llmFlow();
    bed.ollama.failNext(500, 20);
    const streamed = await stream(f.id, { question: 'fail me' });
    expect(streamed.headers.get('content-type')).toMatch(/^application\/json/);
    expectFlowError(streamed, 502, 'UPSTREAM_ERROR');
    expectFlowError(
      await call(bed, 'POST', `/api/v1/prediction/${f.id}`, { body: { question: 'fail me' } }),
      502,
      'UPSTREAM_ERROR',
    );
    const dead = await createFlow(bed, { name: 'dead', kind: 'llm', model: 'dead-alone' });
    expectFlowError(await stream(dead.id, { question: 'nobody home' }), 502, 'UPSTREAM_ERROR');
  });

  it('a failure mid-stream sends an error event, then end', async () => {
    const f = await llmFlow();
    bed.ollama.errorAfterChunks = 2;
    const res = await stream(f.id, { question: 'one two three four five six' });
    expect(res.status).toBe(200);
    const events: FlowEvent[] = sseFrames(res.text);
    expect(events[0]?.event).toBe('start');
    expect(events.map((e) => e.event).slice(-2)).toEqual(['error', 'end']);
    expect(events.at(-2)?.data).toEqual(expect.stringMatching(/./));
  });

  it('a client that leaves mid-stream aborts the model call', async () => {
    const f = await llmFlow();
    bed.ollama.stallAfterChunks = 2;
    const controller = new AbortController();
    const res = await fetch(`${bed.url}/api/v1/prediction/${f.id}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${bed.p.adminKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ question: 'never finish this answer', streaming: true }),
      signal: controller.signal,
    });
    expect(res.status).toBe(200);
    const reader = (res.body as ReadableStream<Uint8Array>).getReader();
    const decoder = new TextDecoder();
    let seen = '';
    while (!seen.includes('"event":"start"')) {
      const { value, done } = await reader.read();
      if (done) break;
      seen += decoder.decode(value, { stream: true });
    }
    expect(seen).toContain('"event":"start"');
    controller.abort();
    await bed.ollama.untilAborted(1);
  });

  it('rateLimit: limitMax per window per calling key, then 429 with limitMsg', async () => {
    const f = await llmFlow({
      rateLimit: { limitMax: 2, limitDuration: 60, limitMsg: 'Too many questions, slow down' },
    });
    await predict(bed, f.id, { question: 'r1' });
    await predict(bed, f.id, { question: 'r2' });
    const limited = expectFlowError(
      await call(bed, 'POST', `/api/v1/prediction/${f.id}`, { body: { question: 'r3' } }),
      429,
      'RATE_LIMIT_EXCEEDED',
    );
    expect(limited.message).toBe('Too many questions, slow down');
    const { key: other } = await bed.p.createKey({
      name: 'other',
      type: 'development',
      services: ['flow'],
      role: 'Writer',
    });
    expect((await predict(bed, f.id, { question: 'r4' }, other)).text).toBe('Echo: r4');
  });

  it('404 for an unknown flow; 400 for uploads, a missing question, too long a history', async () => {
    expectFlowError(
      await call(bed, 'POST', '/api/v1/prediction/flow_nope', { body: { question: 'q' } }),
      404,
      'FLOW_NOT_FOUND',
    );
    const f = await llmFlow();
    const path = `/api/v1/prediction/${f.id}`;
    expectNamesField(
      await call(bed, 'POST', path, {
        body: { question: 'q', uploads: [{ type: 'file', name: 'a.png', mime: 'image/png', data: 'data:' }] },
      }),
      'uploads',
    );
    expectNamesField(await call(bed, 'POST', path, { body: {} }), 'question');
    expectNamesField(await call(bed, 'POST', path, { body: { question: '' } }), 'question');
    expectNamesField(await call(bed, 'POST', path, { body: { question: 'x'.repeat(100_001) } }), 'question');
    expectNamesField(await call(bed, 'POST', path, { body: { question: 42 } }), 'question');
    const history = Array.from({ length: 101 }, () => ({ role: 'userMessage', content: 'x' }));
    expectNamesField(await call(bed, 'POST', path, { body: { question: 'q', history } }), 'history');
    expect(bed.ollama.requests).toHaveLength(0);
    // What Flowise's SDK and widget send besides is accepted; empty uploads too.
    const ok = await predict(bed, f.id, {
      question: 'fine',
      chatflowId: f.id,
      leadEmail: 'a@example.com',
      uploads: [],
    });
    expect(ok.text).toBe('Echo: fine');
  });

  it('records the call against the calling key as flow.prediction; the token budget applies', async () => {
    const f = await llmFlow();
    const { key, id } = await bed.p.createKey({
      name: 'usage',
      type: 'development',
      services: ['flow'],
      role: 'Writer',
    });
    await predict(bed, f.id, { question: 'count me' }, key);
    const list = await call(bed, 'GET', `/v1/llm/requests?keyId=${id}`);
    expect(list.status, list.text).toBe(200);
    const { data } = list.json() as { data: Array<Record<string, unknown>> };
    expect(data).toHaveLength(1);
    expect(data[0]).toMatchObject({
      keyId: id,
      endpoint: 'flow.prediction',
      model: 'llama3.2',
      status: 'success',
    });
    expect(data[0]?.promptTokens).toBeGreaterThan(0);

    const { key: budgeted } = await bed.p.createKey({
      name: 'budget',
      type: 'development',
      services: ['flow'],
      role: 'Writer',
      dailyTokenBudget: 12,
    });
    const spend = () =>
      call(bed, 'POST', `/api/v1/prediction/${f.id}`, { key: budgeted, body: { question: 'one two three' } });
    const first = await spend();
    expect(first.status, first.text).toBe(200);
    let last = first;
    for (let i = 0; i < 6 && last.status === 200; i++) last = await spend();
    expectFlowError(last, 429, 'RATE_LIMIT_EXCEEDED');
  });

  it('a workflow flow runs the workflow and answers its text', async () => {
    const workflowId = await createWorkflow(
      bed.p,
      workflowBody('flow answer', [
        { name: 'Webhook', type: 'webhook', parameters: { path: 'flow-answer', responseMode: 'lastNode' } },
        {
          name: 'Set',
          type: 'set',
          parameters: {
            values: { text: '={{ "WF heard " + $json.body.question + " in " + $json.body.sessionId }}' },
            keepOnlySet: true,
          },
        },
      ]),
    );
    const f = await createFlow(bed, { name: 'wf', kind: 'workflow', workflowId });
    const answer = await predict(bed, f.id, { question: 'ping', sessionId: 'wf-s' });
    expect(answer).toMatchObject({ text: 'WF heard ping in wf-s', question: 'ping', sessionId: 'wf-s' });
    expect(bed.ollama.requests).toHaveLength(0);
  });
});
