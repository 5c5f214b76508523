import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PlatformModule } from '../../src/core/context.js';
import { AUDITED_ROUTES } from '../../src/modules/activity/audited-routes.js';
import { allModules } from '../../src/modules/index.js';
import { createTestPlatform, type TestPlatform } from '../helpers/platform.js';
import { testDialects } from '../helpers/services.js';

/**
 * The mutating routes of the workflow and credential areas (the workflows module) that write no audit
 * event, each with why. A new mutating route fails this suite until it is audited (AUDITED_ROUTES) or
 * listed here.
 */
const EXEMPT: Readonly<Record<string, string>> = {
  'POST /api/v1/audit': 'reads a report; POST is n8n’s method for it, nothing changes',
  'POST /api/v1/credentials/:id/test': 'tries a credential against its service; nothing stored changes',
  'POST /api/v1/executions/:id/retry': 'a run: recorded as an execution (mode retry), not a change of rights',
  'POST /api/v1/executions/:id/stop': 'operational: the execution records its cancelation',
  'POST /api/v1/executions/stop': 'operational: each execution records its cancelation',
  'PUT /api/v1/executions/:id/tags': 'labels on a record; no rights, no run changes',
  'POST /api/v1/tags': 'labels; no rights, no run changes',
  'PUT /api/v1/tags/:id': 'labels; no rights, no run changes',
  'DELETE /api/v1/tags/:id': 'labels; no rights, no run changes',
  'PUT /api/v1/workflows/:id/tags': 'labels; no rights, no run changes',
  'POST /api/v1/workflows/:id/run': 'a manual run: recorded as an execution',
  'POST /api/v1/workflows/:id/listen':
    'a test listener for a few minutes; its calls are recorded as executions',
};

/** Trigger calls from outside (webhooks, forms, resumes): each is recorded as an execution, not audited. */
const TRIGGER_PREFIXES = [
  '/webhook/',
  '/webhook-test/',
  '/webhook-waiting/',
  '/form/',
  '/form-test/',
  '/form-waiting/',
];

const MUTATING = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/**
 * Records `METHOD url` of every mutating route of the workflow service (its key scopes: workflows,
 * executions, credentials, tags, variables…), source control and the public trigger routes, registered
 * after this module.
 */
function routeRecorder() {
  const seen = new Set<string>();
  const recorder: PlatformModule = {
    name: 'route-table',
    services: [],
    migrations: {},
    routes(app) {
      app.addHook('onRoute', (route) => {
        const service = (route.config as { auth?: { service?: string } } | undefined)?.auth?.service;
        const trigger = TRIGGER_PREFIXES.some((prefix) => route.url.startsWith(prefix));
        if (service !== 'workflow' && !trigger && !route.url.startsWith('/api/v1/source-control/')) return;
        for (const method of [route.method].flat())
          if (MUTATING.has(method)) seen.add(`${method} ${route.url}`);
      });
    },
  };
  return { seen, modules: [recorder, ...allModules] };
}

