import { describe, expect, it } from 'vitest';
import { defaultNodeRegistry } from '../nodes/index.js';
import { WorkflowGraph } from './graph.js';
import { ctx, jsonOf, testDeps, trigger, webhookNode, workflow } from './testing.js';
import { WorkflowEngine } from './workflow-engine.js';

const engine = new WorkflowEngine(testDeps(), defaultNodeRegistry);
const set = (name: string, values: Record<string, unknown>) => ({
  name,
  type: 'set',
  parameters: { values },
});

describe('WorkflowGraph', () => {
  it('knows parents, children and connected inputs', () => {
    const g = new WorkflowGraph(
      workflow(
        [webhookNode, set('A', {}), set('B', {}), { name: 'M', type: 'merge' }],
        [
          ['Webhook', 'A'],
          ['Webhook', 'B'],
          ['A', 'M', 0, 0],
          ['B', 'M', 0, 1],
        ],
      ),
    );
    expect(g.children('Webhook', 0).map((t) => t.node)).toEqual(['A', 'B']);
    expect(g.parents('M')).toEqual([
      { node: 'A', outputIndex: 0, inputIndex: 0 },
      { node: 'B', outputIndex: 0, inputIndex: 1 },
    ]);
    expect(g.connectedInputs('M')).toEqual([0, 1]);
    expect(g.children('M', 0)).toEqual([]);
  });

  it("lists a node's ancestors nearest first, each once, through a loop too (n8n's getParentNodes)", () => {
    const g = new WorkflowGraph(
      workflow(
        [webhookNode, set('A', {}), set('B', {}), { name: 'M', type: 'merge' }, set('C', {})],
        [
          ['Webhook', 'A'],
          ['Webhook', 'B'],
          ['A', 'M', 0, 0],
          ['B', 'M', 0, 1],
          ['M', 'C'],
          ['C', 'A'],
        ],
      ),
    );
    expect(g.ancestors('M').map((n) => n.name)).toEqual(['A', 'B', 'Webhook', 'C']);
    expect(g.ancestors('Webhook')).toEqual([]);
  });
});

describe('execution order', () => {
  it('runs breadth-first along connections', async () => {
    const def = workflow(
      [webhookNode, set('A', { a: 1 }), set('B', { b: 1 }), set('A2', { a2: 1 }), set('B2', { b2: 1 })],
      [
        ['Webhook', 'A'],
        ['Webhook', 'B'],
        ['A', 'A2'],
        ['B', 'B2'],
      ],
    );
    const out = await engine.run(def, trigger(), ctx);
    expect(Object.keys(out.state.runData)).toEqual(['Webhook', 'A', 'B', 'A2', 'B2']);
    expect(out.state.lastNodeExecuted).toBe('B2');
  });

  it('lets expressions read earlier nodes by name', async () => {
    const def = workflow(
      [webhookNode, set('A', { x: 5 }), set('B', { y: '={{ $node["A"].json.x + 1 }}' })],
      [
        ['Webhook', 'A'],
        ['A', 'B'],
      ],
    );
    const out = await engine.run(def, trigger(), ctx);
    expect(jsonOf(out.state, 'B')[0]?.y).toBe(6);
  });
});

describe('branching', () => {
  const def = workflow(
    [
      webhookNode,
      {
        name: 'Big?',
        type: 'if',
        parameters: { conditions: [{ value1: '={{ $json.body.total }}', operation: 'gt', value2: 100 }] },
      },
      set('Big', { size: 'big' }),
      set('Small', { size: 'small' }),
    ],
    [
      ['Webhook', 'Big?'],
      ['Big?', 'Big', 0],
      ['Big?', 'Small', 1],
    ],
  );

  it('if sends true items to output 0 and false ones to output 1', async () => {
    const out = await engine.run(
      def,
      trigger([{ json: { body: { total: 500 } } }, { json: { body: { total: 5 } } }]),
      ctx,
    );
    expect(jsonOf(out.state, 'Big').map((j) => j.body)).toEqual([{ total: 500 }]);
    expect(jsonOf(out.state, 'Small').map((j) => j.body)).toEqual([{ total: 5 }]);
  });

  it('a branch that gets no items does not run', async () => {
    const out = await engine.run(def, trigger([{ json: { body: { total: 5 } } }]), ctx);
    expect(out.state.runData.Big).toBeUndefined();
    expect(out.lastItems.map((i) => i.json.size)).toEqual(['small']);
  });

  it('switch routes by rules with a fallback output', async () => {
    const d = workflow(
      [
        webhookNode,
        {
          name: 'Route',
          type: 'switch',
          parameters: {
            rules: [
              { conditions: [{ value1: '={{ $json.body.kind }}', operation: 'equals', value2: 'a' }] },
              { conditions: [{ value1: '={{ $json.body.kind }}', operation: 'equals', value2: 'b' }] },
            ],
            fallbackOutput: 'extra',
          },
        },
        set('A', { r: 'a' }),
        set('B', { r: 'b' }),
        set('Other', { r: 'other' }),
      ],
      [
        ['Webhook', 'Route'],
        ['Route', 'A', 0],
        ['Route', 'B', 1],
        ['Route', 'Other', 2],
      ],
    );
    const items = ['a', 'b', 'c', 'b'].map((kind) => ({ json: { body: { kind } } }));
    const out = await engine.run(d, trigger(items), ctx);
    expect(jsonOf(out.state, 'A')).toHaveLength(1);
    expect(jsonOf(out.state, 'B')).toHaveLength(2);
    expect(jsonOf(out.state, 'Other').map((j) => j.body)).toEqual([{ kind: 'c' }]);
  });
});

