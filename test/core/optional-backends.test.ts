import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';

// The embedded default must not carry PostgreSQL, Redis or BullMQ code in memory (the bench's
// resident-memory goal): those packages load only when their URL is configured.
describe('optional backends', () => {
  it('the embedded default loads none of pg, ioredis, bullmq, rate-limiter-flexible, mysql2', () => {
    const out = execFileSync(process.execPath, ['--import', 'tsx', 'test/core/support/loaded-backends.ts'], {
      encoding: 'utf8',
      env: { ...process.env, NODE_NO_WARNINGS: '1' },
    });
    const report = JSON.parse(out.trim().split('\n').at(-1) ?? '{}') as {
      byDefault: string[];
      afterImport: string[];
    };
    expect(report.byDefault).toEqual([]);
    expect(report.afterImport).toContain('pg');
  }, 60_000);
});
