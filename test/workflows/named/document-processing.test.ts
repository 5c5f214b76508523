import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { WorkflowDefinition } from '../../../src/modules/workflows/engine/types.js';
import { defaultNodeRegistry } from '../../../src/modules/workflows/nodes/index.js';
import { type FakeServer, startFakeDocproc } from '../support/fakes/index.js';
import {
  answerOf,
  loadWorkflow,
  namedDeps,
  problemPaths,
  runWebhook,
  TOKENS,
  WorkflowEngine,
} from './harness.js';

describe('document-processing', () => {
  let def: WorkflowDefinition;
  let docproc: FakeServer;
  let engine: WorkflowEngine;
  const body = {
    documentId: 'doc-9',
    operations: ['index', 'chunk', 'embed'],
    chunkSize: 800,
    embeddingModel: 'nomic-embed-text',
  };
  const callsSince = (n: number) => docproc.received.slice(n).map((r) => `${r.method} ${r.path}`);

  beforeAll(async () => {
    def = await loadWorkflow('document-processing');
    docproc = await startFakeDocproc({ token: TOKENS.docproc });
    engine = new WorkflowEngine(namedDeps({ DOCPROC_URL: docproc.url }), defaultNodeRegistry);
  });
  afterAll(() => docproc.close());

  it('is a valid definition: platform API key, answered with 202 once the body is valid', () => {
    expect(engine.validate(def)).toEqual([]);
    expect(def).toMatchObject({ id: 'wf_document_processing', name: 'document-processing' });
    expect(engine.triggerNodes(def)[0]?.parameters).toMatchObject({
      path: 'document-processing',
      httpMethod: 'POST',
      authentication: 'apiKey',
      responseMode: 'responseNode',
    });
  });

  it('processes the document step by step (chunk, embed, index), in that order, each waited for', async () => {
    const before = docproc.received.length;
    const outcome = await runWebhook(engine, def, body);
    expect(outcome.status, JSON.stringify(outcome.state.error)).toBe('success');
    expect(callsSince(before)).toEqual([
      'POST /api/documents/doc-9/process',
      'POST /api/documents/doc-9/process',
      'POST /api/documents/doc-9/process',
    ]);
    const calls = docproc.received.slice(before);
    expect(calls.map((c) => (c.body as { operations: string[] }).operations)).toEqual([
      ['chunk'],
      ['embed'],
      ['index'],
    ]);
    for (const call of calls) {
      expect(call.query).toEqual({ wait: 'true' });
      expect(call.body).toMatchObject({ chunkSize: 800, embeddingModel: 'nomic-embed-text' });
      expect(call.headers.authorization).toBe('Bearer docproc-token');
    }
    expect(answerOf(outcome)).toEqual({
      documentId: 'doc-9',
      operations: ['index', 'chunk', 'embed'],
      status: 'processed',
      chunk: {
        documentId: 'doc-9',
        status: 'chunked',
        topic: 'default',
        chunkCount: 15,
        embeddingModel: 'nomic-embed-text',
      },
      embed: {
        documentId: 'doc-9',
        status: 'embedded',
        topic: 'default',
        chunkCount: 15,
        embeddingModel: 'nomic-embed-text',
      },
      index: {
        documentId: 'doc-9',
        status: 'indexed',
        topic: 'default',
        chunkCount: 15,
        embeddingModel: 'nomic-embed-text',
      },
    });
  });

  it('runs only the operations asked for', async () => {
    const before = docproc.received.length;
    const outcome = await runWebhook(engine, def, { ...body, documentId: 'doc/10', operations: ['embed'] });
    expect(outcome.status, JSON.stringify(outcome.state.error)).toBe('success');
    expect(callsSince(before)).toEqual(['POST /api/documents/doc%2F10/process']);
    expect(docproc.received[before]?.body).toMatchObject({ operations: ['embed'] });
    expect(answerOf(outcome)).toMatchObject({ operations: ['embed'], chunk: null, index: null });
  });

  it('an invalid body ends in error listing every bad field', async () => {
    const before = docproc.received.length;
    const outcome = await runWebhook(engine, def, {
      documentId: '',
      operations: ['chunk', 'shred'],
      chunkSize: 1.5,
    });
    expect(outcome.status).toBe('error');
    expect(outcome.state.error?.node).toBe('Validate');
    expect(problemPaths(outcome)).toEqual([
      'body.chunkSize',
      'body.documentId',
      'body.embeddingModel',
      'body.operations',
    ]);
    expect(outcome.state.error?.problems).toContainEqual({
      path: 'body.operations',
      message: 'must be among chunk, embed, index; got ["shred"]',
    });
    expect(docproc.received.length).toBe(before);
    const noOps = await runWebhook(engine, def, { ...body, operations: [] });
    expect(problemPaths(noOps)).toEqual(['body.operations']);
  });

  it('a failing step ends in error naming the node, and later steps do not run', async () => {
    docproc.failNext('/api/documents/doc-9/process', 500);
    const before = docproc.received.length;
    const outcome = await runWebhook(engine, def, body);
    expect(outcome.status).toBe('error');
    expect(outcome.state.error).toMatchObject({ node: 'Chunk', message: 'Request failed with status 500' });
    expect(callsSince(before)).toHaveLength(1);
  });
});
