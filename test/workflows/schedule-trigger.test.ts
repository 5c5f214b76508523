import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestPlatform } from '../helpers/platform.js';
import { testDialects } from '../helpers/services.js';
import { until } from '../helpers/until.js';
import { activate, createWorkflow, workflowPlatform } from './support.js';

/** Schedule Trigger → Edit Fields, as n8n exports it. */
function scheduled(interval: unknown[], settings: Record<string, unknown> = {}) {
  return {
    name: 'scheduled',
    nodes: [
      {
        id: 's1',
        name: 'Schedule Trigger',
        type: 'n8n-nodes-base.scheduleTrigger',
        typeVersion: 1.2,
        position: [0, 0],
        parameters: { rule: { interval } },
      },
      {
        id: 's2',
        name: 'Edit Fields',
        type: 'n8n-nodes-base.set',
        typeVersion: 3.4,
        position: [200, 0],
        parameters: {
          assignments: {
            assignments: [{ id: 'a', name: 'hour', value: '={{ $json.Hour }}', type: 'string' }],
          },
          includeOtherFields: true,
          options: {},
        },
      },
    ],
    connections: { 'Schedule Trigger': { main: [[{ node: 'Edit Fields', type: 'main', index: 0 }]] } },
    settings,
  };
}

interface Listed {
  id: string;
  mode: string;
  status: string;
}