describe('merge', () => {
  const build = (mode: string) =>
    workflow(
      [
        webhookNode,
        set('A', { a: 1 }),
        set('A2', { a2: 1 }),
        set('B', { b: 1 }),
        { name: 'M', type: 'merge', parameters: { mode } },
      ],
      [
        ['Webhook', 'A'],
        ['Webhook', 'B'],
        ['A', 'A2'],
        ['A2', 'M', 0, 0],
        ['B', 'M', 0, 1],
      ],
    );

  it('waits for both inputs, then appends', async () => {
    const out = await engine.run(build('append'), trigger([{ json: { n: 1 } }]), ctx);
    expect(out.state.runData.M).toHaveLength(1);
    expect(Object.keys(out.state.runData)).toEqual(['Webhook', 'A', 'B', 'A2', 'M']);
    expect(jsonOf(out.state, 'M')).toEqual([
      { n: 1, a: 1, a2: 1 },
      { n: 1, b: 1 },
    ]);
  });

  it('combines by position', async () => {
    const out = await engine.run(build('combineByPosition'), trigger([{ json: { n: 1 } }]), ctx);
    expect(jsonOf(out.state, 'M')).toEqual([{ n: 1, a: 1, a2: 1, b: 1 }]);
  });

  it('runs with what it has when one input never arrives', async () => {
    const d = workflow(
      [
        webhookNode,
        {
          name: 'No',
          type: 'if',
          parameters: { conditions: [{ value1: 1, operation: 'equals', value2: 2 }] },
        },
        set('B', { b: 1 }),
        { name: 'M', type: 'merge' },
      ],
      [
        ['Webhook', 'No'],
        ['Webhook', 'B'],
        ['No', 'M', 0, 0],
        ['B', 'M', 0, 1],
      ],
    );
    const out = await engine.run(d, trigger([{ json: {} }]), ctx);
    expect(out.status).toBe('success');
    expect(jsonOf(out.state, 'M')).toEqual([{ b: 1 }]);
  });
});

describe('failures', () => {
  it('stopAndError fails the execution with node and message', async () => {
    const d = workflow(
      [
        webhookNode,
        { name: 'Stop', type: 'stopAndError', parameters: { errorMessage: '=Bad {{ $json.body.name }}' } },
        set('After', {}),
      ],
      [
        ['Webhook', 'Stop'],
        ['Stop', 'After'],
      ],
    );
    const out = await engine.run(d, trigger(), ctx);
    expect(out.status).toBe('error');
    expect(out.state.error).toEqual({ message: 'Bad Ada', node: 'Stop' });
    expect(out.state.runData.Stop?.[0]?.error?.message).toBe('Bad Ada');
    expect(out.state.runData.After).toBeUndefined();
    expect(out.state.lastNodeExecuted).toBe('Stop');
  });

  it('continueOnFail passes the error on as an item', async () => {
    const d = workflow(
      [
        webhookNode,
        { name: 'Stop', type: 'stopAndError', continueOnFail: true, parameters: { errorMessage: 'Nope' } },
        set('After', { seen: true }),
      ],
      [
        ['Webhook', 'Stop'],
        ['Stop', 'After'],
      ],
    );
    const out = await engine.run(d, trigger(), ctx);
    expect(out.status).toBe('success');
    expect(out.state.runData.Stop?.[0]?.error?.message).toBe('Nope');
    expect(jsonOf(out.state, 'After')).toEqual([{ error: 'Nope', seen: true }]);
  });

  it('a failing expression fails its node', async () => {
    const d = workflow([webhookNode, set('Bad', { x: '={{ $json. }}' })], [['Webhook', 'Bad']]);
    const out = await engine.run(d, trigger(), ctx);
    expect(out.status).toBe('error');
    expect(out.state.error?.node).toBe('Bad');
    expect(out.state.error?.message).toMatch(/Expression/);
  });

  it('an expression that returns the wrong type fails its node with the parameter named', async () => {
    const d = workflow(
      [
        webhookNode,
        { name: 'Respond', type: 'respondToWebhook', parameters: { responseCode: '={{ "abc" }}' } },
      ],
      [['Webhook', 'Respond']],
    );
    const out = await engine.run(d, trigger(), ctx);
    expect(out.status).toBe('error');
    expect(out.state.error?.message).toMatch(/parameters\.options\.responseCode/);
  });

  it('an endless loop of nodes is cut off', async () => {
    const d = workflow(
      [webhookNode, set('A', {}), set('B', {})],
      [
        ['Webhook', 'A'],
        ['A', 'B'],
        ['B', 'A'],
      ],
    );
    const out = await engine.run(d, trigger(), ctx);
    expect(out.status).toBe('error');
    expect(out.state.error?.message).toMatch(/endless loop/);
  });
});

