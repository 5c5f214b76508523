import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { withPlatform } from '../../src/cli/platform.js';
import { workflowsCommand } from '../../src/cli/workflows.js';
import { parseConfig } from '../../src/config.js';
import { authModule } from '../../src/modules/auth/index.js';
import { workflowsModule } from '../../src/modules/workflows/index.js';

const dirs: string[] = [];
function tempDir(): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'platform-wf-roundtrip-'));
  dirs.push(dir);
  return dir;
}
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** `platform workflows …` in this process, against DATA_DIR's database; a credential made first. */
async function workflows(dataDir: string, argv: string[]): Promise<{ code: number; out: string[] }> {
  const config = parseConfig({ DATA_DIR: dataDir, DATABASE_URL: '', REDIS_URL: '' });
  return withPlatform(
    [authModule, workflowsModule],
    async (ctx) => {
      const boot = await ctx.apis.auth?.bootstrap();
      const api = ctx.apis.workflows;
      if (!boot || !api) throw new Error('modules missing');
      const creds = await api.credentials.list(boot.accountId, { name: 'Billing API' });
      if (creds.data.length === 0)
        await api.credentials.create(boot.accountId, {
          name: 'Billing API',
          type: 'httpHeaderAuth',
          data: { name: 'x-api-key', value: 'k' },
        });
      const out: string[] = [];
      const code = await workflowsCommand(api, boot.accountId, argv, (line) => out.push(line));
      return { code, out };
    },
    config,
  );
}

/** An n8n download with every workflow and node field n8n has. */
const n8nWorkflow = {
  id: 'wf_n8n_roundtrip',
  name: 'n8n round trip',
  active: true,
  nodes: [
    {
      parameters: {},
      id: 'b1f7e0a2-0000-4000-8000-000000000001',
      name: 'Start',
      type: 'n8n-nodes-base.manualTrigger',
      typeVersion: 1,
      position: [0, 0],
      notes: 'kick-off',
      notesInFlow: true,
    },
    {
      parameters: {},
      id: 'b1f7e0a2-0000-4000-8000-000000000002',
      name: 'Call',
      type: 'n8n-nodes-base.noOp',
      typeVersion: 1,
      position: [220, 0],
      webhookId: 'c0ffee00-0000-4000-8000-000000000003',
      credentials: { httpHeaderAuth: { id: null, name: 'Billing API' } },
      onError: 'continueRegularOutput',
      retryOnFail: true,
      maxTries: 2,
      waitBetweenTries: 250,
      alwaysOutputData: true,
      executeOnce: false,
      disabled: false,
      color: '#1a1a1a',
    },
  ],
  connections: { Start: { main: [[{ node: 'Call', type: 'main', index: 0 }]] } },
  settings: { executionOrder: 'v1' },
  staticData: { 'node:Start': { lastId: 3 } },
  pinData: { Call: [{ json: { pinned: 1 } }] },
  meta: { instanceId: 'i-1', templateCredsSetupCompleted: true },
  tags: [
    {
      id: 'n8nTagId',
      name: 'crm',
      createdAt: '2025-01-01T00:00:00.000Z',
      updatedAt: '2025-01-01T00:00:00.000Z',
    },
  ],
  versionId: '2d3c1f0e-0000-4000-8000-000000000004',
};

describe('workflows export --all → import DIR', () => {
  it("round-trips an n8n workflow unchanged, n8n's fields included", async () => {
    const defs = tempDir();
    writeFileSync(path.join(defs, 'n8n.json'), JSON.stringify(n8nWorkflow, null, 2));
    const source = tempDir();
    expect((await workflows(source, ['import', defs])).code).toBe(0);

    const out = path.join(tempDir(), 'out');
    expect((await workflows(source, ['export', '--all', '--out', out])).code).toBe(0);
    expect(readdirSync(out)).toEqual(['wf_n8n_roundtrip.json']);
    const exported = JSON.parse(readFileSync(path.join(out, 'wf_n8n_roundtrip.json'), 'utf8'));
    // As given, except the tag's id: the platform derives it from the name.
    const { tags, ...rest } = n8nWorkflow;
    expect(exported).toMatchObject(rest);
    expect(exported.nodes).toEqual(n8nWorkflow.nodes);
    expect(exported.tags).toEqual([{ id: expect.stringMatching(/^tag_/), name: 'crm' }]);
    expect(Object.keys(exported).sort()).toEqual(
      [
        'active',
        'connections',
        'id',
        'meta',
        'name',
        'nodes',
        'pinData',
        'settings',
        'staticData',
        'tags',
        'versionId',
      ].sort(),
    );

    // Into a fresh database and back into the same one: the export is byte for byte the same.
    const first = (await workflows(source, ['export', '--all'])).out.join('\n');
    const fresh = tempDir();
    expect((await workflows(fresh, ['import', out])).code).toBe(0);
    expect((await workflows(fresh, ['export', '--all'])).out.join('\n')).toBe(first);
    expect((await workflows(source, ['import', out])).out).toEqual([
      `replaced: wf_n8n_roundtrip n8n round trip (${path.join(out, 'wf_n8n_roundtrip.json')})`,
    ]);
    expect((await workflows(source, ['export', '--all'])).out.join('\n')).toBe(first);
  }, 60_000);

  it('names every file with a field n8n does not have or a value it cannot store, and imports none', async () => {
    const defs = tempDir();
    mkdirSync(defs, { recursive: true });
    const bad = { ...n8nWorkflow, id: 'wf_bad_one', owner: 'someone' };
    const badNode = {
      ...n8nWorkflow,
      id: 'wf_bad_two',
      nodes: [{ ...n8nWorkflow.nodes[0], maxTries: 9 }, n8nWorkflow.nodes[1]],
    };
    writeFileSync(path.join(defs, 'a.json'), JSON.stringify(bad));
    writeFileSync(path.join(defs, 'b.json'), JSON.stringify(badNode));
    // PostgreSQL cannot store a NUL in text: refused here as the HTTP body parser refuses it.
    const nul = { ...n8nWorkflow, id: 'wf_bad_three', pinData: { Call: [{ json: { x: 'a\u0000b' } }] } };
    writeFileSync(path.join(defs, 'c.json'), JSON.stringify(nul));
    const dataDir = tempDir();
    const error = await workflows(dataDir, ['import', defs]).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AggregateError);
    const errors = (error as AggregateError).errors as Array<{ message: string; details: unknown }>;
    expect(errors.map((e) => e.message)).toEqual([
      `${path.join(defs, 'a.json')}: not a workflow definition`,
      `${path.join(defs, 'b.json')}: not a workflow definition`,
      `${path.join(defs, 'c.json')}: the workflow is not valid`,
    ]);
    expect(JSON.stringify(errors[0]?.details)).toContain('owner');
    expect(JSON.stringify(errors[1]?.details)).toContain('/nodes/0/maxTries');
    expect(errors[2]?.details).toEqual({
      problems: [{ path: 'pinData.Call.0.json.x', message: 'must not contain the NUL character (U+0000)' }],
    });
    expect((await workflows(dataDir, ['export', '--all'])).out).toEqual(['[]']);
  }, 60_000);
});
