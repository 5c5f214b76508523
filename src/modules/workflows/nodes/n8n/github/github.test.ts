import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createOutboundHttp } from '../../../../../core/http/outbound.js';
import { ctx, jsonOf, testDeps, workflow } from '../../../engine/testing.js';
import type { Item } from '../../../engine/types.js';
import { WorkflowEngine } from '../../../engine/workflow-engine.js';
import { defaultNodeRegistry } from '../../index.js';
import { GITHUB_OAUTH2_REFUSED } from './index.js';

interface Call {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: unknown;
}

/**
 * A local GitHub REST API: the few routes the tests use, answering with GitHub's response shapes
 * (content objects, issues, paged lists with a Link header) and its errors (404, 401, 403 rate limit).
 */
class FakeGithub {
  readonly calls: Call[] = [];
  base = '';
  private server: Server | null = null;
  /** Issues of the paged list. */
  issues = 250;

  async start() {
    const server = createServer((req, res) => {
      let raw = '';
      req.on('data', (c) => {
        raw += c;
      });
      req.on('end', () => {
        const url = new URL(req.url ?? '/', 'http://x');
        this.calls.push({
          method: req.method ?? '',
          url: req.url ?? '',
          headers: req.headers,
          body: raw ? JSON.parse(raw) : undefined,
        });
        const send = (status: number, body: unknown, headers: Record<string, string> = {}) =>
          res
            .writeHead(status, { 'content-type': 'application/json; charset=utf-8', ...headers })
            .end(body === undefined ? '' : JSON.stringify(body));
        if (req.headers.authorization === 'token bad')
          return send(401, { message: 'Bad credentials', documentation_url: 'https://docs.github.com/rest' });
        if (req.headers.authorization === 'token spent')
          return send(
            403,
            {
              message: 'API rate limit exceeded for user ID 1.',
              documentation_url: 'https://docs.github.com',
            },
            { 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': '1900000000' },
          );
        const path = decodeURIComponent(url.pathname);
        // A server that echoes what it was sent: the token must not reach the run data.
        if (path === '/repos/octo/echo')
          return send(404, { message: `No repository for ${req.headers.authorization}` });
        const contents = /^\/repos\/octo\/hello\/contents\/(.*)$/.exec(path);
        if (contents) {
          const file = contents[1] ?? '';
          if (file === 'docs') {
            return send(200, [
              { type: 'file', name: 'a.md', path: 'docs/a.md', sha: 'a1', size: 3 },
              { type: 'file', name: 'b.md', path: 'docs/b.md', sha: 'b1', size: 4 },
            ]);
          }
          if (req.method === 'GET') {
            if (file === 'missing.md') return send(404, { message: 'Not Found' });
            return send(200, {
              type: 'file',
              encoding: 'base64',
              size: 11,
              name: file.split('/').at(-1),
              path: file,
              content: `${Buffer.from('hello world').toString('base64')}\n`,
              sha: 'sha-old',
            });
          }
          const commit = { sha: 'c0ffee', message: (JSON.parse(raw) as { message: string }).message };
          if (req.method === 'DELETE') return send(200, { content: null, commit });
          return send(req.method === 'PUT' ? 201 : 200, { content: { path: file, sha: 'sha-new' }, commit });
        }
        if (path === '/repos/octo/hello/issues' && req.method === 'POST')
          return send(201, { id: 1, number: 7, ...(JSON.parse(raw) as object), state: 'open' });
        if (path === '/repos/octo/hello/issues' && req.method === 'GET') {
          const perPage = Number(url.searchParams.get('per_page') ?? 30);
          const page = Number(url.searchParams.get('page') ?? 1);
          const from = (page - 1) * perPage;
          const list = Array.from({ length: Math.max(0, Math.min(perPage, this.issues - from)) }, (_, i) => ({
            number: from + i + 1,
            title: `issue ${from + i + 1}`,
          }));
          const more = from + perPage < this.issues;
          return send(
            200,
            list,
            more
              ? {
                  link: `<${this.base}/repos/octo/hello/issues?page=${page + 1}>; rel="next", <x>; rel="last"`,
                }
              : {},
          );
        }
        if (path === '/repos/octo/hello/issues/7' && req.method === 'PATCH')
          return send(200, { number: 7, ...(JSON.parse(raw) as object) });
        if (path === '/repos/octo/hello/issues/7')
          return send(200, { number: 7, title: 'Seven', state: 'open' });
        if (path === '/repos/octo/hello/issues/7/comments')
          return send(201, { id: 99, body: (JSON.parse(raw) as { body: string }).body });
        if (path === '/repos/octo/hello/issues/7/lock') return send(204, undefined);
        if (path === '/repos/octo/hello/releases/5' && req.method === 'DELETE') return send(204, undefined);
        if (path === '/repos/octo/hello/pulls/3/reviews')
          return send(200, { id: 80, ...(JSON.parse(raw) as object), state: 'APPROVED' });
        if (path === '/repos/octo/hello')
          return send(200, { id: 1, full_name: 'octo/hello', private: false });
        if (path === '/orgs/acme/repos') return send(200, [{ name: 'one' }, { name: 'two' }]);
        return send(404, { message: 'Not Found', documentation_url: 'https://docs.github.com/rest' });
      });
    });
    this.server = server;
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    this.base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  }

  async stop() {
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => this.server?.close(() => resolve()));
  }
}

