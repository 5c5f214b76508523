import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { parseConfig } from '../../src/config.js';
import { testDialects } from '../helpers/services.js';
import { SharedDatabase } from './support/shared-db.js';

const dialects = await testDialects();
const pkg = JSON.parse(readFileSync('package.json', 'utf8')) as { version: string };

describe.each(dialects)('GET /health on %s', (dialect) => {
  it('200 ok while the database answers, 503 degraded once it does not; never needs a key', async () => {
    const shared = new SharedDatabase(dialect);
    await shared.open(); // stays open to drop the schema afterwards
    const database = await shared.open();
    const { app } = await buildApp({
      config: parseConfig({ DATA_DIR: ':memory:', LOG_LEVEL: 'silent' }),
      database,
      logger: false,
    });
    try {
      const before = Date.now();
      const ok = await app.inject({
        method: 'GET',
        url: '/health',
        headers: { authorization: 'Bearer garbage' },
      });
      expect(ok.statusCode).toBe(200);
      const body = ok.json();
      expect(Object.keys(body).sort()).toEqual([
        'databaseStatus',
        'queueStatus',
        'status',
        'timestamp',
        'version',
      ]);
      expect(body).toMatchObject({
        status: 'ok',
        databaseStatus: 'ok',
        queueStatus: 'none',
        version: pkg.version,
      });
      expect(body.timestamp).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
      expect(Date.parse(body.timestamp)).toBeGreaterThanOrEqual(before - 1000);

      await database.close();
      const down = await app.inject({ method: 'GET', url: '/health' });
      expect(down.statusCode).toBe(503);
      expect(down.json()).toMatchObject({
        status: 'degraded',
        databaseStatus: 'error',
        version: pkg.version,
      });
    } finally {
      await app.close();
      await shared.close();
    }
  });
});
