import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestPlatform } from '../helpers/platform.js';
import { testDialects } from '../helpers/services.js';
import type { Execution } from './db-support.js';
import { createWorkflow, n8nNode, workflowPlatform } from './support.js';

/** n8n's Manual Chat Trigger (templates from before the Chat Trigger): a manual run's items go on. */
describe.each(await testDialects())('Manual Chat Trigger on %s', (dialect) => {
  let p: TestPlatform;
  let id = '';
  beforeAll(async () => {
    p = await workflowPlatform(dialect);
    id = await createWorkflow(p, {
      name: 'manual chat',
      nodes: [
        {
          ...n8nNode('On new manual Chat Message', 'manualTrigger', 1, {}),
          type: '@n8n/n8n-nodes-langchain.manualChatTrigger',
          typeVersion: 1.1,
        },
        n8nNode('Echo', 'set', 3.4, {
          assignments: {
            assignments: [{ id: 'a', name: 'said', value: '={{ $json.input }}', type: 'string' }],
          },
          options: {},
        }),
      ],
      connections: {
        'On new manual Chat Message': { main: [[{ node: 'Echo', type: 'main', index: 0 }]] },
      },
      settings: {},
    });
  });
  afterAll(() => p.close());

  const outputOf = (e: Execution, node: string) =>
    (e.data?.resultData?.runData?.[node]?.[0]?.data?.main?.[0] ?? []).map((i) => i.json);
  const echo = (e: Execution) => outputOf(e, 'Echo');

  it("passes the run's chat message on, one empty item without", async () => {
    const res = await p.request({
      method: 'POST',
      url: `/api/v1/workflows/${id}/run`,
      payload: { items: [{ json: { input: 'hello', sessionId: 's1' } }] },
    });
    expect(res.statusCode, res.body).toBe(200);
    expect(echo(res.json() as Execution)).toEqual([{ said: 'hello' }]);
    const empty = await p.request({ method: 'POST', url: `/api/v1/workflows/${id}/run`, payload: {} });
    expect(echo(empty.json() as Execution)).toEqual([{ said: null }]);
  });
});
