import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { otherAccountKey } from '../helpers/accounts.js';
import { authSuite } from '../helpers/auth-suite.js';
import { createTestPlatform, type TestPlatform } from '../helpers/platform.js';
import { testDialects } from '../helpers/services.js';
import { asSession, memberSession, ownerSession, type Session } from '../portal/support.js';

const dialects = await testDialects();

interface LogRow {
  id: string;
  requestId: string;
  method: string;
  path: string;
  service: string | null;
  status: number;
  latencyMs: number;
  keyId: string | null;
  memberId: string | null;
  principalKind: string;
  clientIp: string;
  createdAt: string;
}

interface AuditRow {
  id: string;
  action: string;
  actorType: string;
  actorId: string | null;
  targetType: string;
  targetId: string | null;
  clientIp: string | null;
  details: Record<string, unknown>;
}

describe.each(dialects)('request log and audit trail on %s', (dialect) => {
  let p: TestPlatform;
  let owner: Session;
  beforeAll(async () => {
    p = await createTestPlatform({ dialect });
    owner = await ownerSession(p);
  });
  afterAll(async () => {
    await p.close();
  });

  const logs = async (query = '', key = p.adminKey) => {
    const res = await p.request({ method: 'GET', url: `/v1/request-logs${query}`, key });
    expect(res.statusCode, res.body).toBe(200);
    return res.json() as { data: LogRow[]; nextCursor: string | null };
  };
  const audit = async (query = '', key = p.adminKey) => {
    const res = await p.request({ method: 'GET', url: `/v1/audit-events${query}`, key });
    expect(res.statusCode, res.body).toBe(200);
    return res.json() as { data: AuditRow[]; nextCursor: string | null };
  };

  authSuite(() => p, { method: 'GET', url: '/v1/request-logs', service: 'core' });
  authSuite(() => p, { method: 'GET', url: '/v1/audit-events', service: 'core' });

  it('never stores an API key named in a path (Flowise’s chatflows/apikey/{apikey})', async () => {
    const { key } = await p.createKey({
      name: 'in-path',
      type: 'development',
      services: ['flow'],
      role: 'Reader',
    });
    const res = await p.request({
      method: 'GET',
      url: `/api/v1/chatflows/apikey/${key}`,
      headers: { 'x-request-id': 'trace-apikey-1' },
    });
    expect(res.statusCode, res.body).toBe(200);
    const { data } = await logs('?requestId=trace-apikey-1');
    expect(data.map((r) => r.path)).toEqual(['/api/v1/chatflows/apikey/[redacted]']);
    const stored = JSON.stringify(
      await p.ctx.db
        .selectFrom('request_logs')
        .selectAll()
        .where('request_id', '=', 'trace-apikey-1')
        .execute(),
    );
    expect(stored).not.toContain(key);
  });

  it('logs a call with method, path without its query string, status, key, client and request id', async () => {
    const { key, id } = await p.createKey({
      name: 'logged',
      type: 'development',
      services: ['*'],
      role: 'Reader',
    });
    const res = await p.request({
      method: 'GET',
      url: '/api/v1/workflows?limit=1&token=hunter2-secret',
      key,
      headers: { 'x-request-id': 'trace-abc-1', 'user-agent': 'activity-test/1' },
    });
    // An unknown filter: a 400, logged like any answer.
    expect(res.statusCode).toBe(400);
    const { data } = await logs('?requestId=trace-abc-1');
    expect(data).toHaveLength(1);
    expect(data[0]).toMatchObject({
      requestId: 'trace-abc-1',
      method: 'GET',
      path: '/api/v1/workflows',
      service: 'workflow',
      status: 400,
      keyId: id,
      memberId: null,
      principalKind: 'api_key',
      clientIp: '127.0.0.1',
    });
    expect(data[0]?.latencyMs).toBeGreaterThanOrEqual(0);
    // Nothing of the key, the query string or its secret is stored.
    const stored = JSON.stringify(
      await p.ctx.db.selectFrom('request_logs').selectAll().where('request_id', '=', 'trace-abc-1').execute(),
    );
    expect(stored).not.toContain('hunter2');
    expect(stored).not.toContain(key);
    expect(stored).not.toContain('limit=1');

    // A refused call is logged with its status; the filters find it.
    expect((await p.request({ method: 'DELETE', url: '/api/v1/workflows/wf_nope', key })).statusCode).toBe(
      403,
    );
    const refused = await logs(`?keyId=${id}&status=403`);
    expect(refused.data.map((r) => r.method)).toEqual(['DELETE']);
    expect((await p.request({ method: 'GET', url: '/api/v1/workflows', key })).statusCode).toBe(200);
    expect((await logs(`?keyId=${id}&statusClass=4xx`)).data).toHaveLength(2);
    expect((await logs(`?keyId=${id}&statusClass=2xx`)).data).toHaveLength(1);
    expect((await logs(`?keyId=${id}&service=workflow&method=GET`)).data).toHaveLength(2);
  });

  it('filters by time range and pages newest first', async () => {
    const { key, id } = await p.createKey({
      name: 'paged',
      type: 'development',
      services: ['*'],
      role: 'Reader',
    });
    for (let i = 0; i < 3; i++) await p.request({ method: 'GET', url: '/api/v1/workflows', key });
    const between = new Date(p.clock.now().getTime() + 30_000).toISOString();
    p.clock.advance(60);
    await p.request({ method: 'GET', url: '/v1/usage', key });
    const first = await logs(`?keyId=${id}&limit=2`);
    expect(first.data.map((r) => r.path)).toEqual(['/v1/usage', '/api/v1/workflows']);
    expect(first.nextCursor).not.toBeNull();
    const second = await logs(`?keyId=${id}&limit=2&cursor=${first.nextCursor}`);
    expect(second.data).toHaveLength(2);
    expect((await logs(`?keyId=${id}&from=${encodeURIComponent(between)}`)).data).toHaveLength(1);
    expect((await logs(`?keyId=${id}&to=${encodeURIComponent(between)}`)).data).toHaveLength(3);
  });

  it('sums requests, errors and latency percentiles per endpoint and per status', async () => {
    const { key, id } = await p.createKey({
      name: 'summed',
      type: 'development',
      services: ['*'],
      role: 'Reader',
    });
    for (let i = 0; i < 4; i++) await p.request({ method: 'GET', url: '/api/v1/workflows', key });
    for (const wf of ['wf_a', 'wf_b'])
      expect((await p.request({ method: 'GET', url: `/api/v1/workflows/${wf}`, key })).statusCode).toBe(404);
    const res = await p.request({
      method: 'GET',
      url: `/v1/request-logs/summary?keyId=${id}`,
      key: p.adminKey,
    });
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json();
    expect(body).toMatchObject({ requests: 6 });
    expect(body.byEndpoint).toEqual([
      { method: 'GET', route: '/api/v1/workflows', requests: 4, errors: 0, latencyMs: expect.any(Object) },
      {
        method: 'GET',
        route: '/api/v1/workflows/:id',
        requests: 2,
        errors: 2,
        latencyMs: expect.any(Object),
      },
    ]);
    expect(body.byStatus).toEqual([
      { status: 200, requests: 4 },
      { status: 404, requests: 2 },
    ]);
    const { p50, p95, p99 } = body.latencyMs;
    expect(p50).toBeLessThanOrEqual(p95);
    expect(p95).toBeLessThanOrEqual(p99);
    // A range that runs backwards, or over a year, is refused in words.
    const backwards = await p.request({
      method: 'GET',
      url: '/v1/request-logs/summary?from=2021-01-01&to=2020-01-01',
      key: p.adminKey,
    });
    expect(backwards.statusCode).toBe(400);
    expect(backwards.json()).toMatchObject({ code: 'VALIDATION_ERROR' });
    const empty = await p.request({
      method: 'GET',
      url: `/v1/request-logs/summary?keyId=${id}&from=2020-01-01&to=2020-01-02`,
      key: p.adminKey,
    });
    expect(empty.json()).toMatchObject({ requests: 0, byEndpoint: [], byStatus: [] });
    const other = await otherAccountKey(p);
    expect(
      (await p.request({ method: 'GET', url: `/v1/request-logs/summary?keyId=${id}`, key: other })).json(),
    ).toMatchObject({
      requests: 0,
    });
  });

  it('answers 400 naming a bad filter, a bad date or an unknown field', async () => {
    for (const [query, field] of [
      ['?from=yesterday', 'from'],
      ['?statusClass=6xx', 'statusClass'],
      ['?password=x', 'password'],
      ['?status=abc', 'status'],
      ['?status=2147483648', 'status'],
    ] as const) {
      const res = await p.request({ method: 'GET', url: `/v1/request-logs${query}`, key: p.adminKey });
      expect(res.statusCode, res.body).toBe(400);
      expect(res.json()).toMatchObject({ error: true, code: 'VALIDATION_ERROR' });
      expect(JSON.stringify(res.json().details)).toContain(field);
    }
    const bad = await p.request({ method: 'GET', url: '/v1/audit-events?to=2026-13-45', key: p.adminKey });
    expect(bad.statusCode).toBe(400);
  });

  it('writes the audit trail: keys created, edited, rotated, revoked, with the actor and address', async () => {
    const created = await p.request({
      method: 'POST',
      url: '/v1/api-keys',
      key: p.adminKey,
      payload: { name: 'audited', type: 'development', services: ['core'], role: 'Reader' },
      headers: { 'x-request-id': 'audit-create-1' },
    });
    expect(created.statusCode).toBe(201);
    const keyId = created.json().id as string;
    const adminKeyId = (await logs('?requestId=audit-create-1')).data[0]?.keyId;
    expect(
      (
        await p.request({
          method: 'PATCH',
          url: `/v1/api-keys/${keyId}`,
          key: p.adminKey,
          payload: { name: 'renamed' },
        })
      ).statusCode,
    ).toBe(200);
    expect(
      (
        await p.request({
          method: 'POST',
          url: `/v1/api-keys/${keyId}/rotate`,
          key: p.adminKey,
          payload: { gracePeriodSeconds: 0 },
        })
      ).statusCode,
    ).toBe(200);
    expect(
      (await p.request({ method: 'DELETE', url: `/v1/api-keys/${keyId}`, key: p.adminKey })).statusCode,
    ).toBe(204);
    const { data } = await audit(`?targetId=${keyId}`);
    expect(data.map((e) => e.action)).toEqual(['key.revoked', 'key.rotated', 'key.updated', 'key.created']);
    for (const e of data)
      expect(e).toMatchObject({
        actorType: 'api_key',
        actorId: adminKeyId,
        targetType: 'api_key',
        clientIp: '127.0.0.1',
      });
    expect(data[3]?.details).toEqual({
      name: 'audited',
      type: 'development',
      role: 'Reader',
      services: ['core'],
    });
    expect(data[2]?.details).toEqual({ fields: ['name'] });
    // The created key's value is not in the trail.
    expect(JSON.stringify(data)).not.toContain(created.json().key);
    // A failed change is not an event.
    expect(
      (await p.request({ method: 'DELETE', url: '/v1/api-keys/key_nope', key: p.adminKey })).statusCode,
    ).toBe(404);
    expect((await audit('?targetId=key_nope')).data).toEqual([]);
  });

  it('writes members invited, joined, role changed, removed, and sign-ins, by the member who did it', async () => {
    const viewer = await memberSession(p, owner, 'audit-viewer@example.com', 'viewer');
    const changed = await asSession(p, owner, {
      method: 'PATCH',
      url: `/v1/members/${viewer.memberId}`,
      payload: { role: 'developer' },
    });
    expect(changed.statusCode, changed.body).toBe(200);
    const removed = await asSession(p, owner, { method: 'DELETE', url: `/v1/members/${viewer.memberId}` });
    expect(removed.statusCode).toBe(204);
    const { data } = await audit('?targetType=member&limit=20');
    const actions = data.map((e) => e.action);
    expect(actions.slice(0, 4)).toEqual([
      'member.removed',
      'member.role_changed',
      'member.joined',
      'member.invited',
    ]);
    expect(data[0]).toMatchObject({
      actorType: 'session',
      actorId: owner.memberId,
      targetId: viewer.memberId,
    });
    expect(data[1]?.details).toEqual({ role: 'developer' });
    expect(data[2]).toMatchObject({ actorType: 'session', actorId: viewer.memberId });
    expect(data[3]?.details).toEqual({ email: 'audit-viewer@example.com', role: 'viewer' });
    expect(actions).toContain('session.created');
    expect(JSON.stringify(data)).not.toMatch(/inviteUrl|token=|copper meadow/);
  });

  it('writes credentials created, changed, shared, deleted and workflows activated and deactivated', async () => {
    const cred = await p.request({
      method: 'POST',
      url: '/api/v1/credentials',
      key: p.adminKey,
      payload: { name: 'signing', type: 'hmacSecret', data: { secret: 'audit-top-secret' } },
    });
    expect(cred.statusCode, cred.body).toBe(201);
    const credId = cred.json().id as string;
    const patched = await p.request({
      method: 'PATCH',
      url: `/api/v1/credentials/${credId}`,
      key: p.adminKey,
      payload: { data: { secret: 'audit-other-secret' } },
    });
    expect(patched.statusCode, patched.body).toBe(200);
    expect(
      (await p.request({ method: 'DELETE', url: `/api/v1/credentials/${credId}`, key: p.adminKey }))
        .statusCode,
    ).toBeLessThan(300);
    const events = (await audit(`?targetId=${credId}`)).data;
    expect(events.map((e) => e.action)).toEqual([
      'credential.deleted',
      'credential.updated',
      'credential.created',
    ]);
    expect(events[1]?.details).toEqual({ fields: ['data'] });
    expect(JSON.stringify(events)).not.toContain('audit-');

    const flow = await p.request({
      method: 'POST',
      url: '/api/v1/workflows',
      key: p.adminKey,
      payload: {
        name: 'audited flow',
        nodes: [
          {
            id: 'n1',
            name: 'Hook',
            type: 'n8n-nodes-base.webhook',
            typeVersion: 2,
            position: [0, 0],
            parameters: { path: 'audited-flow', httpMethod: 'POST' },
          },
        ],
        connections: {},
      },
    });
    expect(flow.statusCode, flow.body).toBe(201);
    const wf = flow.json().id as string;
    for (const action of ['activate', 'deactivate', 'publish', 'unpublish', 'archive', 'unarchive'])
      expect(
        (
          await p.request({
            method: 'POST',
            url: `/api/v1/workflows/${wf}/${action}`,
            key: p.adminKey,
            payload: {},
          })
        ).statusCode,
      ).toBe(200);
    // publish/unpublish are n8n 2's names for activate/deactivate; archiving deactivates too.
    expect((await audit(`?targetType=workflow&targetId=${wf}`)).data.map((e) => e.action)).toEqual([
      'workflow.unarchived',
      'workflow.archived',
      'workflow.deactivated',
      'workflow.activated',
      'workflow.deactivated',
      'workflow.activated',
      'workflow.created',
    ]);
  });

  it('a viewer reads the logs but changes nothing; a key needs core:admin', async () => {
    const viewer = await memberSession(p, owner, 'log-viewer@example.com', 'viewer');
    const read = await asSession(p, viewer, { method: 'GET', url: '/v1/request-logs' });
    expect(read.statusCode, read.body).toBe(200);
    expect((await asSession(p, viewer, { method: 'GET', url: '/v1/audit-events' })).statusCode).toBe(200);
    const create = await asSession(p, viewer, {
      method: 'POST',
      url: '/v1/api-keys',
      payload: { name: 'nope', type: 'development', services: ['core'], role: 'Reader' },
    });
    expect(create.statusCode).toBe(403);
    // The viewer's own reads are in the log, as a session.
    const mine = await logs(`?memberId=${viewer.memberId}`);
    expect(mine.data.map((r) => `${r.method} ${r.path} ${r.status}`)).toEqual([
      'POST /v1/api-keys 403',
      'GET /v1/audit-events 200',
      'GET /v1/request-logs 200',
    ]);
    expect(mine.data[0]).toMatchObject({ principalKind: 'session', keyId: null, memberId: viewer.memberId });
    const { key } = await p.createKey({
      name: 'reader',
      type: 'development',
      services: ['*'],
      role: 'Reader',
    });
    const refused = await p.request({ method: 'GET', url: '/v1/request-logs', key });
    expect(refused.statusCode).toBe(403);
    expect(refused.json()).toMatchObject({ code: 'FORBIDDEN' });
  });

  it("nobody sees another account's logs or events", async () => {
    const other = await otherAccountKey(p);
    await p.request({
      method: 'GET',
      url: '/api/v1/workflows',
      key: other,
      headers: { 'x-request-id': 'other-1' },
    });
    expect((await logs('?requestId=other-1')).data).toEqual([]);
    const theirs = await logs('', other);
    expect(theirs.data.length).toBeGreaterThan(0);
    const ours = new Set((await logs('?limit=500')).data.map((r) => r.id));
    expect(theirs.data.some((r) => ours.has(r.id))).toBe(false);
    expect((await audit('', other)).data).toEqual([]);
  });

  it('deletes rows past the retention', async () => {
    const { key, id } = await p.createKey({
      name: 'old',
      type: 'development',
      services: ['*'],
      role: 'Reader',
    });
    await p.request({ method: 'GET', url: '/api/v1/workflows', key });
    expect((await logs(`?keyId=${id}`)).data).toHaveLength(1);
    p.clock.advance(31 * 86_400);
    await p.request({ method: 'GET', url: '/api/v1/workflows', key });
    // The hourly prune runs with the next flush (the clock moved past the hour).
    expect((await logs(`?keyId=${id}`)).data).toHaveLength(1);
  });
});