const github = new FakeGithub();
beforeAll(() => github.start());
afterAll(() => github.stop());
beforeEach(() => {
  github.calls.length = 0;
  github.issues = 250;
});

function engine() {
  return new WorkflowEngine(
    testDeps({
      http: createOutboundHttp({ allowHosts: ['127.0.0.1'], timeoutMs: 5_000 }),
      credential: async (id) => {
        const token = { good: 'ghp_good', bad: 'bad', spent: 'spent' }[id];
        if (!token) throw new Error(`Credential '${id}' not found`);
        return { accessToken: token, server: github.base };
      },
    }),
    defaultNodeRegistry,
  );
}

async function run(
  parameters: Record<string, unknown>,
  credential = 'good',
  items: Item[] = [{ json: { n: 1 } }],
) {
  const e = engine();
  const d = workflow(
    [
      { name: 'Start', type: 'n8n-nodes-base.manualTrigger', typeVersion: 1 },
      {
        name: 'GitHub',
        type: 'n8n-nodes-base.github',
        typeVersion: 1,
        parameters,
        credentials: { githubApi: { id: credential, name: 'GitHub' } },
      },
    ],
    [['Start', 'GitHub']],
  );
  const problems = e.validate(d);
  if (problems.length > 0) return { problems, out: null, json: [], error: null };
  const out = await e.run(d, { nodeName: 'Start', items }, ctx);
  return { problems, out, json: jsonOf(out.state, 'GitHub'), error: out.state.error };
}

const repo = { owner: 'octo', repository: 'hello' };

