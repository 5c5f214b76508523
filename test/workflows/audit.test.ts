import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestPlatform } from '../helpers/platform.js';
import { testDialects } from '../helpers/services.js';
import {
  activate,
  createCredential,
  createWorkflow,
  echoFlow,
  flow,
  n8nNode,
  otherAccountKey,
  workflowPlatform,
} from './support.js';

type Location = { kind: string; id?: string; name?: string; workflowId?: string; nodeName?: string };
type Report = {
  risk: string;
  sections: Array<{ title: string; location?: Location[]; settings?: Record<string, unknown> }>;
};
type Audit = Record<string, Report>;

const section = (audit: Audit, report: string, title: string) =>
  audit[report]?.sections.find((s) => s.title === title);

describe.each(await testDialects())("the account's security audit (POST /api/v1/audit) on %s", (dialect) => {
  let p: TestPlatform;
  let unused = '';
  let inactiveOnly = '';
  let used = '';
  let open = '';
  let guarded = '';
  let coded = '';
  let fencedKey = '';

  beforeAll(async () => {
    p = await workflowPlatform(dialect);
    const header = { name: 'X-Token', value: 'secret' };
    unused = await createCredential(p, 'never used', 'httpHeaderAuth', header);
    inactiveOnly = await createCredential(p, 'inactive only', 'httpHeaderAuth', header);
    used = await createCredential(p, 'in an active workflow', 'httpHeaderAuth', header);
    const caller = (credential: string, name: string) =>
      n8nNode(
        name,
        'httpRequest',
        4.2,
        {
          url: 'https://example.com',
          authentication: 'genericCredentialType',
          genericAuthType: 'httpHeaderAuth',
        },
        { credentials: { httpHeaderAuth: { id: credential, name: 'c' } } },
      );
    const trigger = n8nNode('Start', 'manualTrigger', 1, {});
    await createWorkflow(p, {
      name: 'inactive caller',
      nodes: [trigger, caller(inactiveOnly, 'Call')],
      connections: { Start: { main: [[{ node: 'Call', type: 'main', index: 0 }]] } },
    });
    const active = await createWorkflow(p, {
      ...echoFlow('audit-active'),
      nodes: [...echoFlow('audit-active').nodes, caller(used, 'Call')],
    });
    await activate(p, active);
    open = active;
    guarded = await createWorkflow(
      p,
      flow('guarded', [
        { name: 'Webhook', type: 'webhook', parameters: { path: 'audit-guarded' } },
        {
          name: 'Check',
          type: 'n8n-nodes-base.code',
          parameters: { jsCode: 'if (!$json.body.ok) throw new Error("no"); return $input.all();' },
        },
      ]),
    );
    coded = guarded;
    fencedKey = (
      await p.createKey({
        name: 'fenced',
        type: 'production',
        services: ['workflow'],
        role: 'Reader',
        allowedIps: ['10.0.0.0/8'],
      })
    ).id;
  });
  afterAll(() => p.close());

  const audit = async (payload: object = {}, key?: string) =>
    p.request({ method: 'POST', url: '/api/v1/audit', payload, ...(key ? { key } : {}) });

  it("reports credentials, risky nodes, unprotected webhooks and open keys in n8n's shape", async () => {
    const res = await audit();
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json() as Audit;
    const creds = 'Credentials Risk Report';
    expect(body[creds]?.risk).toBe('credentials');
    const ids = (title: string) => section(body, creds, title)?.location?.map((l) => l.id) ?? [];
    expect(ids('Credentials not used in any workflow')).toEqual([unused]);
    expect(ids('Credentials not used in any active workflow')).toEqual([inactiveOnly]);
    // Nothing has run: both credentials in workflows are unused in recent executions.
    expect(ids('Credentials not used in recently executed workflows').sort()).toEqual(
      [inactiveOnly, used].sort(),
    );

    const webhooks = section(body, 'Instance Risk Report', 'Unprotected webhooks in instance')?.location;
    // The echo workflow's webhook is followed by Set (no check); the guarded one by a Code node.
    expect(webhooks?.map((l) => l.workflowId)).toEqual([open]);
    expect(webhooks?.[0]).toMatchObject({ kind: 'node', nodeName: 'Webhook' });

    const risky = section(body, 'Nodes Risk Report', 'Official risky nodes')?.location ?? [];
    // Two HTTP Request nodes (one per workflow that calls out) and the Code node.
    expect(risky.map((l) => l.nodeName).sort()).toEqual(['Call', 'Call', 'Check']);
    expect(risky.find((l) => l.nodeName === 'Check')?.workflowId).toBe(coded);
    expect(risky.map((l) => l.workflowId)).toContain(open);

    const keys = section(body, 'Instance Risk Report', 'API keys without IP rules')?.location ?? [];
    expect(keys.length).toBeGreaterThan(0);
    expect(keys.map((k) => k.id)).not.toContain(fencedKey);
    for (const k of keys) expect(k.kind).toBe('apiKey');

    const settings = section(body, 'Instance Risk Report', 'Security settings')?.settings;
    expect(settings).toHaveProperty('codeNodeTimeoutMs');
    // No SQL or file nodes: those reports are absent, as n8n leaves out reports without findings.
    expect(body).not.toHaveProperty('Database Risk Report');
    expect(body).not.toHaveProperty('Filesystem Risk Report');
  });

  it('counts a recent execution; categories and daysAbandonedWorkflow narrow the report', async () => {
    const run = await p.request({ method: 'POST', url: '/webhook/audit-active', payload: {} });
    expect(run.statusCode).toBeLessThan(500);
    const res = await audit({ additionalOptions: { categories: ['credentials'], daysAbandonedWorkflow: 7 } });
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json() as Audit;
    expect(Object.keys(body)).toEqual(['Credentials Risk Report']);
    const recent = section(
      body,
      'Credentials Risk Report',
      'Credentials not used in recently executed workflows',
    );
    expect(recent?.location?.map((l) => l.id)).toEqual([inactiveOnly]);
    expect(recent?.title).toBeDefined();
    // Nothing found in the asked categories: an empty array, as n8n answers.
    const none = await audit({ additionalOptions: { categories: ['database', 'filesystem'] } });
    expect(none.statusCode).toBe(200);
    expect(none.json()).toEqual([]);
  });

  it('is for admins of this account only, and refuses what n8n would not know', async () => {
    const reader = (
      await p.createKey({ name: 'reader', type: 'production', services: ['workflow'], role: 'Reader' })
    ).key;
    expect((await audit({}, reader)).statusCode).toBe(403);
    const writer = (
      await p.createKey({ name: 'writer', type: 'production', services: ['workflow'], role: 'Writer' })
    ).key;
    expect((await audit({}, writer)).statusCode).toBe(403);
    const other = await otherAccountKey(p);
    const theirs = (await audit({}, other)).json() as Audit;
    expect(JSON.stringify(theirs)).not.toContain(unused);
    expect(JSON.stringify(theirs)).not.toContain(open);
    for (const [payload, field] of [
      [{ additionalOptions: { categories: ['everything'] } }, 'categories'],
      [{ additionalOptions: { daysAbandonedWorkflow: 0 } }, 'daysAbandonedWorkflow'],
      [{ additionalOptions: { daysAbandonedWorkflow: 'soon' } }, 'daysAbandonedWorkflow'],
      [{ options: {} }, 'options'],
    ] as const) {
      const res = await audit(payload);
      expect(res.statusCode, JSON.stringify(payload)).toBe(400);
      expect(res.body).toContain(field);
      expect(res.json()).toMatchObject({ error: true, code: 'VALIDATION_ERROR' });
    }
  });
});