describe.each(await testDialects())(
  'audit coverage of the workflow and credential routes on %s',
  (dialect) => {
    let p: TestPlatform;
    let routes: Set<string>;
    beforeAll(async () => {
      const recorder = routeRecorder();
      p = await createTestPlatform({ dialect, modules: recorder.modules });
      routes = recorder.seen;
    });
    afterAll(() => p.close());

    it('every mutating route is audited or exempt with a reason; neither list names a route that is gone', () => {
      expect(routes.size).toBeGreaterThanOrEqual(25);
      const unaccounted = [...routes].filter(
        (r) =>
          AUDITED_ROUTES[r] === undefined &&
          EXEMPT[r] === undefined &&
          !TRIGGER_PREFIXES.some((prefix) => r.split(' ')[1]?.startsWith(prefix)),
      );
      expect(unaccounted).toEqual([]);
      const area = (r: string) => r.split(' ')[1]?.startsWith('/api/v1/') === true;
      expect(Object.keys(AUDITED_ROUTES).filter((r) => area(r) && !routes.has(r))).toEqual([]);
      expect(Object.keys(EXEMPT).filter((r) => !routes.has(r))).toEqual([]);
      // A route is one or the other.
      expect(Object.keys(EXEMPT).filter((r) => AUDITED_ROUTES[r] !== undefined)).toEqual([]);
      // The trigger prefixes do hold routes (a renamed prefix would exempt nothing and pass silently).
      for (const prefix of TRIGGER_PREFIXES)
        expect(
          [...routes].some((r) => r.split(' ')[1]?.startsWith(prefix)),
          prefix,
        ).toBe(true);
    });

    const audit = async (query: string) => {
      const res = await p.request({ method: 'GET', url: `/v1/audit-events${query}` });
      expect(res.statusCode, res.body).toBe(200);
      return (res.json() as { data: Array<{ action: string; targetId: string | null; details: unknown }> })
        .data;
    };

    it('workflow saves and deletes, execution deletes and variable changes write events (values never)', async () => {
      const body = {
        name: 'audited save',
        nodes: [
          {
            name: 'Hook',
            type: 'n8n-nodes-base.webhook',
            typeVersion: 2,
            position: [0, 0],
            parameters: { path: 'audit-coverage', responseMode: 'lastNode' },
          },
        ],
        connections: {},
      };
      const created = await p.request({ method: 'POST', url: '/api/v1/workflows', payload: body });
      expect(created.statusCode, created.body).toBe(201);
      const wf = (created.json() as { id: string }).id;
      const updated = await p.request({
        method: 'PUT',
        url: `/api/v1/workflows/${wf}`,
        payload: { ...body, name: 'b' },
      });
      expect(updated.statusCode, updated.body).toBe(200);
      const run = await p.request({ method: 'POST', url: `/api/v1/workflows/${wf}/run`, payload: {} });
      const execution = (run.json() as { id: string }).id;
      for (let i = 0; ; i++) {
        const del = await p.request({ method: 'DELETE', url: `/api/v1/executions/${execution}` });
        if (del.statusCode === 200) break;
        // A run still going is refused (409) until it ends.
        expect(del.statusCode, del.body).toBe(409);
        expect(i).toBeLessThan(500);
        await new Promise((r) => setTimeout(r, 20));
      }
      expect((await p.request({ method: 'DELETE', url: `/api/v1/workflows/${wf}` })).statusCode).toBe(200);
      expect((await audit(`?targetType=workflow&targetId=${wf}`)).map((e) => e.action)).toEqual([
        'workflow.deleted',
        'workflow.updated',
        'workflow.created',
      ]);
      expect((await audit(`?targetId=${execution}`)).map((e) => e.action)).toEqual(['execution.deleted']);

      const variable = await p.request({
        method: 'POST',
        url: '/api/v1/variables',
        payload: { key: 'AUDITED', value: 'secret-ish-value' },
      });
      expect(variable.statusCode, variable.body).toBe(201);
      const v = (variable.json() as { id: string }).id;
      await p.request({ method: 'PUT', url: `/api/v1/variables/${v}`, payload: { value: 'other-value' } });
      await p.request({ method: 'DELETE', url: `/api/v1/variables/${v}` });
      const events = await audit(`?targetType=variable&targetId=${v}`);
      expect(events.map((e) => e.action)).toEqual([
        'variable.deleted',
        'variable.updated',
        'variable.created',
      ]);
      expect(JSON.stringify(events)).not.toMatch(/secret-ish-value|other-value/);

      // A refused change writes nothing.
      expect((await p.request({ method: 'DELETE', url: '/api/v1/workflows/wf_nope' })).statusCode).toBe(404);
      expect(await audit('?targetId=wf_nope')).toEqual([]);
    });
  },
);
