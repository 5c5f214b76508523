import { describe, expect, it } from 'vitest';
import { defaultNodeRegistry } from '../nodes/index.js';
import { webhookNodesOf } from './index.js';
import { ctx, jsonOf, testDeps, trigger, webhookNode, workflow } from './testing.js';
import { WorkflowEngine } from './workflow-engine.js';

const engine = new WorkflowEngine(testDeps(), defaultNodeRegistry);

describe('WorkflowEngine: webhook → set → respondToWebhook', () => {
  const def = workflow(
    [
      { ...webhookNode, parameters: { path: '/orders/', responseMode: 'responseNode' } },
      {
        name: 'Set',
        type: 'set',
        parameters: { values: { greeting: '=Hello {{ $json.body.name }}', n: 1 } },
      },
      {
        name: 'Respond',
        type: 'respondToWebhook',
        parameters: { responseCode: 201, responseHeaders: { 'X-Run': '={{ $execution.id }}' } },
      },
    ],
    [
      ['Webhook', 'Set'],
      ['Set', 'Respond'],
    ],
  );

  it('validates clean', () => {
    expect(engine.validate(def)).toEqual([]);
  });

  it('runs end to end and sets the webhook response', async () => {
    const out = await engine.run(def, trigger(), ctx);
    expect(out.status).toBe('success');
    expect(out.state.error).toBeNull();
    expect(out.state.lastNodeExecuted).toBe('Respond');
    expect(out.lastItems.map((i) => i.json)).toEqual([
      { body: { name: 'Ada' }, greeting: 'Hello Ada', n: 1 },
    ]);
    expect(out.webhookResponse).toEqual({
      statusCode: 201,
      headers: { 'x-run': 'exec_1', 'content-type': 'application/json; charset=utf-8' },
      body: { body: { name: 'Ada' }, greeting: 'Hello Ada', n: 1 },
    });
    const setRun = out.state.runData.Set?.[0];
    expect(setRun?.input).toEqual([{ json: { body: { name: 'Ada' } }, pairedItem: { item: 0 } }]);
    expect(setRun?.startTime).toBe('2030-01-02T03:04:05.000Z');
    expect(setRun?.executionTime).toBeGreaterThanOrEqual(0);
    expect(Object.keys(out.state.runData)).toEqual(['Webhook', 'Set', 'Respond']);
  });

  it('gives the service the webhook nodes with defaults', () => {
    expect(webhookNodesOf(def, defaultNodeRegistry)).toEqual([
      {
        nodeName: 'Webhook',
        nodeId: 'n0',
        path: 'orders',
        dynamicPrefix: null,
        httpMethod: 'POST',
        authentication: 'none',
        credentialId: null,
        responseMode: 'responseNode',
        responseCode: 200,
        responseData: 'firstEntryJson',
        options: {
          rawBody: false,
          bodyLimitBytes: 1_048_576,
          dedupeKey: null,
          hmacHeader: 'X-Signature',
          hmacTimestampHeader: 'X-Store-Timestamp',
          hmacRequireTimestamp: false,
          ipAllowList: null,
          binaryBody: 'never',
          binaryPropertyName: null,
          rawBodyAs: 'json',
        },
        responseBinaryPropertyName: 'data',
      },
    ]);
  });

  it('lists the trigger nodes', () => {
    expect(engine.triggerNodes(def).map((n) => n.name)).toEqual(['Webhook']);
  });

  it('does not share item objects between the trigger input and a node output', async () => {
    const items = [{ json: { body: { name: 'Ada' } } }];
    await engine.run(def, { nodeName: 'Webhook', items }, ctx);
    expect(items).toEqual([{ json: { body: { name: 'Ada' } } }]);
  });

  it('evaluates a dedupe-key expression for the service', async () => {
    const key = await engine.evaluateExpression(def, '={{ $json.headers["x-id"] }}', {
      headers: { 'x-id': 'abc' },
    });
    expect(key).toBe('abc');
  });

  it('runs a disabled node as a pass-through', async () => {
    const d = workflow(
      [
        webhookNode,
        { name: 'Set', type: 'set', disabled: true, parameters: { values: { x: 1 } } },
        { name: 'End', type: 'noOp' },
      ],
      [
        ['Webhook', 'Set'],
        ['Set', 'End'],
      ],
    );
    const out = await engine.run(d, trigger(), ctx);
    expect(jsonOf(out.state, 'End')).toEqual([{ body: { name: 'Ada' } }]);
    expect(out.state.runData.Set).toBeUndefined();
  });
});
