import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestPlatform } from '../helpers/platform.js';
import { testDialects } from '../helpers/services.js';
import { activate, createWorkflow, n8nNode, workflowPlatform } from './support.js';

const set = (name: string, fields: Record<string, string>) =>
  n8nNode(name, 'set', 3.4, {
    assignments: {
      assignments: Object.entries(fields).map(([field, value], i) => ({
        id: String(i),
        name: field,
        type: 'string',
        value,
      })),
    },
    options: {},
  });

/**
 * Webhook → Split Out → Set (upper-case name) → IF (drops "a") → the node under test. Past the IF the
 * first item is "b": by position `$('Set').item` would be "A", by n8n's lineage it is "B".
 */
function lineage(path: string, last: ReturnType<typeof n8nNode>) {
  const nodes = [
    n8nNode('Webhook', 'webhook', 2, {
      httpMethod: 'POST',
      path,
      responseMode: 'lastNode',
      responseData: 'allEntries',
      options: {},
    }),
    n8nNode('Split Out', 'splitOut', 1, { fieldToSplitOut: 'body.people', options: {} }),
    set('Set', { up: '={{ $json.name.toUpperCase() }}' }),
    n8nNode('If', 'if', 2, {
      conditions: {
        options: { caseSensitive: true, leftValue: '', typeValidation: 'strict' },
        conditions: [
          {
            id: 'c',
            leftValue: '={{ $json.up }}',
            rightValue: 'A',
            operator: { type: 'string', operation: 'notEquals' },
          },
        ],
        combinator: 'and',
      },
      options: {},
    }),
    last,
  ];
  const chain = (from: string, to: string) => ({
    [from]: { main: [[{ node: to, type: 'main', index: 0 }]] },
  });
  return {
    name: `paired ${path}`,
    nodes,
    connections: {
      ...chain('Webhook', 'Split Out'),
      ...chain('Split Out', 'Set'),
      ...chain('Set', 'If'),
      ...chain('If', last.name),
    },
  };
}

describe.each(await testDialects())("n8n's pairedItem lineage on %s", (dialect) => {
  let p: TestPlatform;
  beforeAll(async () => {
    p = await workflowPlatform(dialect);
  });
  afterAll(() => p.close());

  const people = { people: [{ name: 'a' }, { name: 'b' }, { name: 'c' }] };

  it("$('Node').item and $node[…].json follow each item back through a filter", async () => {
    await activate(
      p,
      await createWorkflow(
        p,
        lineage(
          'paired-expr',
          set('Out', {
            fromSet: "={{ $('Set').item.json.up }}",
            fromSplit: "={{ $('Split Out').item.json.name }}",
            legacy: '={{ $node["Set"].json.up }}',
          }),
        ),
      ),
    );
    const res = await p.request({ method: 'POST', url: '/webhook/paired-expr', key: null, payload: people });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual([
      { fromSet: 'B', fromSplit: 'b', legacy: 'B' },
      { fromSet: 'C', fromSplit: 'c', legacy: 'C' },
    ]);
  });

  it('the Code node (once per item) reads the same lineage, and the run data shows it as n8n does', async () => {
    const id = await createWorkflow(
      p,
      lineage(
        'paired-code',
        n8nNode('Code', 'code', 2, {
          mode: 'runOnceForEachItem',
          jsCode: "return { json: { back: $('Split Out').item.json.name, here: $json.up } };",
        }),
      ),
    );
    await activate(p, id);
    const res = await p.request({ method: 'POST', url: '/webhook/paired-code', key: null, payload: people });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual([
      { back: 'b', here: 'B' },
      { back: 'c', here: 'C' },
    ]);

    const list = await p.request({
      method: 'GET',
      url: `/api/v1/executions?workflowId=${id}&includeData=true&limit=1`,
    });
    const runData = list.json().data[0].data.resultData.runData;
    // The IF passed items 1 and 2 of its input on its true output.
    expect(runData.If[0].data.main[0].map((i: { pairedItem: unknown }) => i.pairedItem)).toEqual([
      { item: 1 },
      { item: 2 },
    ]);
    expect(runData.If[0].source).toEqual([
      { previousNode: 'Set', previousNodeOutput: 0, previousNodeRun: 0 },
    ]);
    expect(runData['Split Out'][0].data.main[0].map((i: { pairedItem: unknown }) => i.pairedItem)).toEqual([
      { item: 0 },
      { item: 0 },
      { item: 0 },
    ]);
  });
});