describe('wait and resume', () => {
  const build = (parameters: Record<string, unknown>) =>
    workflow(
      [
        webhookNode,
        set('Before', { b: 1 }),
        { name: 'Wait', type: 'wait', parameters },
        set('After', { a: '={{ $json.b }}' }),
      ],
      [
        ['Webhook', 'Before'],
        ['Before', 'Wait'],
        ['Wait', 'After'],
      ],
    );

  it('pauses at a wait node with waitTill and a pending resume point, then resumes', async () => {
    const def = build({ amount: 2, unit: 'hours' });
    const out = await engine.run(def, trigger([{ json: {} }]), ctx);
    expect(out.status).toBe('waiting');
    expect(out.waitTill?.toISOString()).toBe('2030-01-02T05:04:05.000Z');
    expect(out.state.pending).toEqual([
      { node: 'Wait', input: [{ json: { b: 1 }, pairedItem: { item: 0 } }], waiting: true },
    ]);
    expect(out.state.runData.After).toBeUndefined();

    // The state goes through storage as JSON.
    const stored = JSON.parse(JSON.stringify(out.state));
    const done = await engine.resume(def, stored, null, ctx);
    expect(done.status).toBe('success');
    expect(jsonOf(done.state, 'Wait')).toEqual([{ b: 1 }]);
    expect(jsonOf(done.state, 'After')).toEqual([{ b: 1, a: 1 }]);
    expect(done.state.pending).toEqual([]);
    expect(stored.pending).toHaveLength(1);
  });

  it('a webhook wait has no waitTill and passes the resume call items on', async () => {
    const def = build({ resume: 'webhook' });
    const out = await engine.run(def, trigger([{ json: {} }]), ctx);
    expect(out.status).toBe('waiting');
    expect(out.waitTill).toBeNull();
    const done = await engine.resume(def, out.state, [{ json: { b: 'approved' } }], ctx);
    expect(jsonOf(done.state, 'After')).toEqual([{ b: 'approved', a: 'approved' }]);
  });

  it('a time already past does not pause', async () => {
    const out = await engine.run(
      build({ resume: 'specificTime', dateTime: '2000-01-01T00:00:00Z' }),
      trigger([{ json: {} }]),
      ctx,
    );
    expect(out.status).toBe('success');
    expect(jsonOf(out.state, 'After')).toEqual([{ b: 1, a: 1 }]);
  });

  it('keeps the rest of the queue and half-filled merges in the resume point', async () => {
    const def = workflow(
      [
        webhookNode,
        { name: 'Wait', type: 'wait', parameters: { resume: 'webhook' } },
        set('B', { b: 1 }),
        { name: 'M', type: 'merge' },
      ],
      [
        ['Webhook', 'Wait'],
        ['Webhook', 'B'],
        ['Wait', 'M', 0, 0],
        ['B', 'M', 0, 1],
      ],
    );
    const out = await engine.run(def, trigger([{ json: { n: 1 } }]), ctx);
    expect(out.status).toBe('waiting');
    const done = await engine.resume(def, out.state, null, ctx);
    expect(done.status).toBe('success');
    expect(jsonOf(done.state, 'M')).toEqual([{ n: 1 }, { n: 1, b: 1 }]);
  });
});
