import { Queue } from 'bullmq';
import pg from 'pg';
import { Registry } from 'prom-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerPoolCollector } from '../../src/core/metrics/collectors.js';
import { TestClock } from '../helpers/clock.js';
import { freePort } from '../helpers/listening.js';
import { createTestPlatform, type TestPlatform, testRedis } from '../helpers/platform.js';
import { PG_URL, postgresAvailable, redisAvailable, testDialects, uniqueName } from '../helpers/services.js';

const dialects = await testDialects();
const redisUp = await redisAvailable();

/** The value of one series in Prometheus text, or undefined when the series is absent. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    const labelText = line.slice(name.length).split(' ')[0] ?? '';
    if (Object.entries(labels).every(([k, v]) => labelText.includes(`${k}="${v}"`)))
      return Number(line.split(' ').at(-1));
  }
  return undefined;
}

describe('metrics switched off', () => {
  it('GET /metrics does not exist (404), even for an admin key', async () => {
    const p = await createTestPlatform({ dialect: 'sqlite' });
    try {
      const res = await p.request({ method: 'GET', url: '/metrics' });
      expect(res.statusCode).toBe(404);
    } finally {
      await p.close();
    }
  });
});

describe.each(dialects)('metrics on the main port on %s', (dialect) => {
  let p: TestPlatform;
  const clock = new TestClock('2026-06-01T12:00:00.000Z');
  const scrape = async () => {
    const res = await p.request({ method: 'GET', url: '/metrics' });
    expect(res.statusCode).toBe(200);
    return res.body;
  };
  beforeAll(async () => {
    p = await createTestPlatform({
      dialect,
      clock,
      env: { METRICS_ENABLED: 'true', WORKFLOW_WORKER: 'false' },
    });
  });
  afterAll(async () => {
    await p.close();
  });

  it('needs a key with core:admin', async () => {
    expect((await p.request({ method: 'GET', url: '/metrics', key: null })).statusCode).toBe(401);
    const reader = await p.createKey({ name: 'r', type: 'production', services: ['core'], role: 'Reader' });
    expect((await p.request({ method: 'GET', url: '/metrics', key: reader.key })).statusCode).toBe(403);
    const res = await p.request({ method: 'GET', url: '/metrics' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
    const doc = (await p.request({ method: 'GET', url: '/openapi.json', key: null })).json();
    const operation = doc.paths['/metrics'].get;
    expect(Object.keys(operation.responses['200'].content)[0]).toMatch(/^text\/plain/);
  });

  it('counts requests by route pattern and status, never by raw URL, with latency histograms', async () => {
    const id = 'key_doesnotexist123';
    for (let i = 0; i < 3; i++) await p.request({ method: 'GET', url: `/v1/api-keys/${id}-${i}` });
    await p.request({ method: 'GET', url: '/no/such/path/42' });
    const text = await scrape();
    const route = { route: '/v1/api-keys/:id', method: 'GET', status: '404' };
    expect(sample(text, 'platform_http_requests_total', route)).toBe(3);
    expect(sample(text, 'platform_http_requests_total', { route: '(unmatched)', status: '404' })).toBe(1);
    expect(text).not.toContain(id);
    expect(text).not.toContain('/no/such/path');
    const histogram = { route: '/v1/api-keys/:id', method: 'GET', status_class: '4xx' };
    expect(sample(text, 'platform_http_request_duration_seconds_count', histogram)).toBe(3);
    expect(sample(text, 'platform_http_request_duration_seconds_bucket', { ...histogram, le: '+Inf' })).toBe(
      3,
    );
  });

  it('counts 429s by reason', async () => {
    const k = await p.createKey({
      name: 'q',
      type: 'production',
      services: ['core'],
      role: 'Admin',
      dailyQuota: 1,
    });
    const statuses: number[] = [];
    for (let i = 0; i < 3; i++)
      statuses.push((await p.request({ method: 'GET', url: '/v1/usage', key: k.key })).statusCode);
    expect(statuses).toEqual([200, 429, 429]);
    const text = await scrape();
    expect(sample(text, 'platform_rate_limit_refusals_total', { reason: 'daily_quota' })).toBe(2);
    expect(sample(text, 'platform_http_requests_total', { route: '/v1/usage', status: '429' })).toBe(2);
  });

  it('workflow executions by status, queue depth and the oldest waiting job, read from the database', async () => {
    const row = (id: string, status: 'new' | 'running' | 'success', startedAt: string) => ({
      id,
      account_id: p.accountId,
      workflow_id: 'wf_metrics',
      workflow_version: 1,
      mode: 'manual',
      status,
      finished: status === 'success' ? (1 as const) : (0 as const),
      retry_of: null,
      trigger_data: '{}',
      run_data: null,
      error_message: null,
      response: null,
      wait_till: null,
      started_at: startedAt,
      stopped_at: null,
    });
    await p.ctx.db
      .insertInto('executions')
      .values([
        row('ex_m1', 'new', '2026-06-01T11:59:00.000Z'),
        row('ex_m2', 'new', '2026-06-01T11:59:30.000Z'),
        row('ex_m3', 'running', '2026-06-01T11:58:00.000Z'),
        row('ex_m4', 'success', '2026-06-01T11:50:00.000Z'),
      ])
      .execute();
    const text = await scrape();
    expect(sample(text, 'platform_workflow_executions', { status: 'new' })).toBe(2);
    expect(sample(text, 'platform_workflow_executions', { status: 'running' })).toBe(1);
    expect(sample(text, 'platform_workflow_executions', { status: 'success' })).toBe(1);
    expect(sample(text, 'platform_workflow_executions', { status: 'canceled' })).toBe(0);
    const queue = 'workflow-executions';
    expect(sample(text, 'platform_queue_jobs', { queue, state: 'waiting' })).toBe(2);
    expect(sample(text, 'platform_queue_jobs', { queue, state: 'active' })).toBe(1);
    expect(sample(text, 'platform_queue_jobs', { queue: 'document-processing', state: 'pending' })).toBe(0);
    expect(sample(text, 'platform_queue_oldest_waiting_seconds', { queue })).toBe(60);
    await p.ctx.db.deleteFrom('executions').where('workflow_id', '=', 'wf_metrics').execute();
    const after = await scrape();
    expect(sample(after, 'platform_queue_oldest_waiting_seconds', { queue })).toBe(0);
    expect(sample(after, 'platform_workflow_executions', { status: 'new' })).toBe(0);
  });

  it('process memory and the default Node metrics', async () => {
    const text = await scrape();
    expect(sample(text, 'process_resident_memory_bytes')).toBeGreaterThan(0);
    expect(sample(text, 'nodejs_heap_size_used_bytes')).toBeGreaterThan(0);
    expect(text).toContain('nodejs_eventloop_lag_seconds');
  });
});

describe('metrics on a port of their own', () => {
  it('serves /metrics there with no key, and not on the main port', async () => {
    const metricsPort = await freePort();
    const p = await createTestPlatform({
      dialect: 'sqlite',
      env: { METRICS_ENABLED: 'true', METRICS_PORT: String(metricsPort), METRICS_HOST: '127.0.0.1' },
    });
    try {
      // Built but not listening (a CLI command): the metrics port stays free.
      await expect(fetch(`http://127.0.0.1:${metricsPort}/metrics`)).rejects.toThrow();
      await p.app.listen({ port: 0, host: '127.0.0.1' });
      expect((await p.request({ method: 'GET', url: '/metrics' })).statusCode).toBe(404);
      await p.request({ method: 'GET', url: '/health', key: null });
      const res = await fetch(`http://127.0.0.1:${metricsPort}/metrics`);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
      const text = await res.text();
      expect(sample(text, 'platform_http_requests_total', { route: '/health', status: '200' })).toBe(1);
      expect(sample(text, 'platform_http_requests_total', { route: '(unmatched)', status: '404' })).toBe(1);
      expect((await fetch(`http://127.0.0.1:${metricsPort}/other`)).status).toBe(404);
    } finally {
      p.app.server.closeAllConnections();
      await p.close();
    }
    await expect(fetch(`http://127.0.0.1:${metricsPort}/metrics`)).rejects.toThrow();
  });
});

describe.runIf(await postgresAvailable())('database pool gauges', () => {
  it("report a real pg pool's open, idle and waiting clients", async () => {
    const pool = new pg.Pool({ connectionString: PG_URL, max: 2 });
    const registry = new Registry();
    registerPoolCollector(registry, () => pool);
    const a = await pool.connect();
    const b = await pool.connect();
    const third = pool.connect();
    try {
      let text = await registry.metrics();
      expect(sample(text, 'platform_db_pool_connections', { state: 'total' })).toBe(2);
      expect(sample(text, 'platform_db_pool_connections', { state: 'idle' })).toBe(0);
      expect(sample(text, 'platform_db_pool_connections', { state: 'waiting' })).toBe(1);
      a.release();
      (await third).release();
      b.release();
      text = await registry.metrics();
      expect(sample(text, 'platform_db_pool_connections', { state: 'idle' })).toBe(2);
      expect(sample(text, 'platform_db_pool_connections', { state: 'waiting' })).toBe(0);
    } finally {
      await pool.end();
    }
  });
});

describe.runIf(redisUp)('BullMQ queue gauges', () => {
  it('count the jobs the shared queue holds in Redis, by state', async () => {
    const prefix = uniqueName('q');
    const p = await createTestPlatform({
      dialect: 'sqlite',
      redis: true,
      env: { METRICS_ENABLED: 'true', QUEUE_PREFIX: prefix, WORKFLOW_WORKER: 'false' },
    });
    const redis = testRedis();
    const queue = new Queue('workflow-executions', { connection: redis, prefix });
    try {
      await queue.add('job', { executionId: 'ex_a' }, { jobId: 'ex_a' });
      await queue.add('job', { executionId: 'ex_b' }, { jobId: 'ex_b' });
      await queue.add('job', { executionId: 'ex_c' }, { jobId: 'ex_c', delay: 60_000 });
      const text = (await p.request({ method: 'GET', url: '/metrics' })).body;
      const labels = (state: string) => ({ queue: 'workflow-executions', state });
      expect(sample(text, 'platform_bullmq_jobs', labels('waiting'))).toBe(2);
      expect(sample(text, 'platform_bullmq_jobs', labels('delayed'))).toBe(1);
      expect(sample(text, 'platform_bullmq_jobs', labels('active'))).toBe(0);
      const docs = { queue: 'document-processing', state: 'waiting' };
      expect(sample(text, 'platform_bullmq_jobs', docs)).toBe(0);
    } finally {
      await queue.obliterate({ force: true });
      await queue.close();
      redis.disconnect();
      await p.close();
    }
  });
});
