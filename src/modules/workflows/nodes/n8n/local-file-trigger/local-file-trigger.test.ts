import { mkdir, mkdtemp, realpath, rm, symlink, unlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { until } from '../../../../../../test/helpers/until.js';
import { withDefaults } from '../../../engine/parameters.js';
import { testDeps, workflow } from '../../../engine/testing.js';
import type { HostAccess, Item } from '../../../engine/types.js';
import { WorkflowEngine } from '../../../engine/workflow-engine.js';
import { defaultNodeRegistry } from '../../index.js';
import { BURST_FOR_TESTS } from './folder-watcher.js';
import { LOCAL_FILES_OFF, localFileTriggerNode } from './index.js';
import { scan } from './scan.js';
import { watchPathOf } from './watch-path.js';

let base: string;
let account: string;
let outside: string;
beforeAll(async () => {
  base = await mkdtemp(path.join(tmpdir(), 'local-file-trigger-'));
  account = path.join(base, 'acct');
  outside = path.join(base, 'outside');
  await mkdir(account, { recursive: true });
  await mkdir(outside, { recursive: true });
  await writeFile(path.join(outside, 'secret.txt'), 'no');
});
afterAll(() => rm(base, { recursive: true, force: true }));

const host = (filesDir: string | null): HostAccess => ({
  filesDir,
  executeCommand: { enabled: false, timeoutMs: 1_000, maxOutputBytes: 1_000 },
  ssh: { enabled: false, timeoutMs: 1_000, maxOutputBytes: 1_000 },
  tcpTarget: async () => {
    throw new Error('no TCP');
  },
});

function validate(parameters: Record<string, unknown>, filesDir: string | null) {
  const engine = new WorkflowEngine(testDeps({ host: host(filesDir) }), defaultNodeRegistry);
  const d = workflow(
    [{ name: 'Watch', type: 'n8n-nodes-base.localFileTrigger', typeVersion: 1, parameters }],
    [],
  );
  return engine.validate(d).map((p) => p.message);
}

/** Starts the node's listener as the service does; collects what it emits and what it logs. */
async function listen(parameters: Record<string, unknown>) {
  const emitted: Item[] = [];
  const warnings: string[] = [];
  const failures: Error[] = [];
  const handle = await localFileTriggerNode.listener?.start({
    node: {
      id: 'n1',
      name: 'Watch',
      type: 'n8n-nodes-base.localFileTrigger',
      typeVersion: 1,
      position: [0, 0],
      parameters,
    },
    workflowId: 'wf_1',
    accountId: 'acct_1',
    parameters: withDefaults(localFileTriggerNode.schema, parameters) as Record<string, unknown>,
    deps: testDeps({ host: host(account) }),
    credential: async () => ({}),
    emit: async (items) => {
      emitted.push(...items);
    },
    failed: (e) => failures.push(e),
    log: { warn: (_o, msg) => warnings.push(msg), error: (_o, msg) => warnings.push(msg) },
  });
  if (!handle) throw new Error('no listener');
  return { emitted, warnings, failures, stop: () => handle.stop() };
}

const seen = (emitted: Item[]) => emitted.map((i) => `${i.json.event} ${i.json.path}`);

describe('Local File Trigger (n8n-nodes-base.localFileTrigger)', () => {
  it('is off by default, and refuses at save a path outside the folder, an expression, no events', () => {
    expect(validate({ triggerOn: 'folder', path: 'in', events: ['add'] }, null)).toEqual([LOCAL_FILES_OFF]);
    expect(validate({ triggerOn: 'folder', path: '../elsewhere', events: ['add'] }, account)).toEqual([
      "cannot be watched: it is outside the account's files folder (WORKFLOW_FILES_DIR)",
    ]);
    expect(validate({ triggerOn: 'folder', path: '/etc', events: ['add'] }, account)[0]).toMatch(/outside/);
    expect(validate({ triggerOn: 'folder', path: '={{ $json.p }}', events: ['add'] }, account)).toEqual([
      'must be fixed: the trigger watches before any run',
    ]);
    expect(validate({ triggerOn: 'folder', path: 'in', events: [] }, account)).toEqual([
      'name at least one event to watch for',
    ]);
    expect(validate({ triggerOn: 'file', path: 'in/a.txt' }, account)).toEqual([]);
  });

  it("reads n8n's Docker home (/home/node, ~) as the account's folder", () => {
    expect(watchPathOf(account, '/home/node/host_mount/drive')).toEqual({
      ok: true,
      absolute: path.join(account, 'host_mount/drive'),
    });
    expect(watchPathOf(account, '~/x')).toEqual({ ok: true, absolute: path.join(account, 'x') });
    expect(watchPathOf(account, '/home/node/../../etc').ok).toBe(false);
  });

  it('reports add, change, unlink, addDir and unlinkDir as {event, path}, the path as the workflow names it', async () => {
    await mkdir(path.join(account, 'box'), { recursive: true });
    await writeFile(path.join(account, 'box', 'before.txt'), 'existing');
    const w = await listen({
      triggerOn: 'folder',
      path: '/home/node/box',
      events: ['add', 'change', 'unlink', 'addDir', 'unlinkDir'],
    });
    try {
      await writeFile(path.join(account, 'box', 'a.txt'), 'one');
      await until(() => seen(w.emitted).includes('add /home/node/box/a.txt'), 'the add');
      await writeFile(path.join(account, 'box', 'a.txt'), 'one and two');
      await until(() => seen(w.emitted).includes('change /home/node/box/a.txt'), 'the change');
      await mkdir(path.join(account, 'box', 'sub'));
      await until(() => seen(w.emitted).includes('addDir /home/node/box/sub'), 'the addDir');
      await unlink(path.join(account, 'box', 'a.txt'));
      await rm(path.join(account, 'box', 'sub'), { recursive: true });
      await until(
        () =>
          seen(w.emitted).includes('unlink /home/node/box/a.txt') &&
          seen(w.emitted).includes('unlinkDir /home/node/box/sub'),
        'the unlinks',
      );
      // What was there at activation is not reported (n8n's ignoreInitial).
      expect(seen(w.emitted).some((e) => e.includes('before.txt'))).toBe(false);
    } finally {
      await w.stop();
    }
  });

  it('a path not there yet is watched through the nearest folder above it; a file through its folder', async () => {
    const root = await realpath(account);
    const folders = async (target: string, kind: 'folder' | 'file' = 'folder') =>
      (await scan({ root, target, kind, depth: -1, ignored: null }, performance.now())).folders.map((f) =>
        path.relative(root, f.path),
      );
    await mkdir(path.join(root, 'later'), { recursive: true });
    expect(await folders(path.join(root, 'later', 'drive', 'inbox'))).toEqual(['later']);
    expect(await folders(path.join(root, 'nothing', 'here'))).toEqual(['']);
    await writeFile(path.join(root, 'later', 'one.txt'), 'x');
    expect(await folders(path.join(root, 'later', 'one.txt'), 'file')).toEqual(['later']);
    expect(await folders(path.join(root, 'later', 'two.txt'), 'file')).toEqual(['later']);
    // Once there, the folder itself (and what it holds).
    await mkdir(path.join(root, 'later', 'drive', 'inbox'), { recursive: true });
    expect(await folders(path.join(root, 'later', 'drive', 'inbox'))).toEqual([
      path.join('later', 'drive', 'inbox'),
    ]);

    // The listener sees a file in a folder made after it started.
    const w = await listen({ triggerOn: 'folder', path: '/home/node/made-later/inbox', events: ['add'] });
    try {
      await mkdir(path.join(account, 'made-later', 'inbox'), { recursive: true });
      await writeFile(path.join(account, 'made-later', 'inbox', 'a.txt'), 'one');
      await until(() => seen(w.emitted).includes('add /home/node/made-later/inbox/a.txt'), 'the add');
    } finally {
      await w.stop();
    }
  });

  it('honours ignored (a negated glob as n8n templates write it) and depth', async () => {
    await mkdir(path.join(account, 'csv', 'deep', 'deeper'), { recursive: true });
    const w = await listen({
      triggerOn: 'folder',
      path: 'csv',
      events: ['add'],
      options: { ignored: '!**/*.csv', depth: 1 },
    });
    try {
      await writeFile(path.join(account, 'csv', 'notes.txt'), 'x');
      await writeFile(path.join(account, 'csv', 'deep', 'deeper', 'too-deep.csv'), 'x');
      await writeFile(path.join(account, 'csv', 'deep', 'rent.csv'), 'x');
      await until(() => seen(w.emitted).includes('add csv/deep/rent.csv'), 'the csv add');
      expect(seen(w.emitted)).toEqual(['add csv/deep/rent.csv']);
    } finally {
      await w.stop();
    }
  });

  it('reports a symbolic link as itself, never what it leads to, and refuses a watched path that leads out', async () => {
    await mkdir(path.join(account, 'links'), { recursive: true });
    const w = await listen({ triggerOn: 'folder', path: 'links', events: ['add', 'addDir'] });
    try {
      await symlink(outside, path.join(account, 'links', 'escape'));
      await writeFile(path.join(account, 'links', 'done.txt'), 'x');
      await until(() => seen(w.emitted).includes('add links/done.txt'), 'the sentinel');
      // The link is an entry of its own (chokidar with followSymlinks off); nothing behind it is read.
      expect(seen(w.emitted).sort()).toEqual(['add links/done.txt', 'add links/escape']);
    } finally {
      await w.stop();
    }
    await symlink(outside, path.join(account, 'out'));
    await expect(listen({ triggerOn: 'folder', path: 'out', events: ['add'] })).rejects.toThrow(
      /leads outside the account’s files folder/,
    );
  });

  it('waits for a write to finish with awaitWriteFinish', async () => {
    await mkdir(path.join(account, 'slow'), { recursive: true });
    const w = await listen({
      triggerOn: 'folder',
      path: 'slow',
      events: ['add'],
      options: { awaitWriteFinish: true },
    });
    try {
      await writeFile(path.join(account, 'slow', 'big.bin'), 'part');
      await writeFile(path.join(account, 'slow', 'big.bin'), 'part and more');
      await until(() => w.emitted.length > 0, 'the settled add', 20_000);
      expect(seen(w.emitted)).toEqual(['add slow/big.bin']);
    } finally {
      await w.stop();
    }
  });

  it('bounds a flood: events past the rate are dropped and the log says so', async () => {
    await mkdir(path.join(account, 'flood'), { recursive: true });
    const w = await listen({
      triggerOn: 'folder',
      path: 'flood',
      events: ['add'],
      options: { usePolling: true },
    });
    try {
      await Promise.all(
        Array.from({ length: 400 }, (_, i) => writeFile(path.join(account, 'flood', `f${i}.txt`), 'x')),
      );
      await until(() => w.warnings.some((m) => /dropped|more than/.test(m)), 'the drop warning');
      expect(w.emitted.length).toBeLessThanOrEqual(BURST_FOR_TESTS + 40);
      expect(w.warnings.some((m) => m.includes('more than 20 file events a second'))).toBe(true);
    } finally {
      await w.stop();
    }
  });
});
