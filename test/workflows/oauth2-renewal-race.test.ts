import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createOutboundHttp } from '../../src/core/http/outbound.js';
import {
  OAuth2Tokens,
  RENEWAL_LEASE_SECONDS,
} from '../../src/modules/workflows/credentials/oauth2/access-tokens.js';
import { RenewalLease } from '../../src/modules/workflows/credentials/oauth2/renewal-lease.js';
import { CredentialStore } from '../../src/modules/workflows/credentials/store.js';
import type { TestPlatform } from '../helpers/platform.js';
import { testDialects } from '../helpers/services.js';
import { until } from '../helpers/until.js';
import { FakeOAuth2 } from './support/fake-oauth2.js';
import { connect } from './support/oauth2-consent.js';
import { createCredential, workflowPlatform } from './support.js';

/**
 * Token renewal across processes (review M3): two OAuth2Tokens on one database stand for two
 * processes (each has its own in-process sharing), against a provider that rotates refresh tokens,
 * so a second refresh with the spent one would fail. And a credential change (PATCH) made while a
 * renewal is in flight is kept: the token is stored by compare-and-swap.
 */

const provider = new FakeOAuth2();
beforeAll(() => provider.start());
afterAll(() => provider.stop());
beforeEach(() => provider.reset());

describe.each(await testDialects())('OAuth2 token renewal across processes on %s', (dialect) => {
  let p: TestPlatform;
  beforeAll(async () => {
    p = await workflowPlatform(dialect);
  });
  afterAll(() => p.close());

  const box = () => p.ctx.secrets.box('workflow-credentials');
  /** Another process's token store: its own renewal map, the same database. */
  const aProcess = (pause?: (ms: number) => Promise<void>) =>
    new OAuth2Tokens({
      store: new CredentialStore(p.ctx.db),
      lease: new RenewalLease(p.ctx.db),
      box: box(),
      clock: p.clock,
      http: createOutboundHttp({ allowHosts: ['127.0.0.1'], timeoutMs: 5_000 }),
      forgetRevealed: () => undefined,
      ...(pause ? { pause } : {}),
    });
  /** A process whose waits for another's renewal are counted (they still wait in real time). */
  const waitingProcess = () => {
    const counter = { waits: 0 };
    const tokens = aProcess(async (ms) => {
      counter.waits++;
      await new Promise((resolve) => setTimeout(resolve, ms));
    });
    return { tokens, counter };
  };
  const refreshes = () => provider.grants.filter((g) => g.grant_type === 'refresh_token');
  const stored = async (id: string) => {
    const row = await p.ctx.db
      .selectFrom('credentials')
      .select('data')
      .where('id', '=', id)
      .executeTakeFirstOrThrow();
    return JSON.parse(box().decrypt(row.data)) as Record<string, string>;
  };

  /** A connected authorization-code credential whose access token has expired. */
  async function expiredCredential(): Promise<string> {
    const id = await createCredential(p, `race ${Math.random()}`, 'oAuth2Api', {
      grantType: 'authorizationCode',
      authUrl: `${provider.base}/authorize`,
      accessTokenUrl: `${provider.base}/token`,
      clientId: provider.clientId,
      clientSecret: provider.clientSecret,
      authentication: 'header',
    });
    expect((await connect(p, provider, id)).page.statusCode).toBe(200);
    p.clock.advance(3_700);
    return id;
  }

  it('two processes renew once: the second waits for the first and signs with its token', async () => {
    provider.rotate = true;
    const id = await expiredCredential();
    provider.holdRefreshes = true;
    const first = aProcess().token(p.accountId, id);
    await until(() => refreshes().length === 1, 'the first process refreshing');
    const second = waitingProcess();
    const secondToken = second.tokens.token(p.accountId, id);
    await until(() => second.counter.waits > 0, 'the second process waiting for the renewal');
    provider.releaseRefreshes();
    const [a, b] = await Promise.all([first, secondToken]);
    expect(refreshes()).toHaveLength(1);
    expect(b.accessToken).toBe(a.accessToken);
    // Stored once: a third process signs with it, asking nothing.
    expect(JSON.parse((await stored(id)).oauthTokenData ?? '{}').access_token).toBe(a.accessToken);
    expect((await aProcess().token(p.accountId, id)).accessToken).toBe(a.accessToken);
    expect(refreshes()).toHaveLength(1);
    // Renewals hold nothing afterwards.
    expect(await p.ctx.db.selectFrom('credential_oauth_renewals').selectAll().execute()).toEqual([]);
  });

  it('a renewal left by a process that died is taken over when its lease ends', async () => {
    provider.rotate = true;
    const id = await expiredCredential();
    const now = p.clock.now();
    const leaseEnd = new Date(now.getTime() + RENEWAL_LEASE_SECONDS * 1000).toISOString();
    expect(await new RenewalLease(p.ctx.db).take(id, 'dead-process', now.toISOString(), leaseEnd)).toBe(true);
    const waiting = waitingProcess();
    const token = waiting.tokens.token(p.accountId, id);
    await until(() => waiting.counter.waits > 0, 'the process waiting on the dead lease');
    expect(refreshes()).toHaveLength(0);
    p.clock.advance(RENEWAL_LEASE_SECONDS + 1);
    expect((await token).accessToken).toMatch(/^at-/);
    expect(refreshes()).toHaveLength(1);
  });

  it('a PATCH of the client secret while a renewal is in flight is kept, and so is the new token', async () => {
    const id = await expiredCredential();
    provider.holdRefreshes = true;
    // The renewal read the credential before the PATCH and stores its token after it.
    const renewing = aProcess().token(p.accountId, id);
    await until(() => refreshes().length === 1, 'the renewal in flight');
    const patched = await p.request({
      method: 'PATCH',
      url: `/api/v1/credentials/${id}`,
      payload: { data: { clientSecret: 'rotated-secret' }, isPartialData: true },
    });
    expect(patched.statusCode, patched.body).toBe(200);
    provider.releaseRefreshes();
    const token = await renewing;
    const data = await stored(id);
    expect(data.clientSecret).toBe('rotated-secret');
    expect(JSON.parse(data.oauthTokenData ?? '{}').access_token).toBe(token.accessToken);
  });

  it('a credential write based on data read before a token was saved is refused, and read again', async () => {
    const id = await expiredCredential();
    const store = new CredentialStore(p.ctx.db);
    const before = await store.find(p.accountId, id);
    // A renewal stores its token after this write read the row.
    const token = await aProcess().token(p.accountId, id);
    const stale = await store.update(
      p.accountId,
      id,
      { data: box().encrypt(JSON.stringify({ clientId: 'x' })), updated_at: p.clock.now().toISOString() },
      before?.data,
    );
    expect(stale).toBe(false);
    expect(JSON.parse((await stored(id)).oauthTokenData ?? '{}').access_token).toBe(token.accessToken);
    // A PATCH made after the token was saved keeps it (it writes on the data it read).
    const patched = await p.request({
      method: 'PATCH',
      url: `/api/v1/credentials/${id}`,
      payload: { data: { scope: '' }, isPartialData: true },
    });
    expect(patched.statusCode, patched.body).toBe(200);
    expect(JSON.parse((await stored(id)).oauthTokenData ?? '{}').access_token).toBe(token.accessToken);
    // Deleting the credential takes a lease left behind with it.
    const now = p.clock.now().toISOString();
    await new RenewalLease(p.ctx.db).take(id, 'dead-process', now, '2999-01-01T00:00:00.000Z');
    expect((await p.request({ method: 'DELETE', url: `/api/v1/credentials/${id}` })).statusCode).toBe(200);
    expect(
      await p.ctx.db
        .selectFrom('credential_oauth_renewals')
        .selectAll()
        .where('credential_id', '=', id)
        .execute(),
    ).toEqual([]);
  });

  it('a token got for a client that a PATCH replaced meanwhile is not stored on the new client', async () => {
    const id = await expiredCredential();
    provider.holdRefreshes = true;
    const renewing = aProcess().token(p.accountId, id);
    await until(() => refreshes().length === 1, 'the renewal in flight');
    const patched = await p.request({
      method: 'PATCH',
      url: `/api/v1/credentials/${id}`,
      payload: { data: { clientId: 'another-client' }, isPartialData: true },
    });
    expect(patched.statusCode, patched.body).toBe(200);
    provider.releaseRefreshes();
    await renewing;
    const data = await stored(id);
    expect(data.clientId).toBe('another-client');
    expect(data.oauthTokenData).toBeUndefined();
  });
});
