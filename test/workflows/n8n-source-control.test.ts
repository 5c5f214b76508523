import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestPlatform } from '../helpers/platform.js';
import { testDialects } from '../helpers/services.js';
import { createWorkflow, echoFlow, otherAccountKey, workflowPlatform } from './support.js';

type File = { file: string; id: string; name: string; type: string; status: string; location: string };

const gitEnv = {
  ...process.env,
  GIT_AUTHOR_NAME: 't',
  GIT_AUTHOR_EMAIL: 't@example.com',
  GIT_COMMITTER_NAME: 't',
  GIT_COMMITTER_EMAIL: 't@example.com',
  GIT_CONFIG_GLOBAL: '/dev/null',
};
const git = (cwd: string, ...args: string[]) =>
  execFileSync('git', ['-c', 'protocol.file.allow=always', ...args], {
    cwd,
    env: gitEnv,
    timeout: 20_000,
  }).toString();

describe.each(await testDialects())("n8n's source control (git pull/push) on %s", (dialect) => {
  let p: TestPlatform;
  let root: string;
  let bare: string;
  beforeAll(async () => {
    root = mkdtempSync(path.join(tmpdir(), 'sc-test-'));
    bare = path.join(root, 'remote.git');
    git(root, 'init', '-q', '--bare', '-b', 'main', bare);
    p = await workflowPlatform(dialect, {
      SOURCE_CONTROL_REPO_URL: `file://${bare}`,
      SOURCE_CONTROL_ALLOW_FILE: 'true',
    });
  });
  afterAll(async () => {
    await p.close();
    rmSync(root, { recursive: true, force: true });
  });

  const pull = (key?: string, payload: object = {}) =>
    p.request({ method: 'POST', url: '/api/v1/source-control/pull', payload, ...(key ? { key } : {}) });
  const push = (ids: string[], key?: string, commitMessage = 'sync') =>
    p.request({
      method: 'POST',
      url: '/api/v1/source-control/push',
      payload: { commitMessage, fileNames: ids.map((id) => ({ id, type: 'workflow' })) },
      ...(key ? { key } : {}),
    });
  /** A clone of the remote to read and change it as another environment would. */
  const clone = () => {
    const dir = mkdtempSync(path.join(root, 'clone-'));
    git(dir, 'clone', '-q', bare, '.');
    return dir;
  };

  it('pushes workflows as files of the account folder, then pulls what another environment changed', async () => {
    expect((await pull()).json()).toEqual([]); // an empty repository: nothing to pull
    const wf = await createWorkflow(p, echoFlow('sc-push'));
    const pushed = await push([wf], undefined, 'first push');
    expect(pushed.statusCode, pushed.body).toBe(200);
    const file = `workflows/${p.accountId}/${wf}.json`;
    expect((pushed.json() as { data: File[] }).data).toEqual([
      expect.objectContaining({
        file,
        id: wf,
        type: 'workflow',
        status: 'created',
        location: 'local',
        pushed: true,
      }),
    ]);
    // Unchanged: nothing to commit.
    expect((await push([wf])).json()).toEqual({ data: [] });

    const other = clone();
    expect(git(other, 'log', '--format=%s')).toContain('first push');
    const stored = JSON.parse(readFileSync(path.join(other, file), 'utf8')) as Record<string, unknown>;
    expect(stored).toMatchObject({ id: wf, name: 'echo sc-push' });
    expect(stored).not.toHaveProperty('active');
    // Pulling what was just pushed changes nothing.
    expect((await pull()).json()).toEqual([]);

    // Another environment renames it and adds a workflow.
    writeFileSync(path.join(other, file), JSON.stringify({ ...stored, name: 'renamed remotely' }));
    const added = { ...echoFlow('sc-added'), id: 'wf_from_git' };
    writeFileSync(path.join(other, 'workflows', p.accountId, 'wf_from_git.json'), JSON.stringify(added));
    writeFileSync(path.join(other, 'workflows', p.accountId, 'notes.txt'), 'not a workflow');
    git(other, 'add', '.');
    git(other, 'commit', '-q', '-m', 'remote change');
    git(other, 'push', '-q', 'origin', 'HEAD:main');

    const pulled = await pull(undefined, { force: true });
    expect(pulled.statusCode, pulled.body).toBe(200);
    const files = pulled.json() as File[];
    expect(files.map((f) => [f.id, f.status, f.location, f.name]).sort()).toEqual(
      [
        [wf, 'modified', 'remote', 'renamed remotely'],
        ['wf_from_git', 'created', 'remote', 'echo sc-added'],
      ].sort(),
    );
    expect((await p.request({ method: 'GET', url: `/api/v1/workflows/${wf}` })).json()).toMatchObject({
      name: 'renamed remotely',
    });
    expect((await p.request({ method: 'GET', url: '/api/v1/workflows/wf_from_git' })).statusCode).toBe(200);
  });

  it("another account pulls only its own folder and cannot push this account's workflows", async () => {
    const mine = await createWorkflow(p, echoFlow('sc-mine'));
    expect((await push([mine])).statusCode).toBe(200);
    const otherKey = await otherAccountKey(p);
    const theirs = await pull(otherKey);
    expect(theirs.statusCode, theirs.body).toBe(200);
    expect(theirs.json()).toEqual([]);
    const refused = await push([mine], otherKey);
    expect(refused.statusCode).toBe(404);
    expect(refused.json()).toMatchObject({ details: { ids: [mine] } });
    // A file planted in another account's folder is never read into this one.
    const other = clone();
    mkdirSync(path.join(other, 'workflows', 'acct_elsewhere'), { recursive: true });
    writeFileSync(
      path.join(other, 'workflows', 'acct_elsewhere', 'wf_planted.json'),
      JSON.stringify({ ...echoFlow('sc-planted'), id: 'wf_planted' }),
    );
    git(other, 'add', '.');
    git(other, 'commit', '-q', '-m', 'plant');
    git(other, 'push', '-q', 'origin', 'HEAD:main');
    expect((await pull()).json()).toEqual([]);
    expect((await p.request({ method: 'GET', url: '/api/v1/workflows/wf_planted' })).statusCode).toBe(404);
  });

  it("a pull saves workflows as the caller's: a credential the caller may not use is refused", async () => {
    // A credential owned by one key, not shared; a custom admin key without credentials:use pulls a
    // workflow that names it: the save is refused, as it would be through PUT.
    const owner = await p.createKey({
      name: 'cred-owner',
      type: 'production',
      services: ['workflow'],
      role: 'Writer',
    });
    const made = await p.request({
      method: 'POST',
      url: '/api/v1/credentials',
      key: owner.key,
      payload: {
        name: 'sc-private',
        type: 'httpHeaderAuth',
        data: { name: 'X-Secret', value: 'sc-secret-1' },
      },
    });
    expect(made.statusCode, made.body).toBe(201);
    const credentialId = (made.json() as { id: string }).id;
    const puller = await p.createKey({
      name: 'sc-admin-no-credentials',
      type: 'production',
      role: 'Custom',
      services: ['core', 'workflow'],
      scopes: ['core:admin', 'workflow:read', 'workflow:write'],
    });
    const other = clone();
    const accountId = p.accountId;
    mkdirSync(path.join(other, 'workflows', accountId), { recursive: true });
    const flowWithCredential = {
      ...echoFlow('sc-uses-credential'),
      id: 'wf_sc_cred',
      nodes: [
        ...echoFlow('sc-uses-credential').nodes,
        {
          id: 'h1',
          name: 'Call',
          type: 'n8n-nodes-base.httpRequest',
          typeVersion: 4.2,
          position: [600, 0],
          parameters: {
            url: 'http://127.0.0.1:9/',
            authentication: 'genericCredentialType',
            genericAuthType: 'httpHeaderAuth',
            options: {},
          },
          credentials: { httpHeaderAuth: { id: credentialId, name: 'sc-private' } },
        },
      ],
    };
    writeFileSync(
      path.join(other, 'workflows', accountId, 'wf_sc_cred.json'),
      JSON.stringify(flowWithCredential),
    );
    git(other, 'add', '.');
    git(other, 'commit', '-q', '-m', 'uses a credential');
    git(other, 'push', '-q', 'origin', 'HEAD:main');
    const refused = await pull(puller.key);
    expect(refused.statusCode, refused.body).toBe(403);
    expect(refused.body).toMatch(/may not use credential/);
    expect((await p.request({ method: 'GET', url: '/api/v1/workflows/wf_sc_cred' })).statusCode).toBe(404);
  });

  it('needs core:admin; refuses bad bodies', async () => {
    const writer = await p.createKey({
      name: 'writer',
      type: 'production',
      services: ['workflow'],
      role: 'Writer',
    });
    expect((await pull(writer.key)).statusCode).toBe(403);
    expect((await push(['wf_x'], writer.key)).statusCode).toBe(403);
    expect((await pull(undefined, { autoPublish: 'all' })).statusCode).toBe(400);
    expect((await push([])).statusCode).toBe(400);
    const credential = await p.request({
      method: 'POST',
      url: '/api/v1/source-control/push',
      payload: { commitMessage: 'x', fileNames: [{ id: 'c1', type: 'credential' }] },
    });
    expect(credential.statusCode).toBe(400);
    expect((await push(['../../etc'])).statusCode).toBe(400);
  });
});

