import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { authModule } from '../../src/modules/auth/index.js';
import { healthModule } from '../../src/modules/health/index.js';
import { portalModule } from '../../src/modules/portal/index.js';
import { workflowsModule } from '../../src/modules/workflows/index.js';
import { otherAccountKey } from '../helpers/accounts.js';
import { createTestPlatform, type TestPlatform } from '../helpers/platform.js';
import { testDialects } from '../helpers/services.js';
import { OWNER_EMAIL, portalApi, tokenOf } from '../portal/support.js';

type User = {
  id: string;
  email: string;
  firstName: string;
  lastName: string;
  role?: string;
  isPending: boolean;
};
type Project = { id: string; name: string; type: string };

describe.each(await testDialects())("n8n's users and projects on %s", (dialect) => {
  let p: TestPlatform;
  let other: string;
  let dana: { id: string };
  beforeAll(async () => {
    p = await createTestPlatform({
      dialect,
      modules: [authModule, healthModule, portalModule, workflowsModule],
    });
    other = await otherAccountKey(p);
    const invite = await portalApi(p).members.invite(
      p.accountId,
      { email: 'dana.scully@example.com', role: 'developer' },
      null,
      null,
    );
    const accepted = await p.request({
      method: 'POST',
      url: '/v1/auth/invites/accept',
      key: null,
      payload: {
        token: tokenOf(invite.inviteUrl),
        name: 'Dana Katherine Scully',
        password: 'amber harbour quiet 58',
      },
    });
    expect(accepted.statusCode, accepted.body).toBe(200);
    dana = (accepted.json() as { member: { id: string } }).member;
  });
  afterAll(() => p.close());

  const get = (url: string, key?: string) => p.request({ method: 'GET', url, ...(key ? { key } : {}) });

  it("lists the account's portal members as n8n's users, with roles when asked", async () => {
    const res = await get('/api/v1/users');
    expect(res.statusCode, res.body).toBe(200);
    const users = (res.json() as { data: User[]; nextCursor: string | null }).data;
    expect(users.map((u) => u.email).sort()).toEqual(['dana.scully@example.com', OWNER_EMAIL]);
    expect(users.find((u) => u.id === dana.id)).toEqual({
      id: dana.id,
      email: 'dana.scully@example.com',
      firstName: 'Dana',
      lastName: 'Katherine Scully',
      isPending: false,
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
    });
    const withRoles = (await get('/api/v1/users?includeRole=true')).json() as { data: User[] };
    expect(Object.fromEntries(withRoles.data.map((u) => [u.email, u.role]))).toEqual({
      [OWNER_EMAIL]: 'global:owner',
      'dana.scully@example.com': 'global:member',
    });
    // One at a time: the cursor leads to the second and last page.
    const first = (await get('/api/v1/users?limit=1')).json() as { data: User[]; nextCursor: string };
    expect(first.data).toHaveLength(1);
    const second = (await get(`/api/v1/users?limit=1&cursor=${first.nextCursor}`)).json() as {
      data: User[];
      nextCursor: string | null;
    };
    expect(second.data).toHaveLength(1);
    expect(second.data[0]?.id).not.toBe(first.data[0]?.id);
    expect(second.nextCursor).toBeNull();
  });

  it('reads one user by id or email', async () => {
    expect((await get(`/api/v1/users/${dana.id}`)).json()).toMatchObject({
      email: 'dana.scully@example.com',
    });
    const byEmail = await get('/api/v1/users/Dana.Scully@example.com?includeRole=true');
    expect(byEmail.json()).toMatchObject({ id: dana.id, role: 'global:member' });
  });

  it("lists the account's principals as n8n's projects", async () => {
    const res = await get('/api/v1/projects');
    expect(res.statusCode, res.body).toBe(200);
    const projects = (res.json() as { data: Project[] }).data;
    expect(projects[0]).toEqual({ id: 'account', name: 'Account', type: 'team' });
    expect(projects).toContainEqual({
      id: `member:${dana.id}`,
      name: 'Dana Katherine Scully',
      type: 'personal',
    });
    expect(projects.some((pr) => pr.id.startsWith('key:') && pr.type === 'personal')).toBe(true);
  });

  it('another account sees none of them', async () => {
    expect((await get(`/api/v1/users/${dana.id}`, other)).statusCode).toBe(404);
    expect((await get('/api/v1/users/dana.scully@example.com', other)).statusCode).toBe(404);
    const theirs = (await get('/api/v1/users', other)).json() as { data: User[] };
    expect(theirs.data.map((u) => u.id)).not.toContain(dana.id);
    const projects = (await get('/api/v1/projects', other)).json() as { data: Project[] };
    expect(projects.data.map((pr) => pr.id)).not.toContain(`member:${dana.id}`);
  });

  it('refuses bad paging, unknown parameters and keys without workflow:admin, in a body with a message', async () => {
    for (const url of [
      '/api/v1/users?limit=0',
      '/api/v1/users?limit=251',
      '/api/v1/users?cursor=bm9wZQ',
      '/api/v1/users?bogus=1',
      '/api/v1/projects?cursor=%21%21',
      '/api/v1/projects?limit=x',
    ]) {
      const res = await get(url);
      expect(res.statusCode, url).toBe(400);
      expect(res.json(), url).toMatchObject({ message: expect.any(String) });
    }
    const { key } = await p.createKey({
      name: 'writer',
      type: 'development',
      services: ['workflow'],
      role: 'Writer',
    });
    for (const url of ['/api/v1/users', `/api/v1/users/${dana.id}`, '/api/v1/projects']) {
      expect((await get(url, key)).statusCode, url).toBe(403);
    }
  });
});
