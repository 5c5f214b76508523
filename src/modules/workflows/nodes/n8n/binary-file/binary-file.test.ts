import { mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ctx, testDeps, workflow } from '../../../engine/testing.js';
import type { HostAccess, Item } from '../../../engine/types.js';
import { WorkflowEngine } from '../../../engine/workflow-engine.js';
import { defaultNodeRegistry } from '../../index.js';
import { FILES_OFF } from '../read-write-file/index.js';

let base: string;
let root: string;

const host = (filesDir: string | null): HostAccess => ({
  filesDir,
  executeCommand: { enabled: false, timeoutMs: 1_000, maxOutputBytes: 1_024 },
  ssh: { enabled: false, timeoutMs: 1_000, maxOutputBytes: 1_024 },
  tcpTarget: async () => {
    throw new Error('no TCP here');
  },
});

beforeAll(async () => {
  base = await mkdtemp(path.join(tmpdir(), 'rbf-'));
  root = path.join(base, 'files');
  await mkdir(path.join(root, 'in'), { recursive: true });
  await writeFile(path.join(root, 'in', 'a.txt'), 'alpha');
  await writeFile(path.join(root, 'in', 'b.txt'), 'beta');
  await writeFile(path.join(base, 'secret.txt'), 'outside');
  await symlink(path.join(base, 'secret.txt'), path.join(root, 'in', 'link.txt'));
});

afterAll(async () => {
  await rm(base, { recursive: true, force: true });
});

async function run(
  type: string,
  parameters: Record<string, unknown>,
  items: Item[] = [{ json: { n: 1 } }],
  filesDir: string | null = root,
) {
  const engine = new WorkflowEngine(testDeps({ host: host(filesDir) }), defaultNodeRegistry);
  const def = workflow(
    [
      { name: 'T', type: 'n8n-nodes-base.manualTrigger', typeVersion: 1 },
      { name: 'F', type, typeVersion: 1, parameters },
    ],
    [['T', 'F']],
  );
  const out = await engine.run(def, { nodeName: 'T', items }, ctx);
  const runs = out.state.runData.F ?? [];
  return { engine, def, error: out.state.error, items: runs[runs.length - 1]?.output[0] ?? [] };
}

const text = (item: Item | undefined, key = 'data') =>
  Buffer.from(item?.binary?.[key]?.data ?? '', 'base64').toString('utf8');

describe("n8n's legacy binary file nodes", () => {
  it('Read Binary File adds one file to each item; Read Binary Files gives an item per match', async () => {
    const one = await run('n8n-nodes-base.readBinaryFile', {
      filePath: 'in/a.txt',
      dataPropertyName: 'file',
    });
    expect(one.error).toBeNull();
    expect(one.items[0]?.json).toEqual({ n: 1 });
    expect(text(one.items[0], 'file')).toBe('alpha');
    expect(one.items[0]?.binary?.file?.fileName).toBe('a.txt');

    const many = await run('n8n-nodes-base.readBinaryFiles', { fileSelector: 'in/?.txt' });
    expect(many.error).toBeNull();
    expect(many.items.map((i) => text(i)).sort()).toEqual(['alpha', 'beta']);
    expect(many.items.every((i) => Object.keys(i.json).length === 0)).toBe(true);
  });

  it('Write Binary File writes the item binary inside the folder and passes the item on', async () => {
    const item: Item = {
      json: { k: 'v' },
      binary: { data: { data: Buffer.from('written').toString('base64'), mimeType: 'text/plain' } },
    };
    const out = await run('n8n-nodes-base.writeBinaryFile', { fileName: 'out/w.txt' }, [item]);
    expect(out.error).toBeNull();
    expect(out.items[0]?.json).toEqual({ k: 'v', fileName: 'out/w.txt' });
    expect(await readFile(path.join(root, 'out', 'w.txt'), 'utf8')).toBe('written');
  });

  it('refuses paths out of the folder, links out of it, patterns, missing files and a missing binary', async () => {
    const upward = await run('n8n-nodes-base.readBinaryFile', { filePath: '../secret.txt' });
    expect(upward.error?.message).toMatch(/outside|folder/i);
    const link = await run('n8n-nodes-base.readBinaryFile', { filePath: 'in/link.txt' });
    expect(link.error).not.toBeNull();
    expect(text(link.items[0])).not.toBe('outside');
    const pattern = await run('n8n-nodes-base.readBinaryFile', { filePath: 'in/*.txt' });
    expect(pattern.error?.message).toContain('is a pattern');
    const missing = await run('n8n-nodes-base.readBinaryFile', { filePath: 'in/none.txt' });
    expect(missing.error?.message).toContain('could not be found');
    const noBinary = await run('n8n-nodes-base.writeBinaryFile', { fileName: 'x.txt' });
    expect(noBinary.error?.message).toMatch(/binary/i);
    const outside = await run('n8n-nodes-base.writeBinaryFile', { fileName: '/etc/x.txt' }, [
      { json: {}, binary: { data: { data: 'eA==', mimeType: 'text/plain' } } },
    ]);
    expect(outside.error).not.toBeNull();
  });

  it('is refused at save while the instance has no files folder', async () => {
    const off = await run('n8n-nodes-base.readBinaryFiles', { fileSelector: '*' }, undefined, null);
    expect(off.engine.validate(off.def).map((p) => p.message)).toContain(FILES_OFF);
    expect(off.error?.message).toBe(FILES_OFF);
  });
});
