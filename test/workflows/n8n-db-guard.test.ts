import { afterAll, describe, expect, it } from 'vitest';
import type { TestPlatform } from '../helpers/platform.js';
import { runNode } from './db-support.js';
import { createCredential, workflowPlatform } from './support.js';

// The bad input "credentials pointing at the platform's own host or a private address": the
// MySQL and Redis nodes (the Postgres node's case is in n8n-postgres.test.ts) refuse before connecting.
describe('the MySQL and Redis nodes and the outbound guard', () => {
  let p: TestPlatform;
  afterAll(() => p?.close());

  it('refuses credentials pointing at loopback or a private address unless OUTBOUND_ALLOW_HOSTS allows them', async () => {
    p = await workflowPlatform('sqlite', { OUTBOUND_ALLOW_HOSTS: '' });
    const maria = await createCredential(p, 'maria local', 'mySql', {
      host: '127.0.0.1',
      port: '3306',
      database: 'test',
      user: 'root',
    });
    const my = await runNode(p, {
      type: 'mySql',
      typeVersion: 2.4,
      parameters: { operation: 'executeQuery', query: 'SELECT 1', options: {} },
      credentials: { mySql: { id: maria, name: 'maria local' } },
    });
    expect(my.error).toContain("Host '127.0.0.1' is not allowed");
    for (const host of ['10.0.0.5', '169.254.169.254', 'localhost']) {
      const redis = await createCredential(p, `redis ${host}`, 'redis', { host, port: '6379' });
      const res = await runNode(p, {
        type: 'redis',
        typeVersion: 1,
        parameters: { operation: 'info' },
        credentials: { redis: { id: redis, name: `redis ${host}` } },
      });
      expect(res.error, host).toContain('is not allowed');
    }
  });
});
