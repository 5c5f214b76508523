import { mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ctx, jsonOf, testDeps, workflow } from '../../../engine/testing.js';
import type { HostAccess, Item } from '../../../engine/types.js';
import { WorkflowEngine } from '../../../engine/workflow-engine.js';
import { defaultNodeRegistry } from '../../index.js';
import { FILES_OFF } from './index.js';

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
  base = await mkdtemp(path.join(tmpdir(), 'rwf-'));
  root = path.join(base, 'files', 'acct_1');
  await mkdir(path.join(root, 'in', 'deep'), { recursive: true });
  await writeFile(path.join(root, 'in', 'a.txt'), 'alpha');
  await writeFile(path.join(root, 'in', 'b.json'), '{"b":1}');
  await writeFile(path.join(root, 'in', 'deep', 'c.txt'), 'gamma');
  await writeFile(path.join(base, 'secret.txt'), 'outside');
  await symlink(path.join(base, 'secret.txt'), path.join(root, 'in', 'link.txt'));
  await symlink(base, path.join(root, 'escape'));
});

afterAll(async () => {
  await rm(base, { recursive: true, force: true });
});

async function run(parameters: Record<string, unknown>, filesDir: string | null = root, items?: Item[]) {
  const engine = new WorkflowEngine(testDeps({ host: host(filesDir) }), defaultNodeRegistry);
  const def = workflow(
    [
      { name: 'T', type: 'n8n-nodes-base.manualTrigger', typeVersion: 1 },
      { name: 'F', type: 'n8n-nodes-base.readWriteFile', typeVersion: 1, parameters },
    ],
    [['T', 'F']],
  );
  const out = await engine.run(def, { nodeName: 'T', items: items ?? [{ json: {} }] }, ctx);
  const runs = out.state.runData.F ?? [];
  return {
    def,
    engine,
    error: out.state.error,
    json: jsonOf(out.state, 'F'),
    items: runs[runs.length - 1]?.output[0] ?? [],
  };
}

describe('n8n-nodes-base.readWriteFile', () => {
  it('reads the files a pattern matches into binary data, with their metadata', async () => {
    // in/link.txt leads outside: a pattern matching it is refused as a whole, not read around it.
    const { error } = await run({ operation: 'read', fileSelector: 'in/*.txt' });
    expect(error?.message).toBe(
      "Access to 'in/link.txt' is not allowed: a symbolic link leads outside the allowed folder",
    );
    const ok = await run({ operation: 'read', fileSelector: 'in/**/*.json' });
    expect(ok.error).toBeNull();
    expect(ok.json).toEqual([
      {
        mimeType: 'application/json',
        fileName: 'b.json',
        fileExtension: 'json',
        fileType: 'json',
        fileSize: '7 B',
        directory: 'in',
      },
    ]);
    expect(Buffer.from(ok.items[0]?.binary?.data?.data ?? '', 'base64').toString()).toBe('{"b":1}');
  });

  it('reads one named file and a recursive pattern', async () => {
    const one = await run({
      operation: 'read',
      fileSelector: 'in/deep/c.txt',
      options: { dataPropertyName: 'file' },
    });
    expect(one.error).toBeNull();
    expect(Buffer.from(one.items[0]?.binary?.file?.data ?? '', 'base64').toString()).toBe('gamma');
    const none = await run({ operation: 'read', fileSelector: 'in/missing.txt' });
    expect(none.error).toBeNull();
    expect(none.json).toEqual([]);
  });

  it('writes binary data to a file in the folder (and appends)', async () => {
    const data = { mimeType: 'text/plain', data: Buffer.from('hello ').toString('base64') };
    const items: Item[] = [{ json: { n: 1 }, binary: { data } }];
    const w = await run({ operation: 'write', fileName: 'out/new.txt' }, root, items);
    expect(w.error).toBeNull();
    expect(w.json).toEqual([{ n: 1, fileName: 'out/new.txt' }]);
    await run({ operation: 'write', fileName: 'out/new.txt', options: { append: true } }, root, items);
    expect(await readFile(path.join(root, 'out', 'new.txt'), 'utf8')).toBe('hello hello ');
  });

  it.each([
    ['../secret.txt', 'outside the allowed folder'],
    ['/etc/passwd', 'outside the allowed folder'],
    ['in/link.txt', 'symbolic link leads outside'],
    ['escape/secret.txt', 'symbolic link leads outside'],
  ])('refuses to read %s with a clear node error', async (fileSelector, why) => {
    const { error } = await run({ operation: 'read', fileSelector });
    expect(error?.message).toContain(`Access to '${fileSelector}' is not allowed`);
    expect(error?.message).toContain(why);
  });

  it.each([
    ['../evil.txt', 'outside the allowed folder'],
    ['escape/evil.txt', 'symbolic link leads outside'],
    ['in/link.txt', 'symbolic link leads outside'],
  ])('refuses to write %s, and writes nothing outside', async (fileName, why) => {
    const data = { mimeType: 'text/plain', data: Buffer.from('x').toString('base64') };
    const { error } = await run({ operation: 'write', fileName }, root, [{ json: {}, binary: { data } }]);
    expect(error?.message).toContain(why);
    expect(await readFile(path.join(base, 'secret.txt'), 'utf8')).toBe('outside');
    await expect(readFile(path.join(base, 'evil.txt'))).rejects.toThrow();
  });

  it('is off while WORKFLOW_FILES_DIR is unset: refused at save and failing at run, naming the setting', async () => {
    const { error, def, engine } = await run({ operation: 'read', fileSelector: 'x' }, null);
    expect(error?.message).toBe(FILES_OFF);
    expect(FILES_OFF).toContain('WORKFLOW_FILES_DIR');
    expect(engine.validate(def)).toEqual([{ path: 'nodes[1].parameters', message: FILES_OFF }]);
    const on = await run({ operation: 'read', fileSelector: 'x' });
    expect(on.engine.validate(on.def)).toEqual([]);
  });
});
