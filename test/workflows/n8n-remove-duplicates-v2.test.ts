import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestPlatform } from '../helpers/platform.js';
import { testDialects } from '../helpers/services.js';
import { activate, createWorkflow, workflowPlatform } from './support.js';

/**
 * Remove Duplicates v2 as n8n exports it: a webhook's `body.items` split into items, deduplicated
 * against what earlier executions saw, the kept items answered (`allEntries`).
 */
function dedupeFlow(path: string, dedupe: Record<string, unknown>) {
  return {
    name: `dedupe ${path}`,
    nodes: [
      {
        id: `${path}-hook`,
        webhookId: `${path}-hook`,
        name: 'Webhook',
        type: 'n8n-nodes-base.webhook',
        typeVersion: 2,
        position: [0, 0],
        parameters: {
          httpMethod: 'POST',
          path,
          responseMode: 'lastNode',
          responseData: 'allEntries',
          options: {},
        },
      },
      {
        id: `${path}-split`,
        name: 'Split Out',
        type: 'n8n-nodes-base.splitOut',
        typeVersion: 1,
        position: [200, 0],
        parameters: { fieldToSplitOut: 'body.items', options: {} },
      },
      {
        id: `${path}-dedupe`,
        name: 'Remove Duplicates',
        type: 'n8n-nodes-base.removeDuplicates',
        typeVersion: 2,
        position: [400, 0],
        parameters: dedupe,
      },
    ],
    connections: {
      Webhook: { main: [[{ node: 'Split Out', type: 'main', index: 0 }]] },
      'Split Out': { main: [[{ node: 'Remove Duplicates', type: 'main', index: 0 }]] },
    },
  };
}

