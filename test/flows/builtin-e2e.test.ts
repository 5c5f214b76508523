import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listeningPlatform } from '../helpers/listening.js';
import type { TestPlatform } from '../helpers/platform.js';
import { testDialects } from '../helpers/services.js';
import { activate, createCredential, createWorkflow, flow } from '../workflows/support.js';

/**
 * Flows on the default configuration, built-in models only (no upstream): the corpus (a frozen copy
 * of this project's docs) is upserted as files into a rag flow over `builtin/extractive`; the named
 * workflows reach the flow through their webhooks (FLOW_URL unset: this very server).
 */
const CORPUS = path.join(import.meta.dirname, '..', 'fixtures', 'documents', 'corpus');

interface Prediction {
  text: string;
  chatId: string;
  sourceDocuments: Array<{ pageContent: string; metadata: { title: string; documentId: string } }>;
}

describe.each(await testDialects())('flows with built-in models end to end on %s', (dialect) => {
  let p: TestPlatform;
  let base: string;
  let flowId: string;

  const call = async (method: string, url: string, body?: unknown, key = p.adminKey) => {
    const res = await fetch(`${base}${url}`, {
      method,
      headers: { authorization: `Bearer ${key}`, ...(body ? { 'content-type': 'application/json' } : {}) },
      ...(body ? { body: JSON.stringify(body) } : {}),
    });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  };

  beforeAll(async () => {
    p = await listeningPlatform(dialect);
    base = p.ctx.config.PUBLIC_URL;
    // A rag flow needs an existing topic: the first file goes in through the documents API.
    const first = readdirSync(CORPUS).sort()[0] as string;
    const seed = await call('POST', '/api/documents/load', {
      source: 'markdown',
      content: readFileSync(path.join(CORPUS, first), 'utf8'),
      title: first,
      topic: 'platform-docs',
    });
    expect(seed.status).toBe(201);
    const created = await call('POST', '/api/v1/chatflows', {
      name: 'Docs assistant',
      kind: 'rag',
      model: 'builtin/extractive',
      topics: ['platform-docs'],
      topK: 4,
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    flowId = created.body.id as string;
    // The rest as Flowise's multipart upsert (`files`), as its docs' curl sends them.
    const form = new FormData();
    for (const file of readdirSync(CORPUS).sort())
      form.append(
        'files',
        new Blob([readFileSync(path.join(CORPUS, file))], { type: 'text/markdown' }),
        file,
      );
    form.append('chunkSize', '800');
    const upsert = await fetch(`${base}/api/v1/vector/upsert/${flowId}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${p.adminKey}` },
      body: form,
    });
    const upserted = (await upsert.json()) as { numAdded: number; addedDocs: unknown[] };
    expect(upsert.status, JSON.stringify(upserted)).toBe(200);
    expect(upserted.addedDocs).toHaveLength(readdirSync(CORPUS).length);
    expect(upserted.numAdded).toBeGreaterThan(20);
  }, 60_000);
  afterAll(() => p?.close());

  it('answers a known question by quoting the right document, which is its first source', async () => {
    const res = await call('POST', `/api/v1/prediction/${flowId}`, {
      question: 'How are fallbacks tried when a model fails before its first byte?',
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const answer = res.body as unknown as Prediction;
    expect(answer.sourceDocuments[0]?.metadata.title).toBe('llm.md');
    expect(answer.text.toLowerCase()).toContain('fallback');
    // Quoted from the passages the flow retrieved, not from the whole knowledge base.
    const firstQuote = answer.text.split(/(?<=[.!?])\s/)[0] as string;
    expect(answer.sourceDocuments.some((d) => d.pageContent.includes(firstQuote.slice(0, 40)))).toBe(true);
  });

  it('flow-builder-flow-trigger runs the question through the flow and answers its text', async () => {
    const flowKey = await p.createKey({
      name: 'workflow → flow',
      type: 'production',
      role: 'Writer',
      services: ['flow'],
    });
    await createCredential(p, 'flow-api-key', 'httpBearerAuth', { token: flowKey.key });
    await activate(p, 'wf_flow_builder_flow_trigger');
    const res = await p.app.inject({
      method: 'POST',
      url: '/webhook/flow-builder-flow-trigger',
      headers: { 'x-api-key': p.adminKey },
      payload: {
        flowId,
        input: {
          question: 'Is the game manifest cached by its content version?',
          context: 'asked by support',
        },
      },
    });
    expect(res.statusCode, res.body).toBe(200);
    const answer = res.json() as { flowId: string; answer: string; chatId: string; chatMessageId: string };
    expect(answer.flowId).toBe(flowId);
    expect(answer.answer.toLowerCase()).toContain('manifest');
    // The turn is in the flow's chat messages, under the chat the workflow got back.
    const messages = await fetch(`${base}/api/v1/chatmessage/${flowId}?chatId=${answer.chatId}`, {
      headers: { authorization: `Bearer ${p.adminKey}` },
    });
    const listed = (await messages.json()) as Array<{ id: string; role: string }>;
    expect(listed.map((m) => m.role)).toEqual(['userMessage', 'apiMessage']);
    expect(listed[1]?.id).toBe(answer.chatMessageId);
  });

  it('an unknown flow fails the trigger with the flow service’s 404 reason', async () => {
    const res = await p.app.inject({
      method: 'POST',
      url: '/webhook/flow-builder-flow-trigger',
      headers: { 'x-api-key': p.adminKey },
      payload: { flowId: 'flow_missing', input: { question: 'anything?' } },
    });
    expect(res.statusCode).toBe(502);
    expect(res.body).toMatch(/Flow 'flow_missing' was not found|404/);
  });

  it('llm-completion-processor routes flow:<id> into the flow', async () => {
    for (const name of ['llm-api-key', 'docs-api-token'])
      await createCredential(p, name, 'httpBearerAuth', { token: 'unused' });
    await activate(p, 'wf_llm_completion_processor');
    const res = await p.app.inject({
      method: 'POST',
      url: '/webhook/llm-completion-processor',
      headers: { 'x-api-key': p.adminKey },
      payload: {
        completionId: 'cmp-flow-1',
        model: 'upstream-model',
        result: 'How does a worker claim an execution so only one runs it?',
        destination: `flow:${flowId}`,
      },
    });
    expect(res.statusCode, res.body).toBe(200);
    const routed = res.json() as Record<string, string>;
    expect(routed).toMatchObject({ routed: true, target: 'flow', completionId: 'cmp-flow-1' });
    expect(routed.answer?.toLowerCase()).toContain('claim');
  });

  it('a workflow flow answers with the output of its workflow (execution mode flow)', async () => {
    const workflowId = await createWorkflow(
      p,
      flow('flow-answerer', [
        { name: 'Webhook', type: 'webhook', parameters: { path: 'flow-answerer', httpMethod: 'POST' } },
        {
          name: 'Answer',
          type: 'set',
          parameters: {
            keepOnlySet: true,
            values: { text: '={{ "You asked: " + $json.body.question + " / " + $json.body.context }}' },
          },
        },
      ]),
    );
    const created = await call('POST', '/api/v1/chatflows', { name: 'wf', kind: 'workflow', workflowId });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const res = await call('POST', `/api/v1/prediction/${created.body.id as string}`, {
      question: 'ping',
      overrideConfig: { vars: { context: 'ctx' } },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.text).toBe('You asked: ping / ctx');
    const executionId = res.body.executionId as string;
    const exe = await p.request({ method: 'GET', url: `/api/v1/executions/${executionId}` });
    expect((exe.json() as { mode: string }).mode).toBe('flow');
  });
});
