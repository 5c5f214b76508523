import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { closeSync, mkdirSync, mkdtempSync, openSync, rmSync, unlinkSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openRawSqlite } from '../../src/core/db/sqlite-driver.js';
import { generateKey } from '../../src/modules/auth/key-format.js';
import {
  apiClient,
  baseEnv,
  cleanup,
  createAndActivate,
  eventually,
  slowServer,
  startProcess,
} from '../workflows/process/processes.js';
import { type Answer, acceptedFlow, tally, webhookLoad } from './webhook-load.js';

const ANSWER_BOUND_MS = 12_000;
const SETTLE_BOUND_MS = 60_000;

/**
 * A small tmpfs for the SQLite data folder, or why there cannot be one here (mounting needs root or
 * CAP_SYS_ADMIN): the one case where this suite skips, saying why.
 */
function mountSmallDisk(): { dir: string; unmount(): void } | { problem: string } {
  const dir = mkdtempSync(path.join(tmpdir(), 'platform-disk-'));
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=48m,mode=0700', 'tmpfs', dir], { stdio: 'pipe' });
  } catch (error) {
    rmSync(dir, { recursive: true, force: true });
    const reason = (error as { stderr?: Buffer }).stderr?.toString().trim() || String(error);
    return { problem: `cannot mount a tmpfs here (${reason})` };
  }
  return {
    dir,
    unmount: () => {
      execFileSync('umount', ['-l', dir]);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Writes a file until the disk refuses more (ENOSPC); returns its path. */
function fill(dir: string): string {
  const file = path.join(dir, 'filler');
  const fd = openSync(file, 'w');
  const chunk = Buffer.alloc(256 * 1024, 1);
  try {
    for (;;) writeSync(fd, chunk);
  } catch (error) {
    if ((error as { code?: string }).code !== 'ENOSPC') throw error;
    // The last bytes: a smaller write fills what a chunk could not.
    try {
      for (;;) writeSync(fd, Buffer.alloc(512, 1));
    } catch {
      // full
    }
  } finally {
    closeSync(fd);
  }
  return file;
}

const disk = mountSmallDisk();
if ('problem' in disk) console.warn(`[skip] disk-full suite: ${disk.problem}`);

describe.skipIf('problem' in disk)('the SQLite disk fills up under webhook load', () => {
  afterAll(async () => {
    await cleanup();
    if (!('problem' in disk)) disk.unmount();
  }, 30_000);

  it('503 with Retry-After while full, /health 503, no half-written data, and all resumes once space returns', async () => {
    if ('problem' in disk) return;
    const dataDir = path.join(disk.dir, 'data');
    mkdirSync(dataDir);
    const key = generateKey('production');
    const downstream = await slowServer(200);
    const proc = startProcess(['serve'], {
      ...baseEnv(dataDir),
      PLATFORM_BOOTSTRAP_KEY: key,
      ENCRYPTION_KEY: randomBytes(32).toString('hex'),
    });
    try {
      const found = await proc.waitFor(/Server listening at (http:\/\/127\.0\.0\.1:\d+)/, 60_000);
      const base = found[1] as string;
      const workflowId = await createAndActivate(
        apiClient(base, key),
        acceptedFlow('disk', 'disk', downstream.url),
      );
      const load = webhookLoad([base], 'disk', 4);
      await load.until((a) => a.filter((x) => x.status === 200).length >= 10, 30_000, 'a warm load');

      const filler = fill(disk.dir);
      const fullAt = Date.now();
      await load.until(
        (a) => a.filter((x) => x.status === 503 && x.startedAt >= fullAt).length >= 5,
        30_000,
        'callers told 503 while the disk is full',
      );
      const health = await fetch(`${base}/health`);
      expect(health.status).toBe(503);
      expect(health.headers.get('retry-after')).not.toBeNull();
      expect(await health.json()).toMatchObject({ databaseStatus: 'error', status: 'degraded' });

      unlinkSync(filler);
      const freedAt = Date.now();
      const firstAfter = await load.until(
        (a) => a.some((x) => x.status === 200 && x.startedAt >= freedAt),
        30_000,
        'a webhook accepted once space is back',
      );
      await load.until(
        (a) => a.filter((x) => x.status === 200 && x.startedAt >= firstAfter).length >= 10,
        30_000,
        'load after recovery',
      );
      const answers = await load.stop();
      const refused = answers.filter((a) => a.status === 503);
      console.info(
        `[faults] disk full: ${answers.length} calls, ${refused.length} × 503 (${[
          ...new Set(refused.map((a) => a.dependency)),
        ].join(',')}), slowest ${Math.max(...answers.map((a) => a.ms))} ms, first accepted ${
          firstAfter - freedAt
        } ms after space returned`,
      );

      expect(proc.child.exitCode, proc.output().slice(-2000)).toBeNull();
      expect(proc.output()).not.toContain('shutting down after error');
      const wrong = answers.filter(
        (a: Answer) =>
          !(a.status >= 200 && a.status < 300) &&
          !(a.status === 503 && a.retryAfter !== null && a.code === 'SERVICE_UNAVAILABLE'),
      );
      expect(wrong, 'answers neither 2xx nor 503 with Retry-After').toEqual([]);
      expect(answers.filter((a) => a.ms > ANSWER_BOUND_MS)).toEqual([]);
      expect((await fetch(`${base}/health`)).status).toBe(200);

      // No half-written data: the file is whole, every accepted call has its one execution, and
      // nothing stays new/running.
      const raw = await openRawSqlite(path.join(dataDir, 'platform.db'), { readonly: true });
      try {
        const read = () =>
          raw
            .prepare('select status, trigger_data from executions where workflow_id = ?')
            .all([workflowId]) as Array<{
            status: string;
            trigger_data: string;
          }>;
        const rows = await eventually(
          async () => {
            const now = read();
            return now.some((r) => r.status === 'new' || r.status === 'running') ? undefined : now;
          },
          SETTLE_BOUND_MS,
          'every execution finished',
        );
        expect(raw.scalar('pragma integrity_check')).toBe('ok');
        const ns = rows.map(
          (r) =>
            (JSON.parse(r.trigger_data) as { items: Array<{ json: { body: { n: number } } }> }).items[0]?.json
              .body.n as number,
        );
        const counts = tally(answers, ns);
        expect(counts.lost).toEqual([]);
        expect(counts.duplicated).toEqual([]);
        expect(counts.unknown).toEqual([]);
      } finally {
        raw.close();
      }
    } finally {
      proc.child.kill('SIGTERM');
      const timer = setTimeout(() => proc.child.kill('SIGKILL'), 5_000);
      await proc.exited;
      clearTimeout(timer);
      await downstream.close();
    }
  }, 240_000);
});
