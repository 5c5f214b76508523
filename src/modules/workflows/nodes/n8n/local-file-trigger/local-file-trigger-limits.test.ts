import { existsSync, readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { mkdir, mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { until } from '../../../../../../test/helpers/until.js';
import { withDefaults } from '../../../engine/parameters.js';
import { testDeps } from '../../../engine/testing.js';
import type { HostAccess } from '../../../engine/types.js';
import { type FileEvent, periodicDelay, watchFolder } from './folder-watcher.js';
import { MAX_FOLDER_WATCHES, watchesInProcess } from './folder-watches.js';
import { type IgnorePattern, ignorePatternOf, MAX_WILDCARDS } from './ignore-pattern.js';
import { localFileTriggerNode } from './index.js';
import { type ScanSpec, scan } from './scan.js';
import { MAX_TRIGGERS_PER_ACCOUNT, MAX_TRIGGERS_PER_PROCESS, takeTriggerSlot } from './trigger-slots.js';

/** The security review's pattern (H2): 31 s over a 60-character name with V8's backtracking engine. */
const EVIL = '**/*a*a*a*a*a*a*a*a*a*b';

let root: string;
beforeAll(async () => {
  root = await realpath(await mkdtemp(path.join(tmpdir(), 'lft-limits-')));
});
afterAll(() => rm(root, { recursive: true, force: true }));

function pattern(glob: string): IgnorePattern {
  const p = ignorePatternOf(glob);
  if (typeof p === 'string') throw new Error(p);
  return p;
}

/** A watcher over `target` recording its events and log lines. */
async function watcher(target: string, options: { ignored?: IgnorePattern; usePolling?: boolean } = {}) {
  const events: string[] = [];
  const said: string[] = [];
  const w = watchFolder({
    root,
    target,
    kind: 'folder',
    depth: -1,
    ignored: options.ignored ?? null,
    events: new Set<FileEvent>(['add', 'addDir']),
    awaitWriteFinish: false,
    usePolling: options.usePolling ?? false,
    onEvent: async (event, rel) => {
      events.push(`${event} ${rel}`);
    },
    onDropped: (_count, why) => said.push(why),
    onFailed: (e) => said.push(e.message),
  });
  await w.ready;
  return { events, said, close: () => w.close() };
}

/** inotify watches this process holds, from /proc (Linux); null elsewhere. */
function inotifyWatches(): number | null {
  if (!existsSync('/proc/self/fdinfo')) return null;
  let count = 0;
  for (const fd of readdirSync('/proc/self/fd')) {
    let link = '';
    try {
      link = readlinkSync(`/proc/self/fd/${fd}`);
    } catch {
      continue;
    }
    if (link !== 'anon_inode:inotify') continue;
    const info = readFileSync(`/proc/self/fdinfo/${fd}`, 'utf8');
    count += info.split('\n').filter((line) => line.startsWith('inotify wd:')).length;
  }
  return count;
}

describe('Local File Trigger bounds (security review H2, M2)', () => {
  it('matches an ignored glob in linear time: the review’s pattern over a 200-character name', () => {
    const p = pattern(EVIL);
    const name = `/r/${'a'.repeat(200)}`;
    const started = performance.now();
    for (let i = 0; i < 10; i++) expect(p.ignores(name, false)).toBe(false);
    // Ten matches well inside 50 ms each (V8's engine needed minutes for one at this length).
    expect(performance.now() - started).toBeLessThan(500);
    expect(p.ignores(`/r/${'a'.repeat(200)}b`, false)).toBe(true);
    expect(pattern('!**/*.csv').ignores('/r/x/rent.csv', false)).toBe(false);
    expect(pattern('!**/*.csv').ignores('/r/x/notes.txt', false)).toBe(true);
    expect(pattern('**/{tmp,cache}/**').ignores('/r/a/cache/b.txt', false)).toBe(true);
  });

  it('refuses a pattern with more wildcards than the bound, naming it', () => {
    expect(ignorePatternOf(`**/${'*x'.repeat(MAX_WILDCARDS)}`)).toBe(
      `the pattern holds more than ${MAX_WILDCARDS} wildcards (*, **)`,
    );
    expect(ignorePatternOf('{'.repeat(11))).toMatch(/more than 10 \{…\} groups/);
    expect(ignorePatternOf('[]')).toMatch(/not a pattern this trigger can read/);
  });

  it('scans a folder holding such a name without holding up the event loop', async () => {
    const dir = path.join(root, 'evil');
    await mkdir(dir);
    const w = await watcher(dir, { ignored: pattern(EVIL), usePolling: true });
    let worst = 0;
    let turns = 0;
    let lastTurn = performance.now();
    let stop = false;
    const turn = () => {
      const t = performance.now();
      worst = Math.max(worst, t - lastTurn);
      lastTurn = t;
      turns++;
      if (!stop) setImmediate(turn);
    };
    setImmediate(turn);
    try {
      await writeFile(path.join(dir, 'a'.repeat(200)), 'x');
      await until(() => w.events.includes(`add ${'a'.repeat(200)}`), 'the add of the long name');
    } finally {
      stop = true;
      await w.close();
    }
    expect(turns).toBeGreaterThan(10);
    // V8's engine held the loop for minutes here; the bound is generous for a machine under load.
    expect(worst).toBeLessThan(500);
  });

  it('watches at most MAX_FOLDER_WATCHES folders (no recursive watch), and periodic scans see the rest', async () => {
    const tree = path.join(root, 'tree');
    for (let f = 0; f < 100; f++) {
      await mkdir(path.join(tree, `d${f}`), { recursive: true });
      await Promise.all(
        Array.from({ length: 30 }, (_, i) => writeFile(path.join(tree, `d${f}`, `f${i}.txt`), 'x')),
      );
    }
    const before = inotifyWatches();
    const inProcessBefore = watchesInProcess();
    const w = await watcher(tree);
    try {
      expect(watchesInProcess() - inProcessBefore).toBe(MAX_FOLDER_WATCHES);
      const now = inotifyWatches();
      if (before !== null && now !== null) {
        expect(now - before).toBeGreaterThan(0);
        expect(now - before).toBeLessThanOrEqual(MAX_FOLDER_WATCHES);
      }
      expect(w.said).toContain(
        `37 folders are past the ${MAX_FOLDER_WATCHES} watched: periodic scans see them`,
      );
      // The target and shallow folders first: a new file at the top is hinted at once.
      await writeFile(path.join(tree, 'top.txt'), 'x');
      await until(() => w.events.includes('add top.txt'), 'the add at the top');
      // Every folder is still listed: a file in any of them is seen (hinted, or by the next periodic scan).
      for (let f = 0; f < 100; f += 11) await writeFile(path.join(tree, `d${f}`, 'new.txt'), 'x');
      await until(
        () =>
          Array.from({ length: 10 }, (_, k) => `add d${k * 11}/new.txt`).every((e) => w.events.includes(e)),
        'the adds in the folders',
      );
    } finally {
      await w.close();
    }
    expect(watchesInProcess()).toBe(inProcessBefore);
  });

  it('spaces periodic scans by the listing’s size and length', () => {
    expect(periodicDelay(true, 5, 100)).toBe(1_000);
    expect(periodicDelay(false, 5, 100)).toBe(5_000);
    // 20,000 entries: every 10 s however often polling asks; a 4 s scan: every 16 s.
    expect(periodicDelay(true, 50, 20_000)).toBe(10_000);
    expect(periodicDelay(true, 4_000, 100)).toBe(16_000);
  });

  it('shares a listing under way between triggers of the same folder, depth and pattern', async () => {
    const dir = path.join(root, 'shared');
    await mkdir(dir);
    const spec: ScanSpec = { root, target: dir, kind: 'folder', depth: -1, ignored: null };
    const first = scan(spec, Number.NEGATIVE_INFINITY);
    expect(scan({ ...spec }, Number.NEGATIVE_INFINITY)).toBe(first);
    // A change seen after that listing started needs a listing of its own.
    const fresh = scan(spec, performance.now() + 1);
    expect(fresh).not.toBe(first);
    expect(scan({ ...spec, depth: 0 }, Number.NEGATIVE_INFINITY)).not.toBe(fresh);
    await Promise.all([first, fresh]);
  });

  it(`holds ${MAX_TRIGGERS_PER_ACCOUNT} triggers per account and ${MAX_TRIGGERS_PER_PROCESS} per process`, async () => {
    const host: HostAccess = {
      filesDir: root,
      executeCommand: { enabled: false, timeoutMs: 1_000, maxOutputBytes: 1_000 },
      ssh: { enabled: false, timeoutMs: 1_000, maxOutputBytes: 1_000 },
      tcpTarget: async () => {
        throw new Error('no TCP');
      },
    };
    const parameters = { triggerOn: 'folder', path: 'slots', events: ['add'] };
    const start = (accountId: string) =>
      localFileTriggerNode.listener?.start({
        node: {
          id: 'n1',
          name: 'Watch',
          type: 'n8n-nodes-base.localFileTrigger',
          typeVersion: 1,
          position: [0, 0],
          parameters,
        },
        workflowId: 'wf_1',
        accountId,
        parameters: withDefaults(localFileTriggerNode.schema, parameters) as Record<string, unknown>,
        deps: testDeps({ host }),
        credential: async () => ({}),
        emit: async () => undefined,
        failed: () => undefined,
        log: { warn: () => undefined, error: () => undefined },
      });
    const handles = await Promise.all(
      Array.from({ length: MAX_TRIGGERS_PER_ACCOUNT }, () => start('acct_a')),
    );
    await expect(start('acct_a')).rejects.toThrow(
      `this account already has ${MAX_TRIGGERS_PER_ACCOUNT} Local File Triggers watching (the most)`,
    );
    // Stopping one frees its slot.
    await handles.pop()?.stop();
    const again = await start('acct_a');
    await again?.stop();
    for (const h of handles) await h?.stop();

    const releases: Array<() => void> = [];
    for (let i = 0; i < MAX_TRIGGERS_PER_PROCESS; i++) {
      const r = takeTriggerSlot(`acct_${i}`);
      if (typeof r === 'string') throw new Error(r);
      releases.push(r);
    }
    expect(takeTriggerSlot('acct_other')).toBe(
      `this server already runs ${MAX_TRIGGERS_PER_PROCESS} Local File Triggers (the most)`,
    );
    for (const r of releases) r();
    const r = takeTriggerSlot('acct_other');
    expect(typeof r).toBe('function');
    if (typeof r === 'function') r();
  });
});
