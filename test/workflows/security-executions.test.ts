import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { authSuite } from '../helpers/auth-suite.js';
import { jobsEnded } from '../helpers/metrics.js';
import type { TestPlatform } from '../helpers/platform.js';
import { testDialects } from '../helpers/services.js';
import { until } from '../helpers/until.js';
import { activate, createWorkflow, flow, otherAccountKey, settled, workflowPlatform } from './support.js';

describe.each(await testDialects())(
  'resume URLs and stuck executions (audit items 6, 15) on %s',
  (dialect) => {
    let p: TestPlatform;

    beforeAll(async () => {
      p = await workflowPlatform(dialect, {
        WORKFLOW_MAX_WAIT_SECONDS: String(7 * 86_400),
        METRICS_ENABLED: 'true',
      });
    });
    afterAll(async () => {
      await p.close();
    });

    const start = async (path: string) => {
      const res = await p.app.inject({ method: 'POST', url: `/webhook/${path}`, payload: {} });
      expect(res.statusCode).toBe(200);
      return res.json() as { executionId: string } & Record<string, unknown>;
    };
    const resume = (url: string, payload: object = {}) => p.app.inject({ method: 'POST', url, payload });

    describe('a resume URL needs its signature', () => {
      beforeAll(async () => {
        const approval = flow('approval', [
          { name: 'Webhook', type: 'webhook', parameters: { path: 'approval', responseMode: 'onReceived' } },
          // The author mails the link to an approver; the requester never sees it.
          { name: 'Link', type: 'set', parameters: { values: { link: '={{ $execution.resumeUrl }}' } } },
          { name: 'Wait', type: 'wait', parameters: { resume: 'webhook' } },
          {
            name: 'Decision',
            type: 'set',
            parameters: { values: { approved: '={{ $json.body.approved }}' } },
          },
          { name: 'Again', type: 'wait', parameters: { resume: 'webhook' } },
        ]);
        await activate(p, await createWorkflow(p, approval));
      });

      it('the id alone is refused (401), a forged signature too (403); the caller never gets a token', async () => {
        const started = await start('approval');
        expect(JSON.stringify(started)).not.toMatch(/signature/);
        const { executionId } = started;
        expect((await settled(p, executionId)).status).toBe('waiting');

        const bare = await resume(`/webhook-waiting/${executionId}`, { approved: true });
        expect(bare.statusCode).toBe(401);
        expect(bare.json()).toMatchObject({ error: true, code: 'UNAUTHORIZED' });
        const forged = await resume(`/webhook-waiting/${executionId}?signature=0.${'A'.repeat(43)}`);
        expect(forged.statusCode).toBe(403);
        expect(forged.json()).toMatchObject({ error: true, code: 'FORBIDDEN' });
        // Another execution's valid signature does not fit this one.
        const other = await start('approval');
        const otherUrl = (await settled(p, other.executionId)).resumeUrl as string;
        const borrowed = await resume(`/webhook-waiting/${executionId}${new URL(otherUrl).search}`);
        expect(borrowed.statusCode).toBe(403);
        expect((await settled(p, executionId)).status).toBe('waiting');
      });

      it('the author finds the signed URL in $execution.resumeUrl and on the execution; it works once', async () => {
        const { executionId } = await start('approval');
        const waiting = await settled(p, executionId);
        const resumeUrl = waiting.resumeUrl as string;
        expect(resumeUrl).toMatch(new RegExp(`/webhook-waiting/${executionId}\\?signature=`));
        const runData = waiting.data as {
          resultData: {
            runData: Record<
              string,
              Array<{ data: { main: Array<Array<{ json: Record<string, unknown> }>> } }>
            >;
          };
        };
        expect(runData.resultData.runData.Link?.[0]?.data.main[0]?.[0]?.json.link).toBe(resumeUrl);

        const url = new URL(resumeUrl);
        const ok = await resume(`${url.pathname}${url.search}`, { approved: true });
        expect(ok.statusCode).toBe(200);
        // It pauses again at the second wait: the first URL no longer resumes it, the new one does.
        const next = await until(
          async () => {
            const shown = (
              await p.request({ method: 'GET', url: `/api/v1/executions/${executionId}` })
            ).json() as { status: string; resumeUrl: string };
            return shown.status === 'waiting' && shown.resumeUrl !== resumeUrl ? shown : undefined;
          },
          'the pause at the second wait',
          20_000,
        );
        expect(next.status).toBe('waiting');
        expect(next.resumeUrl).not.toBe(resumeUrl);
        const replay = await resume(`${url.pathname}${url.search}`, { approved: false });
        expect(replay.statusCode).toBe(404);
        const nextUrl = new URL(next.resumeUrl);
        expect((await resume(`${nextUrl.pathname}${nextUrl.search}`)).statusCode).toBe(200);
        expect((await settled(p, executionId, 20_000, ['waiting'])).status).toBe('success');
      });
    });

    describe('the stop route', () => {
      authSuite(() => p, {
        method: 'POST',
        url: '/api/v1/executions/exe_x/stop',
        service: 'workflow',
        payload: {},
      });
    });

    describe('who sees the resume URL', () => {
      it('a read-only key gets the execution without its resume URL or any signature in its data', async () => {
        const { executionId } = await start('approval');
        const waiting = await settled(p, executionId);
        expect(waiting.resumeUrl).toEqual(expect.stringContaining('signature='));
        const reader = await p.createKey({
          name: 'auditor',
          type: 'production',
          services: ['workflow'],
          role: 'Reader',
        });
        const seen = await p.request({
          method: 'GET',
          url: `/api/v1/executions/${executionId}?includeData=true`,
          key: reader.key,
        });
        expect(seen.statusCode).toBe(200);
        expect(seen.json()).toMatchObject({ status: 'waiting', resumeUrl: null });
        // The workflow's own data carries the link too (an approval mail's): its signature is blanked.
        expect(seen.body).not.toMatch(/signature=\d+\./);
        expect(seen.body).toContain('signature=[hidden]');
      });
    });

    describe('a wait is bounded, and any execution that has not ended can be stopped and deleted', () => {
      it('a wait longer than WORKFLOW_MAX_WAIT_SECONDS is refused at save, naming the parameter', async () => {
        for (const parameters of [
          { resume: 'timeInterval', amount: 1e12, unit: 'days' },
          { resume: 'timeInterval', amount: 8, unit: 'days' },
          { resume: 'specificTime', dateTime: '2999-01-01T00:00:00Z' },
        ]) {
          const res = await p.request({
            method: 'POST',
            url: '/api/v1/workflows',
            payload: flow('too long', [
              { name: 'Webhook', type: 'webhook', parameters: { path: 'too-long' } },
              { name: 'Wait', type: 'wait', parameters },
            ]),
          });
          expect(res.statusCode).toBe(400);
          const field = parameters.resume === 'timeInterval' ? 'amount' : 'dateTime';
          expect(res.json().details.problems).toContainEqual(
            expect.objectContaining({ path: `nodes[1].parameters.${field}` }),
          );
        }
      });

      it('a wait whose length an expression decides fails at run time past the bound, never stuck running', async () => {
        const body = flow('computed wait', [
          {
            name: 'Webhook',
            type: 'webhook',
            parameters: { path: 'computed-wait', responseMode: 'lastNode' },
          },
          {
            name: 'Wait',
            type: 'wait',
            parameters: { resume: 'timeInterval', amount: '={{ $json.body.days }}', unit: 'days' },
          },
        ]);
        await activate(p, await createWorkflow(p, body));
        const res = await p.app.inject({
          method: 'POST',
          url: '/webhook/computed-wait',
          payload: { days: 1e12 },
        });
        expect(res.statusCode).toBe(422);
        const exe = await settled(p, res.json().details.executionId);
        expect(exe.status).toBe('error');
      });

      it('a waiting execution is stopped (canceled), then deleted; a finished one cannot be stopped', async () => {
        const body = flow('long wait', [
          { name: 'Webhook', type: 'webhook', parameters: { path: 'long-wait', responseMode: 'onReceived' } },
          { name: 'Wait', type: 'wait', parameters: { resume: 'timeInterval', amount: 6, unit: 'days' } },
        ]);
        await activate(p, await createWorkflow(p, body));
        const { executionId } = await start('long-wait');
        expect((await settled(p, executionId)).status).toBe('waiting');
        const stop = await p.request({
          method: 'POST',
          url: `/api/v1/executions/${executionId}/stop`,
          payload: {},
        });
        expect(stop.statusCode).toBe(200);
        expect(stop.json()).toMatchObject({ id: executionId, status: 'canceled', finished: false });
        expect(stop.json().stoppedAt).toEqual(expect.any(String));
        // The scheduler never resumes it.
        p.clock.advance(7 * 86_400);
        await p.ctx.apis.workflows?.maintenance.resumeDue();
        expect((await settled(p, executionId)).status).toBe('canceled');
        const again = await p.request({
          method: 'POST',
          url: `/api/v1/executions/${executionId}/stop`,
          payload: {},
        });
        expect(again.statusCode).toBe(409);
        const del = await p.request({ method: 'DELETE', url: `/api/v1/executions/${executionId}` });
        expect(del.statusCode).toBe(200);
        const gone = await p.request({ method: 'GET', url: `/api/v1/executions/${executionId}` });
        expect(gone.statusCode).toBe(404);
      });

      it("stop: an unknown id and another account's execution are 404; a Reader key is 403; nothing changes", async () => {
        const body = flow('stop guard', [
          {
            name: 'Webhook',
            type: 'webhook',
            parameters: { path: 'stop-guard', responseMode: 'onReceived' },
          },
          { name: 'Wait', type: 'wait', parameters: { resume: 'webhook' } },
        ]);
        await activate(p, await createWorkflow(p, body));
        const { executionId } = await start('stop-guard');
        expect((await settled(p, executionId)).status).toBe('waiting');
        const stopAs = (key: string | undefined, id = executionId) =>
          p.request({
            method: 'POST',
            url: `/api/v1/executions/${id}/stop`,
            payload: {},
            ...(key ? { key } : {}),
          });
        const unknown = await stopAs(undefined, 'exe_does_not_exist');
        expect(unknown.statusCode).toBe(404);
        expect(unknown.json()).toMatchObject({ error: true, code: 'EXECUTION_NOT_FOUND' });
        const foreign = await stopAs(await otherAccountKey(p));
        expect(foreign.statusCode).toBe(404);
        const reader = await p.createKey({
          name: 'r',
          type: 'production',
          services: ['workflow'],
          role: 'Reader',
        });
        expect((await stopAs(reader.key)).statusCode).toBe(403);
        expect((await settled(p, executionId)).status).toBe('waiting');
      });

      it('a running execution is stopped: its late result is dropped and the waiting caller is answered', async () => {
        let release: (() => void) | undefined;
        const held = new Promise<void>((r) => {
          release = r;
        });
        const { createServer } = await import('node:http');
        const slow = createServer((_req, res) => {
          void held.then(() => res.end('{"late":true}'));
        });
        await new Promise<void>((r) => slow.listen(0, '127.0.0.1', r));
        const port = (slow.address() as { port: number }).port;
        try {
          const body = flow('slow run', [
            { name: 'Webhook', type: 'webhook', parameters: { path: 'slow-run', responseMode: 'lastNode' } },
            { name: 'Call', type: 'httpRequest', parameters: { url: `http://127.0.0.1:${port}/` } },
          ]);
          await activate(p, await createWorkflow(p, body));
          const ended = await jobsEnded(p);
          const answer = p.app.inject({ method: 'POST', url: '/webhook/slow-run', payload: {} });
          const running = await until(
            async () => {
              const list = await p.request({ method: 'GET', url: '/api/v1/executions?status=running' });
              return (list.json() as { data: Array<{ id: string }> }).data[0];
            },
            'a running execution',
            20_000,
          );
          const blocked = await p.request({ method: 'DELETE', url: `/api/v1/executions/${running.id}` });
          expect(blocked.statusCode).toBe(409);
          const stop = await p.request({
            method: 'POST',
            url: `/api/v1/executions/${running.id}/stop`,
            payload: {},
          });
          expect(stop.statusCode).toBe(200);
          const res = await answer;
          expect(res.statusCode).toBe(422);
          expect(res.json()).toMatchObject({ error: true, details: { executionId: running.id } });
          release?.();
          // The late result came back and was dropped once the run's job has ended.
          await until(async () => (await jobsEnded(p)) > ended, 'the stopped run to end', 20_000);
          expect((await settled(p, running.id)).status).toBe('canceled');
          const del = await p.request({ method: 'DELETE', url: `/api/v1/executions/${running.id}` });
          expect(del.statusCode).toBe(200);
        } finally {
          release?.();
          slow.closeAllConnections();
          await new Promise((r) => slow.close(r));
        }
      });
    });
  },
);
