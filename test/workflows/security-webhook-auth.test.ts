import { createHmac } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestPlatform } from '../helpers/platform.js';
import { testDialects } from '../helpers/services.js';
import { activate, createCredential, createWorkflow, echoFlow, workflowPlatform } from './support.js';

async function executionCount(p: TestPlatform): Promise<number> {
  const res = await p.request({ method: 'GET', url: '/api/v1/executions?limit=250' });
  return (res.json() as { data: unknown[] }).data.length;
}

describe.each(await testDialects())('webhook authentication (audit items 4, 11, 24) on %s', (dialect) => {
  let p: TestPlatform;

  beforeAll(async () => {
    p = await workflowPlatform(dialect);
  });
  afterAll(async () => {
    await p.close();
  });

  const hook = (url: string, payload: unknown, headers: Record<string, string> = {}) =>
    p.app.inject({ method: 'POST', url, payload: payload as object, headers });

  describe('a platform key on a webhook is held to its scope and its daily quota', () => {
    beforeAll(async () => {
      await activate(p, await createWorkflow(p, echoFlow('keyed', { authentication: 'apiKey' })));
    });

    it('a Reader key and a key with only commerce:read are refused 403 and start nothing', async () => {
      const reader = await p.createKey({
        name: 'reader',
        type: 'development',
        role: 'Reader',
        services: ['workflow'],
      });
      const commerce = await p.createKey({
        name: 'commerce-read',
        type: 'development',
        role: 'Custom',
        services: ['commerce', 'workflow'],
        scopes: ['commerce:read'],
      });
      const before = await executionCount(p);
      for (const key of [reader.key, commerce.key]) {
        const res = await hook('/webhook/keyed', { message: 'x' }, { 'x-api-key': key });
        expect(res.statusCode).toBe(403);
        expect(res.json()).toMatchObject({ error: true, code: 'FORBIDDEN' });
      }
      const refused = await hook('/webhook/keyed', {}, { 'x-api-key': reader.key });
      expect(refused.json().details).toMatchObject({ requiredScope: 'workflow:write' });
      expect(await executionCount(p)).toBe(before);
    });

    it('counts against the key’s daily quota with X-RateLimit-* headers; past it 429', async () => {
      const writer = await p.createKey({
        name: 'writer',
        type: 'development',
        role: 'Writer',
        services: ['workflow'],
        dailyQuota: 3,
      });
      for (let i = 1; i <= 3; i++) {
        const res = await hook('/webhook/keyed', { message: `m${i}` }, { 'x-api-key': writer.key });
        expect(res.statusCode).toBe(200);
        expect(res.headers['x-ratelimit-limit']).toBe('3');
        expect(res.headers['x-ratelimit-remaining']).toBe(String(3 - i));
        expect(Number(res.headers['x-ratelimit-reset'])).toBeGreaterThan(0);
      }
      const before = await executionCount(p);
      const over = await hook('/webhook/keyed', { message: 'm4' }, { 'x-api-key': writer.key });
      expect(over.statusCode).toBe(429);
      expect(over.json()).toMatchObject({ error: true, code: 'RATE_LIMIT_EXCEEDED' });
      expect(over.headers['retry-after']).toBeDefined();
      expect(over.headers['x-ratelimit-remaining']).toBe('0');
      expect(await executionCount(p)).toBe(before);
      // The same key on the API is out of quota too: one ledger.
      const api = await p.request({ method: 'GET', url: '/api/v1/workflows', key: writer.key });
      expect(api.statusCode).toBe(429);
    });
  });

  describe('deduplication is per caller', () => {
    it('another key sending the same Idempotency-Key runs its own delivery, never gets the first answer', async () => {
      await activate(
        p,
        await createWorkflow(
          p,
          echoFlow('dedupe-keys', {
            authentication: 'apiKey',
            options: { dedupeKey: '={{ $json.headers["idempotency-key"] }}' },
          }),
        ),
      );
      const alice = await p.createKey({
        name: 'alice',
        type: 'development',
        role: 'Writer',
        services: ['workflow'],
      });
      const mallory = await p.createKey({
        name: 'mallory',
        type: 'development',
        role: 'Writer',
        services: ['workflow'],
      });
      const first = await hook(
        '/webhook/dedupe-keys',
        { message: 'alice secret' },
        { 'x-api-key': alice.key, 'idempotency-key': 'k-1' },
      );
      expect(first.json()).toMatchObject({ echoed: 'alice secret' });
      const other = await hook(
        '/webhook/dedupe-keys',
        { message: 'mallory' },
        { 'x-api-key': mallory.key, 'idempotency-key': 'k-1' },
      );
      expect(other.statusCode).toBe(200);
      expect(other.json()).toMatchObject({ echoed: 'mallory' });
      // The first caller's retry still gets its own first answer.
      const again = await hook(
        '/webhook/dedupe-keys',
        { message: 'changed' },
        { 'x-api-key': alice.key, 'idempotency-key': 'k-1' },
      );
      expect(again.json()).toMatchObject({ echoed: 'alice secret' });
    });

    it('without authentication, callers from another address do not share a key', async () => {
      await activate(
        p,
        await createWorkflow(
          p,
          echoFlow('dedupe-open', {
            options: { dedupeKey: '={{ $json.headers["idempotency-key"] }}' },
          }),
        ),
      );
      const from = (remoteAddress: string, message: string) =>
        p.app.inject({
          method: 'POST',
          url: '/webhook/dedupe-open',
          remoteAddress,
          payload: { message },
          headers: { 'idempotency-key': 'shared' },
        });
      expect((await from('203.0.113.1', 'first')).json()).toMatchObject({ echoed: 'first' });
      expect((await from('203.0.113.2', 'second')).json()).toMatchObject({ echoed: 'second' });
      expect((await from('203.0.113.1', 'third')).json()).toMatchObject({ echoed: 'first' });
    });
  });

  describe('HMAC webhooks: a signed timestamp bounds replays', () => {
    const secret = 'hmac-secret';
    const sign = (body: string, stamp?: string) =>
      createHmac('sha256', secret)
        .update(stamp === undefined ? body : `${stamp}.${body}`)
        .digest('base64');

    beforeAll(async () => {
      const cred = await createCredential(p, 'hmac', 'hmacSecret', { secret });
      await activate(
        p,
        await createWorkflow(
          p,
          echoFlow('signed', {
            authentication: 'hmac',
            credential: cred,
            options: { hmacHeader: 'X-Store-Hmac-SHA256' },
          }),
        ),
      );
      await activate(
        p,
        await createWorkflow(
          p,
          echoFlow('signed-strict', {
            authentication: 'hmac',
            credential: cred,
            options: { hmacHeader: 'X-Store-Hmac-SHA256', hmacRequireTimestamp: true },
          }),
        ),
      );
    });

    const post = (url: string, body: string, headers: Record<string, string>) =>
      p.app.inject({
        method: 'POST',
        url,
        payload: body,
        headers: { 'content-type': 'application/json', ...headers },
      });

    it('a fresh signed timestamp passes; a stale one, or one stripped, is refused', async () => {
      const body = JSON.stringify({ message: 'paid' });
      const now = String(Math.floor(p.clock.now().getTime() / 1000));
      const ok = await post('/webhook/signed', body, {
        'x-store-hmac-sha256': sign(body, now),
        'x-store-timestamp': now,
      });
      expect(ok.statusCode).toBe(200);
      expect(ok.json()).toMatchObject({ echoed: 'paid' });

      // The same captured delivery ten minutes later: refused.
      p.clock.advance(600);
      const replay = await post('/webhook/signed', body, {
        'x-store-hmac-sha256': sign(body, now),
        'x-store-timestamp': now,
      });
      expect(replay.statusCode).toBe(403);
      expect(replay.json()).toMatchObject({ code: 'FORBIDDEN' });
      // Dropping the timestamp does not help: the signature covered it.
      const stripped = await post('/webhook/signed', body, { 'x-store-hmac-sha256': sign(body, now) });
      expect(stripped.statusCode).toBe(403);
      // Senders without timestamps keep working where it is not required…
      const plain = await post('/webhook/signed', body, { 'x-store-hmac-sha256': sign(body) });
      expect(plain.statusCode).toBe(200);
      // …and are refused where it is.
      const strict = await post('/webhook/signed-strict', body, { 'x-store-hmac-sha256': sign(body) });
      expect(strict.statusCode).toBe(401);
      const fresh = String(Math.floor(p.clock.now().getTime() / 1000));
      const strictOk = await post('/webhook/signed-strict', body, {
        'x-store-hmac-sha256': sign(body, fresh),
        'x-store-timestamp': fresh,
      });
      expect(strictOk.statusCode).toBe(200);
    });
  });
});