describe('GitHub node (n8n-nodes-base.github) against a local GitHub API', () => {
  it('creates a file: text content base64-encoded, the token as n8n sends it, its commit as the item', async () => {
    const { json, error } = await run({
      ...repo,
      resource: 'file',
      filePath: 'notes/today.md',
      fileContent: '# Today\nshipped',
      commitMessage: 'add notes',
      additionalParameters: { branch: { branch: 'dev' }, author: { name: 'Ada', email: 'ada@x.test' } },
    });
    expect(error).toBeNull();
    const [call] = github.calls;
    expect(call?.method).toBe('PUT');
    expect(call?.url).toBe('/repos/octo/hello/contents/notes%2Ftoday.md');
    expect(call?.headers.authorization).toBe('token ghp_good');
    expect(call?.headers['user-agent']).toBe('n8n');
    expect(call?.body).toEqual({
      message: 'add notes',
      content: Buffer.from('# Today\nshipped').toString('base64'),
      branch: 'dev',
      author: { name: 'Ada', email: 'ada@x.test' },
    });
    expect(json).toEqual([
      {
        content: { path: 'notes/today.md', sha: 'sha-new' },
        commit: { sha: 'c0ffee', message: 'add notes' },
      },
    ]);
  });

  it('edits and deletes a file with the current SHA looked up first (on the commit branch)', async () => {
    await run({
      ...repo,
      resource: 'file',
      operation: 'edit',
      filePath: 'a.txt',
      fileContent: 'new!',
      commitMessage: 'm',
    });
    expect(github.calls.map((c) => `${c.method} ${c.url}`)).toEqual([
      'GET /repos/octo/hello/contents/a.txt',
      'PUT /repos/octo/hello/contents/a.txt',
    ]);
    expect(github.calls[1]?.body).toMatchObject({ sha: 'sha-old', message: 'm' });
    github.calls.length = 0;
    const { json } = await run({
      ...repo,
      resource: 'file',
      operation: 'delete',
      filePath: 'a.txt',
      commitMessage: 'gone',
      additionalParameters: { branch: { branch: 'dev' } },
    });
    expect(github.calls.map((c) => `${c.method} ${c.url}`)).toEqual([
      'GET /repos/octo/hello/contents/a.txt?ref=dev',
      'DELETE /repos/octo/hello/contents/a.txt',
    ]);
    expect(github.calls[1]?.body).toEqual({ message: 'gone', sha: 'sha-old', branch: 'dev' });
    expect(json).toEqual([{ content: null, commit: { sha: 'c0ffee', message: 'gone' } }]);
  });

  it('gets a file as binary data (named from its path) or as GitHub’s answer, and lists a folder', async () => {
    const e = engine();
    const d = workflow(
      [
        { name: 'Start', type: 'n8n-nodes-base.manualTrigger', typeVersion: 1 },
        {
          name: 'GitHub',
          type: 'n8n-nodes-base.github',
          typeVersion: 1,
          parameters: {
            ...repo,
            resource: 'file',
            operation: 'get',
            filePath: 'docs/readme.txt',
            additionalParameters: { reference: 'v1' },
          },
          credentials: { githubApi: { id: 'good', name: 'GitHub' } },
        },
      ],
      [['Start', 'GitHub']],
    );
    const out = await e.run(d, { nodeName: 'Start', items: [{ json: { keep: true } }] }, ctx);
    const item = out.state.runData.GitHub?.[0]?.output[0]?.[0];
    expect(item?.json).toEqual({ keep: true });
    expect(item?.binary?.data).toMatchObject({ fileName: 'readme.txt', mimeType: 'text/plain' });
    expect(Buffer.from(item?.binary?.data?.data ?? '', 'base64').toString()).toBe('hello world');
    expect(github.calls[0]?.url).toBe('/repos/octo/hello/contents/docs%2Freadme.txt?ref=v1');

    const raw = await run({
      ...repo,
      resource: 'file',
      operation: 'get',
      filePath: 'x.md',
      asBinaryProperty: false,
    });
    expect(raw.json[0]).toMatchObject({ path: 'x.md', sha: 'sha-old', encoding: 'base64' });
    const list = await run({ ...repo, resource: 'file', operation: 'list', filePath: 'docs/' });
    expect(list.json.map((f) => f.path)).toEqual(['docs/a.md', 'docs/b.md']);
    const folder = await run({ ...repo, resource: 'file', operation: 'get', filePath: 'docs' });
    expect(folder.error?.message).toBe('File Path is a folder, not a file.');
  });

  it('creates, comments, edits, gets and locks issues with n8n’s bodies', async () => {
    const created = await run({
      ...repo,
      title: 'Bug',
      body: 'It breaks',
      labels: [{ label: 'bug' }, { label: 'p1' }],
      assignees: [{ assignee: 'ada' }],
    });
    expect(github.calls[0]?.body).toEqual({
      title: 'Bug',
      body: 'It breaks',
      labels: ['bug', 'p1'],
      assignees: ['ada'],
    });
    expect(created.json).toEqual([
      {
        id: 1,
        number: 7,
        title: 'Bug',
        body: 'It breaks',
        labels: ['bug', 'p1'],
        assignees: ['ada'],
        state: 'open',
      },
    ]);
    const comment = await run({ ...repo, operation: 'createComment', issueNumber: 7, body: 'thanks' });
    expect(comment.json).toEqual([{ id: 99, body: 'thanks' }]);
    const edited = await run({
      ...repo,
      operation: 'edit',
      issueNumber: '={{ 7 }}',
      editFields: { state: 'closed', state_reason: 'completed', labels: [{ label: 'done' }] },
    });
    expect(edited.json).toEqual([
      { number: 7, state: 'closed', state_reason: 'completed', labels: ['done'] },
    ]);
    const got = await run({ ...repo, operation: 'get', issueNumber: 7 });
    expect(got.json).toEqual([{ number: 7, title: 'Seven', state: 'open' }]);
    // Lock answers 204: n8n passes the input items on.
    const locked = await run({ ...repo, operation: 'lock', issueNumber: 7, lockReason: 'too heated' });
    expect(locked.json).toEqual([{ n: 1 }]);
    expect(github.calls.at(-1)?.url).toBe('/repos/octo/hello/issues/7/lock?lock_reason=too+heated');
  });

  it('pages a list with "Return All" by the Link header, or asks for `limit` items', async () => {
    const all = await run({
      ...repo,
      resource: 'repository',
      returnAll: true,
      getRepositoryIssuesFilters: { state: 'all' },
    });
    expect(all.json).toHaveLength(250);
    expect(github.calls.map((c) => c.url)).toEqual([
      '/repos/octo/hello/issues?state=all&per_page=100&page=1',
      '/repos/octo/hello/issues?state=all&per_page=100&page=2',
      '/repos/octo/hello/issues?state=all&per_page=100&page=3',
    ]);
    github.calls.length = 0;
    const some = await run({ ...repo, resource: 'repository', limit: 5 });
    expect(some.json.map((i) => i.number)).toEqual([1, 2, 3, 4, 5]);
    expect(github.calls.map((c) => c.url)).toEqual(['/repos/octo/hello/issues?per_page=5']);
  });

  it('stops paging past its bound with a node error instead of reading forever', async () => {
    github.issues = 1_000_000;
    const { error } = await run({ ...repo, resource: 'repository', returnAll: true });
    expect(error?.message).toMatch(/more than 10000 items/);
    expect(github.calls.length).toBeLessThanOrEqual(101);
  });

  it('reads the other resources: repository, release delete, review create, organization repositories', async () => {
    expect((await run({ ...repo, resource: 'repository', operation: 'get' })).json).toEqual([
      { id: 1, full_name: 'octo/hello', private: false },
    ]);
    expect((await run({ ...repo, resource: 'release', operation: 'delete', release_id: '5' })).json).toEqual([
      { success: true },
    ]);
    const review = await run({
      ...repo,
      resource: 'review',
      pullRequestNumber: 3,
      event: 'comment',
      body: 'nit',
    });
    expect(github.calls.at(-1)?.body).toEqual({ event: 'COMMENT', body: 'nit' });
    expect(review.json).toEqual([{ id: 80, event: 'COMMENT', body: 'nit', state: 'APPROVED' }]);
    const repos = await run({
      resource: 'organization',
      owner: { __rl: true, mode: 'url', value: 'https://github.com/acme' },
    });
    expect(repos.json).toEqual([{ name: 'one' }, { name: 'two' }]);
    expect(github.calls.at(-1)?.url).toBe('/orgs/acme/repos?per_page=50');
  });

  it('turns 404, 401 and a spent rate limit into node errors with GitHub’s message, no token in them', async () => {
    const missing = await run({ ...repo, resource: 'file', operation: 'get', filePath: 'missing.md' });
    expect(missing.error?.message).toBe('The resource you are requesting could not be found: Not Found');
    const bad = await run({ ...repo, operation: 'get', issueNumber: 7 }, 'bad');
    expect(bad.error?.message).toBe('Authorization failed - please check your credentials: Bad credentials');
    const spent = await run({ ...repo, operation: 'get', issueNumber: 7 }, 'spent');
    expect(spent.error?.message).toBe(
      "GitHub's rate limit is used up: try again after 2030-03-17T17:46:40.000Z",
    );
    const echoed = await run({ owner: 'octo', repository: 'echo', resource: 'repository', operation: 'get' });
    expect(echoed.error?.message).toMatch(
      /^The resource you are requesting could not be found: No repository for token /,
    );
    expect(JSON.stringify(echoed.out?.state)).not.toContain('ghp_good');
  });

  it('refuses bad input clearly: OAuth2 and unserved resources at save, bad names and numbers at run', async () => {
    const oauth = await run({ ...repo, authentication: 'oAuth2', operation: 'get', issueNumber: 1 });
    expect(oauth.problems).toEqual([
      { path: 'nodes[1].parameters.authentication', message: GITHUB_OAUTH2_REFUSED },
    ]);
    const search = await run({ resource: 'search' });
    expect(search.problems[0]?.message).toMatch(/resource 'search' is not supported here/);
    const wrong = await run({ ...repo, resource: 'file', operation: 'rename' });
    expect(wrong.problems[0]?.message).toMatch(/operation 'rename' of 'file' is not supported here/);
    const traversal = await run({ owner: '..', repository: 'x', operation: 'get', issueNumber: 1 });
    expect(traversal.error?.message).toBe("'..' is not a valid GitHub repository owner");
    const notNumber = await run({ ...repo, operation: 'get', issueNumber: '7/../../x' });
    expect(notNumber.error?.message).toBe("The issue number '7/../../x' is not a number");
    expect(github.calls).toHaveLength(0);
  });
});
