import { describe, expect, it } from 'vitest';
import { defaultNodeRegistry } from '../nodes/index.js';
import { ctx, testDeps, trigger, webhookNode, workflow } from './testing.js';
import type { NodeFinished, RunContext } from './types.js';
import { WorkflowEngine } from './workflow-engine.js';

const engine = new WorkflowEngine(testDeps(), defaultNodeRegistry);

/** Runs a definition and returns what onNodeFinished heard, in order (and the outcome). */
async function heard(def: ReturnType<typeof workflow>, extra: Partial<RunContext> = {}, items = trigger()) {
  const events: Array<NodeFinished | string> = [];
  const outcome = await engine.run(def, items, {
    ...ctx,
    ...extra,
    onNodeFinished: (event) => {
      events.push(event);
    },
    onRespond: () => {
      events.push('responded');
    },
  });
  return { events, outcome };
}

const names = (events: Array<NodeFinished | string>) =>
  events.map((e) => (typeof e === 'string' ? e : `${e.nodeName}#${e.runIndex}`));

describe('RunContext.onNodeFinished', () => {
  it('hears each node run as recorded, in the order they ran; a disabled node is not one', async () => {
    const def = workflow(
      [
        webhookNode,
        { name: 'Off', type: 'set', disabled: true, parameters: { values: { off: 1 } } },
        {
          name: 'Big?',
          type: 'if',
          parameters: { conditions: [{ value1: '={{ $json.n }}', operation: 'gt', value2: 5 }] },
        },
        { name: 'Big', type: 'noOp' },
        { name: 'Small', type: 'noOp' },
      ],
      [
        ['Webhook', 'Off'],
        ['Off', 'Big?'],
        ['Big?', 'Big', 0],
        ['Big?', 'Small', 1],
      ],
    );
    const { events, outcome } = await heard(def, {}, trigger([{ json: { n: 9 } }, { json: { n: 1 } }]));
    expect(outcome.status).toBe('success');
    expect(names(events)).toEqual(['Webhook#0', 'Big?#0', 'Big#0', 'Small#0']);
    for (const event of events as NodeFinished[]) {
      // The very object stored in the run data, output included.
      expect(event.data).toBe(outcome.state.runData[event.nodeName]?.[event.runIndex]);
    }
    const branch = (events as NodeFinished[])[1];
    expect(branch?.nodeType).toBe('n8n-nodes-base.if');
    expect(branch?.data.output.map((o) => o.map((i) => i.json.n))).toEqual([[9], [1]]);
  });

  it('counts a node run twice by its run index', async () => {
    const def = workflow(
      [webhookNode, { name: 'A', type: 'noOp' }, { name: 'B', type: 'noOp' }, { name: 'C', type: 'noOp' }],
      [
        ['Webhook', 'A'],
        ['Webhook', 'B'],
        ['A', 'C'],
        ['B', 'C'],
      ],
    );
    const { events, outcome } = await heard(def);
    expect(outcome.state.runData.C).toHaveLength(2);
    expect(names(events).filter((n) => n.startsWith('C'))).toEqual(['C#0', 'C#1']);
  });

  it('hears a failed node before the run ends, with its error', async () => {
    const def = workflow(
      [
        webhookNode,
        { name: 'Stop', type: 'stopAndError', parameters: { errorMessage: 'no' } },
        { name: 'After', type: 'noOp' },
      ],
      [
        ['Webhook', 'Stop'],
        ['Stop', 'After'],
      ],
    );
    const { events, outcome } = await heard(def);
    expect(outcome.status).toBe('error');
    expect(names(events)).toEqual(['Webhook#0', 'Stop#0']);
    expect((events[1] as NodeFinished).data.error?.message).toBe('no');
  });

  it('hears a pinned node with its pinned items, and a webhook answer before the answering node', async () => {
    const def = workflow(
      [
        { ...webhookNode, parameters: { path: 'in', responseMode: 'responseNode' } },
        { name: 'Pinned', type: 'noOp' },
        { name: 'Respond', type: 'respondToWebhook', parameters: { respondWith: 'noData' } },
      ],
      [
        ['Webhook', 'Pinned'],
        ['Pinned', 'Respond'],
      ],
    );
    const { events } = await heard(def, {
      mode: 'manual',
      pinData: { Pinned: [{ json: { pinned: true } }] },
    });
    expect(names(events)).toEqual(['Webhook#0', 'Pinned#0', 'responded', 'Respond#0']);
    expect((events[1] as NodeFinished).data.output).toEqual([[{ json: { pinned: true } }]]);
  });

  it('hears a node cut off by a stop, with the reason', async () => {
    const stop = new AbortController();
    // The request never answers; the stop comes once the node has started it.
    const http = () => {
      stop.abort();
      return new Promise<never>(() => {});
    };
    const stopping = new WorkflowEngine(testDeps({ http }), defaultNodeRegistry);
    const def = workflow(
      [webhookNode, { name: 'Call', type: 'httpRequest', parameters: { url: 'https://example.test' } }],
      [['Webhook', 'Call']],
    );
    const events: NodeFinished[] = [];
    const outcome = await stopping.run(def, trigger(), {
      ...ctx,
      stopSignal: stop.signal,
      onNodeFinished: (event) => {
        events.push(event);
      },
    });
    expect(outcome.status).toBe('canceled');
    expect(events.map((e) => e.nodeName)).toEqual(['Webhook', 'Call']);
    expect(events[1]?.data.error?.message).toBe(outcome.state.error?.message);
    expect(events[1]?.data.output).toEqual([]);
  });
});
