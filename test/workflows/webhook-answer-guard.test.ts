import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  setsPlatformCookie,
  WEBHOOK_SANDBOX_CSP,
} from '../../src/modules/workflows/webhooks/answer-guard.js';
import type { TestPlatform } from '../helpers/platform.js';
import { createWorkflow, n8nNode, workflowPlatform } from './support.js';

/**
 * Every account's webhooks share the platform's origin with the portal: an answer a workflow serves
 * runs in n8n's CSP sandbox (its scripts cannot use a viewer's session), and it cannot set the
 * platform's own cookies (a fixed session, a forged OAuth binding). Found by the wave-8 audit.
 */
const STEAL =
  "<script>fetch('/v1/auth/session').then((r) => r.json()).then((s) => fetch('/api/v1/credentials', { headers: { 'x-csrf-token': s.csrfToken } }))</script>";

/** A live webhook answering `body` with `headers` through Respond to Webhook; its path. */
async function answering(p: TestPlatform, body: string, headers: Array<{ name: string; value: string }>) {
  const pathName = `guard-${randomBytes(4).toString('hex')}`;
  const id = await createWorkflow(p, {
    name: 'answer',
    nodes: [
      n8nNode('Webhook', 'webhook', 2, {
        httpMethod: 'GET',
        path: pathName,
        responseMode: 'responseNode',
        options: {},
      }),
      n8nNode('Respond', 'respondToWebhook', 1.1, {
        respondWith: 'text',
        responseBody: body,
        options: { responseHeaders: { entries: headers } },
      }),
    ],
    connections: { Webhook: { main: [[{ node: 'Respond', type: 'main', index: 0 }]] } },
  });
  const act = await p.request({ method: 'POST', url: `/api/v1/workflows/${id}/activate`, payload: {} });
  expect(act.statusCode, act.body).toBe(200);
  return `/webhook/${pathName}`;
}

const cookiesOf = (headers: Record<string, unknown>) =>
  ([] as string[]).concat((headers['set-cookie'] as string | string[] | undefined) ?? []);

describe('webhook answers on the shared origin', () => {
  let p: TestPlatform;
  let open: TestPlatform;
  beforeAll(async () => {
    p = await workflowPlatform('sqlite');
    open = await workflowPlatform('sqlite', { WORKFLOW_WEBHOOK_SANDBOX: 'false' });
  });
  afterAll(async () => {
    await p?.close();
    await open?.close();
  });

  it("serves a workflow's HTML in n8n's sandbox (an opaque origin), JSON answers too", async () => {
    const url = await answering(p, STEAL, [{ name: 'content-type', value: 'text/html; charset=utf-8' }]);
    const res = await p.app.inject({ method: 'GET', url });
    expect(res.statusCode).toBe(200);
    expect(res.body, JSON.stringify(res.headers)).toBe(STEAL);
    expect(res.headers['content-security-policy']).toBe(WEBHOOK_SANDBOX_CSP);
    expect(WEBHOOK_SANDBOX_CSP).not.toContain('allow-same-origin');
    const json = await p.app.inject({ method: 'GET', url: await answering(p, '{"a":1}', []) });
    expect(json.headers['content-security-policy']).toBe(WEBHOOK_SANDBOX_CSP);
  });

  it("keeps the workflow's own policy beside the sandbox (a browser enforces both)", async () => {
    const url = await answering(p, '<p>x</p>', [
      { name: 'content-type', value: 'text/html' },
      { name: 'Content-Security-Policy', value: "default-src 'self'" },
    ]);
    const res = await p.app.inject({ method: 'GET', url });
    expect(res.headers['content-security-policy']).toEqual([WEBHOOK_SANDBOX_CSP, "default-src 'self'"]);
  });

  it("drops a Set-Cookie naming the platform's cookies, keeps the workflow's own", async () => {
    const url = await answering(p, 'ok', [
      { name: 'Set-Cookie', value: 'platform_session=attacker-session; Path=/; HttpOnly; SameSite=Lax' },
    ]);
    expect(cookiesOf((await p.app.inject({ method: 'GET', url })).headers)).toEqual([]);
    const mine = await answering(p, 'ok', [{ name: 'Set-Cookie', value: 'visitor=1; Path=/webhook' }]);
    expect(cookiesOf((await p.app.inject({ method: 'GET', url: mine })).headers)).toEqual([
      'visitor=1; Path=/webhook',
    ]);
    expect(setsPlatformCookie('platform_session=x')).toBe(true);
    expect(setsPlatformCookie(' __Host-platform_session=x; Secure')).toBe(true);
    expect(setsPlatformCookie('game_oauth_abc=x; Path=/v1/game/oauth/callback')).toBe(true);
    expect(setsPlatformCookie('CRED_OAUTH_x=1')).toBe(true);
    expect(setsPlatformCookie('platform_session_theme=dark')).toBe(false);
    expect(setsPlatformCookie('visitor=1')).toBe(false);
  });

  it('sends no sandbox where the operator turned it off (one trusted account)', async () => {
    const url = await answering(open, '<p>app</p>', [{ name: 'content-type', value: 'text/html' }]);
    const res = await open.app.inject({ method: 'GET', url });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-security-policy']).toBeUndefined();
  });
});
