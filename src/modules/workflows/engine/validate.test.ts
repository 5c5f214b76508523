import { describe, expect, it } from 'vitest';
import { defaultNodeRegistry } from '../nodes/index.js';
import { testDeps, webhookNode, workflow } from './testing.js';
import { WorkflowEngine } from './workflow-engine.js';

const engine = new WorkflowEngine(testDeps(), defaultNodeRegistry);

describe('validate', () => {
  it('reports an unknown node type', () => {
    const def = workflow([webhookNode, { name: 'X', type: 'teleport' }], [['Webhook', 'X']]);
    expect(engine.validate(def)).toEqual([
      { path: 'nodes[1].type', message: "unknown node type 'teleport'" },
    ]);
  });

  it('reports a duplicate node name', () => {
    const def = workflow([webhookNode, { name: 'Webhook', type: 'noOp' }], []);
    expect(engine.validate(def)).toEqual([
      { path: 'nodes[1].name', message: "duplicate node name 'Webhook'" },
    ]);
  });

  it('reports connections from and to missing nodes, and to a missing input', () => {
    const def = workflow(
      [webhookNode, { name: 'A', type: 'noOp' }],
      [
        ['Webhook', 'Ghost'],
        ['Nobody', 'A'],
        ['A', 'Webhook'],
        ['Webhook', 'A', 0, 1],
      ],
    );
    expect(engine.validate(def)).toEqual([
      { path: 'connections.Webhook.main[0][0].node', message: "connection to missing node 'Ghost'" },
      { path: 'connections.Webhook.main[0][1].index', message: 'input index must be below 1' },
      { path: 'connections.Nobody', message: "connection from missing node 'Nobody'" },
      { path: 'connections.A.main[0][0].index', message: "node 'Webhook' takes no input" },
    ]);
  });

  it('reports missing and ill-typed parameters with their paths', () => {
    const def = workflow(
      [
        { name: 'Webhook', type: 'webhook', parameters: { httpMethod: 'FETCH', responseCode: '200' } },
        { name: 'Wait', type: 'wait', parameters: { amount: -1 } },
        { name: 'Stop', type: 'stopAndError', parameters: {} },
      ],
      [],
    );
    expect(engine.validate(def)).toEqual([
      { path: 'nodes[0].parameters.path', message: 'is required' },
      { path: 'nodes[0].parameters.httpMethod', message: 'must be equal to one of the allowed values' },
      { path: 'nodes[0].parameters.responseCode', message: 'must be integer' },
      { path: 'nodes[1].parameters.amount', message: 'must be >= 0' },
      { path: 'nodes[2].parameters.errorMessage', message: 'is required' },
    ]);
  });

  it('accepts an expression where a typed value is expected', () => {
    const def = workflow(
      [{ name: 'Webhook', type: 'webhook', parameters: { path: 'x', responseCode: '={{ 201 }}' } }],
      [],
    );
    expect(engine.validate(def)).toEqual([]);
  });

  it('requires the dedupe key to be an expression', () => {
    const def = workflow(
      [{ name: 'Webhook', type: 'webhook', parameters: { path: 'x', options: { dedupeKey: 'id' } } }],
      [],
    );
    expect(engine.validate(def)).toEqual([
      { path: 'nodes[0].parameters.options.dedupeKey', message: 'must be an expression (={{ … }})' },
    ]);
  });

  it('accepts several trigger nodes, as n8n does, but no connection into one', () => {
    const second = { name: 'Webhook 2', type: 'webhook', parameters: { path: 'y' } };
    expect(engine.validate(workflow([webhookNode, second], []))).toEqual([]);
    expect(engine.validate(workflow([webhookNode, second], [['Webhook', 'Webhook 2']]))).toEqual([
      { path: 'connections.Webhook.main[0][0].index', message: "node 'Webhook 2' takes no input" },
    ]);
  });
});