describe.each(await testDialects())('Schedule Trigger on %s', (dialect) => {
  let p: TestPlatform;
  beforeAll(async () => {
    p = await workflowPlatform(dialect);
  });
  afterAll(() => p.close());

  const scheduler = () => {
    const api = p.ctx.apis.workflows;
    if (!api) throw new Error('workflows module not loaded');
    return api.scheduler;
  };
  const runsOf = async (workflowId: string): Promise<Listed[]> =>
    (
      (
        await p.request({ method: 'GET', url: `/api/v1/executions?workflowId=${workflowId}&limit=250` })
      ).json() as {
        data: Listed[];
      }
    ).data;
  /** Ticks until `count` runs exist (the worker's own timer may have started some), then once more. */
  const expectRuns = async (workflowId: string, count: number): Promise<Listed[]> => {
    await until(
      async () => {
        if ((await runsOf(workflowId)).length >= count) return true;
        await scheduler().tick();
        return false;
      },
      `${count} runs of ${workflowId}`,
      20_000,
    );
    await scheduler().tick();
    const runs = await runsOf(workflowId);
    expect(runs).toHaveLength(count);
    return runs;
  };
  const dueOf = async (workflowId: string) =>
    (
      await p.ctx.db
        .selectFrom('workflow_schedules')
        .select(['next_fire_at', 'rule_index'])
        .where('workflow_id', '=', workflowId)
        .orderBy('rule_index')
        .execute()
    ).map((r) => r.next_fire_at);

  it('fires once per due time while active, with the fire item, in mode trigger', async () => {
    p.clock.set('2026-01-15T13:02:00Z');
    const id = await createWorkflow(p, scheduled([{ field: 'minutes', minutesInterval: 5 }]));
    expect(await dueOf(id)).toEqual([]);
    await activate(p, id);
    expect(await dueOf(id)).toEqual(['2026-01-15T13:05:00.000Z']);
    await expectRuns(id, 0);
    p.clock.set('2026-01-15T13:05:00Z');
    const [run] = await expectRuns(id, 1);
    expect(run).toMatchObject({ mode: 'trigger' });
    const detail = (
      await p.request({ method: 'GET', url: `/api/v1/executions/${run?.id}?includeData=true` })
    ).json() as { data: { resultData: { runData: Record<string, Array<{ data: { main: unknown[][] } }>> } } };
    const out = detail.data.resultData.runData['Edit Fields']?.[0]?.data.main[0]?.[0] as {
      json: Record<string, string>;
    };
    expect(out.json).toMatchObject({ hour: '13', Minute: '05', timestamp: '2026-01-15T13:05:00.000Z' });
    expect(await dueOf(id)).toEqual(['2026-01-15T13:10:00.000Z']);
  });

  it('catches up once after downtime, not once per missed time', async () => {
    p.clock.set('2026-02-01T00:00:30Z');
    const id = await createWorkflow(p, scheduled([{ field: 'minutes', minutesInterval: 1 }]));
    await activate(p, id);
    p.clock.set('2026-02-01T01:00:30Z'); // 60 due times passed
    await expectRuns(id, 1);
    expect(await dueOf(id)).toEqual(['2026-02-01T01:01:00.000Z']);
  });

  it('starts each due time once when several schedulers race for it', async () => {
    p.clock.set('2026-03-01T00:00:00Z');
    const id = await createWorkflow(p, scheduled([{ field: 'seconds', secondsInterval: 10 }]));
    await activate(p, id);
    // Three ticks read the same due row; the compare-and-set lets one start it (else up to 15 runs).
    for (let t = 10; t <= 50; t += 10) {
      p.clock.set(`2026-03-01T00:00:${t}Z`);
      await Promise.all([scheduler().tick(), scheduler().tick(), scheduler().tick()]);
    }
    await expectRuns(id, 5);
  });

  it("uses the workflow's time zone and every rule of the node", async () => {
    p.clock.set('2026-01-15T00:00:00Z');
    const id = await createWorkflow(
      p,
      scheduled(
        [
          { field: 'days', triggerAtHour: 9, triggerAtMinute: 30 },
          { field: 'cronExpression', expression: '0 12 * * 1' },
        ],
        { timezone: 'Asia/Tokyo' },
      ),
    );
    await activate(p, id);
    // 09:30 Tokyo = 00:30 UTC; Monday 12:00 Tokyo = 03:00 UTC (the 19th is the next Monday).
    expect(await dueOf(id)).toEqual(['2026-01-15T00:30:00.000Z', '2026-01-19T03:00:00.000Z']);
  });

  it('stops on deactivation, re-registers on PUT, and goes with the workflow', async () => {
    p.clock.set('2026-04-01T00:00:00Z');
    const id = await createWorkflow(p, scheduled([{ field: 'hours', hoursInterval: 1, triggerAtMinute: 0 }]));
    await activate(p, id);
    expect(await dueOf(id)).toEqual(['2026-04-01T01:00:00.000Z']);
    const put = await p.request({
      method: 'PUT',
      url: `/api/v1/workflows/${id}`,
      payload: scheduled([{ field: 'minutes', minutesInterval: 15 }]),
    });
    expect(put.statusCode, put.body).toBe(200);
    expect(await dueOf(id)).toEqual(['2026-04-01T00:15:00.000Z']);
    await p.request({ method: 'POST', url: `/api/v1/workflows/${id}/deactivate` });
    expect(await dueOf(id)).toEqual([]);
    p.clock.set('2026-04-01T05:00:00Z');
    await expectRuns(id, 0);
    await activate(p, id);
    await p.request({ method: 'DELETE', url: `/api/v1/workflows/${id}` });
    expect(await dueOf(id)).toEqual([]);
  });

  it('runs a workflow with two triggers from either: its webhook and its schedule', async () => {
    p.clock.set('2026-05-01T00:00:00Z');
    const body = scheduled([{ field: 'minutes', minutesInterval: 10 }]);
    body.nodes.push({
      id: 'w1',
      name: 'Webhook',
      type: 'n8n-nodes-base.webhook',
      typeVersion: 2,
      position: [0, 200],
      parameters: {
        httpMethod: 'POST',
        path: 'two-triggers',
        responseMode: 'lastNode',
        options: {},
      } as never,
    });
    (body.connections as Record<string, unknown>).Webhook = {
      main: [[{ node: 'Edit Fields', type: 'main', index: 0 }]],
    };
    const id = await createWorkflow(p, body);
    await activate(p, id);
    const called = await p.request({ method: 'POST', url: '/webhook/two-triggers', key: null, payload: {} });
    expect(called.statusCode, called.body).toBe(200);
    p.clock.set('2026-05-01T00:10:00Z');
    const runs = await expectRuns(id, 2);
    expect(runs.map((r) => r.mode).sort()).toEqual(['trigger', 'webhook']);
  });

  it('evaluates expressions of a rule at activation, as n8n does; a null minute is unset; bad values refuse it', async () => {
    p.clock.set('2026-06-01T00:00:00Z');
    // A template's way to spread its minute: evaluated once, when the workflow is activated.
    const id = await createWorkflow(
      p,
      scheduled([
        {
          field: 'hours',
          hoursInterval: '={{ 1 + 1 }}',
          triggerAtMinute: '={{ Math.floor(Math.random() * 60) }}',
        },
        { field: 'days', triggerAtHour: 20, triggerAtMinute: null },
      ]),
    );
    await activate(p, id);
    const [hourly, daily] = await dueOf(id);
    expect(hourly).toMatch(/^2026-06-01T(00|02):[0-5]\d:00\.000Z$/);
    expect(daily).toBe('2026-06-01T20:00:00.000Z');

    // Out of range once evaluated: the activation is refused with a 400 naming the field.
    const bad = await createWorkflow(p, scheduled([{ field: 'hours', triggerAtMinute: '={{ 75 }}' }]));
    const res = await p.request({ method: 'POST', url: `/api/v1/workflows/${bad}/activate` });
    expect(res.statusCode).toBe(400);
    expect(JSON.stringify(res.json())).toContain('interval[0].triggerAtMinute');
    expect(await dueOf(bad)).toEqual([]);
    const broken = await createWorkflow(p, scheduled([{ field: 'hours', triggerAtMinute: '={{ nope( }}' }]));
    const failed = await p.request({ method: 'POST', url: `/api/v1/workflows/${broken}/activate` });
    expect(failed.statusCode).toBe(400);
    expect(failed.json()).toMatchObject({ error: true, code: 'VALIDATION_ERROR' });
  });

  it('refuses rules it cannot schedule, naming the rule', async () => {
    const cases: Array<[unknown[], string]> = [
      [[{ field: 'cronExpression', expression: 'every day' }], 'interval[0].expression'],
      [[{ field: 'cronExpression' }], 'interval[0].expression'],
      [[{ field: 'minutes', minutesInterval: 0 }], 'interval[0].minutesInterval'],
      [[{ field: 'days' }, { field: 'fortnights' }], 'interval[1].field'],
      [[{ field: '={{ "hours" }}', hoursInterval: 2 }], 'must be fixed'],
      [[{ field: 'weeks', triggerAtDay: [7] }], 'interval[0].triggerAtDay'],
      [[{ field: 'days', atNoon: true }], 'interval[0].atNoon'],
    ];
    for (const [interval, message] of cases) {
      const res = await p.request({ method: 'POST', url: '/api/v1/workflows', payload: scheduled(interval) });
      expect(res.statusCode, JSON.stringify(interval)).toBe(400);
      expect(JSON.stringify(res.json()), JSON.stringify(interval)).toContain(message);
    }
  });
});

describe.each(await testDialects())('schedule rules per account on %s', (dialect) => {
  let p: TestPlatform;
  beforeAll(async () => {
    p = await workflowPlatform(dialect, { WORKFLOW_MAX_SCHEDULES: '2' });
  });
  afterAll(() => p.close());

  it('refuses an activation past WORKFLOW_MAX_SCHEDULES rules, counting the account’s active workflows', async () => {
    const two = await createWorkflow(p, scheduled([{ field: 'hours' }, { field: 'days' }]));
    await activate(p, two);
    // Re-activating or replacing the same workflow does not count its own rules twice.
    await activate(p, two);
    const one = await createWorkflow(p, scheduled([{ field: 'minutes', minutesInterval: 5 }]));
    const refused = await p.request({ method: 'POST', url: `/api/v1/workflows/${one}/activate` });
    expect(refused.statusCode).toBe(409);
    expect(refused.json().message).toContain('at most 2 (WORKFLOW_MAX_SCHEDULES)');
    const listed = (await p.request({ method: 'GET', url: `/api/v1/workflows/${one}` })).json();
    expect(listed.active).toBe(false);
    await p.request({ method: 'POST', url: `/api/v1/workflows/${two}/deactivate` });
    await activate(p, one);
  });
});