describe.each(await testDialects())('Remove Duplicates v2 across executions on %s', (dialect) => {
  let p: TestPlatform;
  const ids: Record<string, string> = {};
  beforeAll(async () => {
    p = await workflowPlatform(dialect);
    const flows: Record<string, Record<string, unknown>> = {
      seen: {
        operation: 'removeItemsSeenInPreviousExecutions',
        dedupeValue: '={{ $json.id }}',
        options: {},
      },
      incremental: {
        operation: 'removeItemsSeenInPreviousExecutions',
        logic: 'removeItemsUpToStoredIncrementalKey',
        incrementalDedupeValue: '={{ $json.n }}',
        options: { scope: 'workflow' },
      },
      dated: {
        operation: 'removeItemsSeenInPreviousExecutions',
        logic: 'removeItemsUpToStoredDate',
        dateDedupeValue: '={{ $json.at }}',
        options: {},
      },
      small: {
        operation: 'removeItemsSeenInPreviousExecutions',
        dedupeValue: '={{ $json.id }}',
        options: { historySize: 3 },
      },
      within: { operation: 'removeDuplicateInputItems', compare: 'selectedFields', fieldsToCompare: 'id' },
    };
    for (const [path, parameters] of Object.entries(flows)) {
      ids[path] = await createWorkflow(p, dedupeFlow(path, parameters));
      await activate(p, ids[path] as string);
    }
  });
  afterAll(() => p.close());

  const send = async (path: string, items: unknown[]) => {
    const res = await p.request({ method: 'POST', url: `/webhook/${path}`, key: null, payload: { items } });
    return { status: res.statusCode, body: res.json() as unknown };
  };

  it('keeps only keys no earlier execution saw; items sharing a key go together', async () => {
    const first = await send('seen', [{ id: 1 }, { id: 2, copy: 'a' }, { id: 2, copy: 'b' }, { id: 3 }]);
    expect(first.body).toEqual([{ id: 1 }, { id: 2, copy: 'a' }, { id: 2, copy: 'b' }, { id: 3 }]);
    const second = await send('seen', [{ id: 2 }, { id: 4 }, { id: 3 }]);
    expect(second.body).toEqual([{ id: 4 }]);
    // Keys are kept hashed: the stored rows never hold the values themselves.
    const rows = await p.ctx.db
      .selectFrom('workflow_dedupe_keys')
      .select('key_hash')
      .where('workflow_id', '=', ids.seen as string)
      .execute();
    expect(rows).toHaveLength(4);
    expect(rows.map((r) => r.key_hash)).not.toContain('1');
  });

  it('keeps items above the highest number seen so far', async () => {
    expect((await send('incremental', [{ n: 5 }, { n: 3 }, { n: 7 }])).body).toEqual([
      { n: 5 },
      { n: 3 },
      { n: 7 },
    ]);
    expect((await send('incremental', [{ n: 6 }, { n: 8 }, { n: '7' }])).body).toEqual([{ n: 8 }]);
    expect((await send('incremental', [{ n: 8 }])).status).toBe(200);
  });

  it('keeps items later than the latest date seen so far', async () => {
    await send('dated', [{ at: '2026-01-01T00:00:00Z' }, { at: '2026-03-01T00:00:00Z' }]);
    const later = await send('dated', [{ at: '2026-02-01T00:00:00Z' }, { at: '2026-04-01T10:00:00+02:00' }]);
    expect(later.body).toEqual([{ at: '2026-04-01T10:00:00+02:00' }]);
  });

  it('fails the node, as n8n does, on a value that is not a date or number', async () => {
    const res = await send('dated', [{ at: 'not a date' }]);
    expect(res.status).toBe(422);
    expect(JSON.stringify(res.body)).toContain("The value 'not a date' is not a valid date");
    expect((await send('incremental', [{ n: 'many' }])).status).toBe(422);
  });

  it('refuses a run that would grow the history past its size, and forgets nothing', async () => {
    expect((await send('small', [{ id: 'a' }, { id: 'b' }])).body).toEqual([{ id: 'a' }, { id: 'b' }]);
    const over = await send('small', [{ id: 'c' }, { id: 'd' }]);
    expect(over.status).toBe(422);
    expect(JSON.stringify(over.body)).toContain('exceeds the maximum history size');
    expect((await send('small', [{ id: 'a' }])).body).toEqual([]);
  });

  it('removes duplicates within one input as v1.1 does', async () => {
    const res = await send('within', [{ id: 1, v: 'x' }, { id: 1, v: 'y' }, { id: 2 }]);
    expect(res.body).toEqual([{ id: 1, v: 'x' }, { id: 2 }]);
    expect((await send('within', [{ id: 1 }])).body).toEqual([{ id: 1 }]);
  });

  it('clears the history with clearDeduplicationHistory, in its own workflow only', async () => {
    // Webhook → Split Out → If clear → Remove Duplicates (clear) | Remove Duplicates (seen), both workflow-wide.
    const body = dedupeFlow('clear', {
      operation: 'removeItemsSeenInPreviousExecutions',
      dedupeValue: '={{ $json.id }}',
      options: { scope: 'workflow' },
    });
    body.nodes.push(
      {
        id: 'clear-if',
        name: 'If',
        type: 'n8n-nodes-base.if',
        typeVersion: 2,
        position: [300, 0],
        parameters: {
          conditions: {
            options: { caseSensitive: true, leftValue: '', typeValidation: 'loose' },
            conditions: [
              {
                id: 'c1',
                leftValue: '={{ $json.clear }}',
                rightValue: '',
                operator: { type: 'boolean', operation: 'true', singleValue: true },
              },
            ],
            combinator: 'and',
          },
          options: {},
        } as never,
      },
      {
        id: 'clear-node',
        name: 'Clear',
        type: 'n8n-nodes-base.removeDuplicates',
        typeVersion: 2,
        position: [400, 200],
        parameters: { operation: 'clearDeduplicationHistory', options: { scope: 'workflow' } } as never,
      },
    );
    const connections = body.connections as Record<string, unknown>;
    connections['Split Out'] = { main: [[{ node: 'If', type: 'main', index: 0 }]] };
    connections.If = {
      main: [
        [{ node: 'Clear', type: 'main', index: 0 }],
        [{ node: 'Remove Duplicates', type: 'main', index: 0 }],
      ],
    };
    await activate(p, await createWorkflow(p, body));
    expect((await send('clear', [{ id: 1 }])).body).toEqual([{ id: 1 }]);
    expect((await send('clear', [{ id: 1 }])).body).toEqual([]);
    expect((await send('clear', [{ clear: true }])).status).toBe(200);
    expect((await send('clear', [{ id: 1 }])).body).toEqual([{ id: 1 }]);
    // Another workflow's history is untouched.
    expect((await send('seen', [{ id: 1 }])).body).toEqual([]);
  });

  it("deletes a workflow's history with the workflow", async () => {
    const res = await p.request({ method: 'DELETE', url: `/api/v1/workflows/${ids.seen}` });
    expect(res.statusCode).toBe(200);
    const left = await sql<{
      n: number;
    }>`select count(*) as n from workflow_dedupe_keys where workflow_id = ${ids.seen}`.execute(p.ctx.db);
    expect(Number(left.rows[0]?.n)).toBe(0);
  });

  it('refuses unknown operations, logic and options at save', async () => {
    for (const [parameters, field] of [
      [{ operation: 'removeEverything' }, 'operation'],
      [{ operation: 'removeItemsSeenInPreviousExecutions', logic: 'newest' }, 'logic'],
      [{ operation: 'removeItemsSeenInPreviousExecutions', options: { scope: 'account' } }, 'options.scope'],
      [
        { operation: 'removeItemsSeenInPreviousExecutions', options: { historySize: 0 } },
        'options.historySize',
      ],
      [{ operation: 'clearDeduplicationHistory', mode: 'deleteKeyValuesFromDatabase' }, 'mode'],
    ] as const) {
      const res = await p.request({
        method: 'POST',
        url: '/api/v1/workflows',
        payload: dedupeFlow('bad', parameters),
      });
      expect(res.statusCode, field).toBe(400);
      expect(JSON.stringify(res.json()), field).toContain(`nodes[2].parameters.${field}`);
    }
  });
});