describe('source control settings', () => {
  const platform = (env: Record<string, string>) => workflowPlatform('sqlite', env);
  const pull = (p: TestPlatform) =>
    p.request({ method: 'POST', url: '/api/v1/source-control/pull', payload: {} });

  it('is off without a repository, refuses file:// unless allowed, private hosts unless allowed, and non-https', async () => {
    const cases: Array<[Record<string, string>, number, string]> = [
      [{}, 400, 'SOURCE_CONTROL_REPO_URL'],
      [{ SOURCE_CONTROL_REPO_URL: 'file:///tmp/nowhere.git' }, 400, 'SOURCE_CONTROL_ALLOW_FILE'],
      [{ SOURCE_CONTROL_REPO_URL: 'http://example.com/r.git' }, 400, 'https://'],
      [
        { SOURCE_CONTROL_REPO_URL: 'https://user:tok3n@10.0.0.1/r.git', OUTBOUND_ALLOW_HOSTS: '' },
        403,
        'not allowed',
      ],
    ];
    for (const [env, status, text] of cases) {
      const p = await platform(env);
      try {
        const res = await pull(p);
        expect(res.statusCode, res.body).toBe(status);
        expect((res.json() as { message: string }).message).toContain(text);
        expect(res.body).not.toContain('tok3n');
      } finally {
        await p.close();
      }
    }
  });

  it('a remote that fails answers 502 without the credentials of its URL', async () => {
    const root = mkdtempSync(path.join(tmpdir(), 'sc-missing-'));
    const p = await platform({
      SOURCE_CONTROL_REPO_URL: `file://${root}/does-not-exist.git`,
      SOURCE_CONTROL_ALLOW_FILE: 'true',
    });
    try {
      const res = await pull(p);
      expect(res.statusCode, res.body).toBe(502);
      expect(res.json()).toMatchObject({ code: 'UPSTREAM_ERROR' });
    } finally {
      await p.close();
      rmSync(root, { recursive: true, force: true });
    }
  });
});
