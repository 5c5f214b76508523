import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { TestPlatform } from '../helpers/platform.js';
import { testDialects } from '../helpers/services.js';
import { asSession, memberSession, ownerSession, type Session } from '../portal/support.js';
import { FakeOAuth2 } from './support/fake-oauth2.js';
import { browserGet, confirmLink, HTML } from './support/oauth2-consent.js';
import { createCredential, workflowPlatform } from './support.js';

/**
 * The consent link is bound to who asked for it (review M4): a member's link opens only in that
 * member's signed-in browser; a key's link shows a confirmation naming the account, the credential
 * and the provider's host, and only this site's form goes on (a link scanner's GET spends nothing,
 * another site's auto-submitted form is refused); a typed credential's authorize URL stays on its
 * provider's host.
 */

const provider = new FakeOAuth2();
beforeAll(() => provider.start());
afterAll(() => provider.stop());
beforeEach(() => provider.reset());

describe.each(await testDialects())('OAuth2 consent links bound to their requester on %s', (dialect) => {
  let p: TestPlatform;
  let owner: Session;
  let developer: Session;
  beforeAll(async () => {
    p = await workflowPlatform(dialect, {}, { portal: true });
    owner = await ownerSession(p);
    developer = await memberSession(p, owner, `dev-${Math.random()}@example.test`, 'developer');
  });
  afterAll(() => p.close());

  const oauthData = (over: Record<string, string> = {}) => ({
    grantType: 'pkce',
    authUrl: `${provider.base}/authorize`,
    accessTokenUrl: `${provider.base}/token`,
    clientId: provider.clientId,
    clientSecret: provider.clientSecret,
    scope: 'read',
    ...over,
  });
  const get = (url: string, headers: Record<string, string> = {}) => {
    const link = new URL(url);
    return p.request({ method: 'GET', url: `${link.pathname}${link.search}`, key: null, headers });
  };

  it("a member's link opens only in that member's signed-in browser, and a refusal spends nothing", async () => {
    const created = await asSession(p, owner, {
      method: 'POST',
      url: '/api/v1/credentials',
      payload: { name: `member ${Math.random()}`, type: 'oAuth2Api', data: oauthData() },
    });
    expect(created.statusCode, created.body).toBe(201);
    const id = (created.json() as { id: string }).id;
    const started = await asSession(p, owner, {
      method: 'POST',
      url: `/api/v1/credentials/${id}/oauth2/authorize`,
    });
    expect(started.statusCode, started.body).toBe(200);
    const { authorizeUrl } = started.json() as { authorizeUrl: string };

    // Forwarded: no session, another member's session, an API key of the account.
    const forwarded: Array<Record<string, string>> = [
      {},
      { cookie: developer.cookie },
      { authorization: `Bearer ${p.adminKey}` },
      { cookie: 'platform_session=forged-value-that-is-no-session-at-all-0000000' },
    ];
    for (const headers of forwarded) {
      const refused = await get(authorizeUrl, headers);
      expect(refused.statusCode).toBe(403);
      expect(refused.headers.location).toBeUndefined();
      expect(refused.headers['set-cookie']).toBeUndefined();
      expect(refused.json()).toMatchObject({ error: true, code: 'FORBIDDEN' });
      expect(refused.json().message).toMatch(/signed-in member who asked for it/);
    }
    // The confirmation's POST is no way around it.
    const posted = await confirmLink(p, authorizeUrl, { cookie: developer.cookie });
    expect(posted.statusCode).toBe(403);
    expect(posted.headers.location).toBeUndefined();

    // The member who asked goes straight on, and the consent completes.
    const start = await get(authorizeUrl, { cookie: owner.cookie });
    expect(start.statusCode).toBe(302);
    const atProvider = new URL(String(start.headers.location));
    expect(`${atProvider.origin}${atProvider.pathname}`).toBe(`${provider.base}/authorize`);
    const cookie = String(start.headers['set-cookie']).split(';')[0] as string;
    const back = new URL((await browserGet(atProvider.toString())).location ?? '');
    const page = await p.request({
      method: 'GET',
      url: `${back.pathname}${back.search}`,
      key: null,
      headers: { cookie, accept: HTML },
    });
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('is connected');
  });

  it("a key's link shows a confirmation naming account, credential and provider host; a GET spends nothing", async () => {
    const name = `mallory cred ${Math.random()}`;
    const id = await createCredential(
      p,
      name,
      'oAuth2Api',
      oauthData({ authUrl: 'https://evil.example/authorize?x=1' }),
    );
    // An account's name is free text: the page shows it escaped.
    await p.ctx.db
      .updateTable('accounts')
      .set({ name: `<b>Mallory's</b> "shop" & co` })
      .where('id', '=', p.accountId)
      .execute();
    const started = await p.request({ method: 'POST', url: `/api/v1/credentials/${id}/oauth2/authorize` });
    const { authorizeUrl } = started.json() as { authorizeUrl: string };

    // A link scanner (or the person) looks twice: the same page, no redirect, no cookie, nothing spent.
    for (let look = 0; look < 2; look++) {
      const page = await get(authorizeUrl);
      expect(page.statusCode).toBe(200);
      expect(page.headers.location).toBeUndefined();
      expect(page.headers['set-cookie']).toBeUndefined();
      expect(page.headers['content-type']).toMatch(/^text\/html/);
      const csp = String(page.headers['content-security-policy']);
      expect(csp).toContain("default-src 'none'");
      expect(csp).toContain("form-action 'self' https://evil.example;");
      expect(csp).toContain("frame-ancestors 'none'");
      expect(page.headers['x-frame-options']).toBe('DENY');
      expect(page.body).toContain('<strong>evil.example</strong>');
      expect(page.body).toContain('Continue to evil.example');
      expect(page.body).toContain(`<strong>${name}</strong>`);
      // The author's text is shown, escaped: no markup of theirs, no script at all.
      expect(page.body).toContain(
        '<strong>&lt;b&gt;Mallory&#39;s&lt;/b&gt; &quot;shop&quot; &amp; co</strong>',
      );
      expect(page.body).not.toContain('<b>Mallory');
      expect(page.body).not.toMatch(/<script/i);
      expect(page.body).toContain('<form method="post" action="/oauth2-credential/start">');
    }

    // Another site's auto-submitted form, or one without an origin, is refused.
    const origin = new URL(p.ctx.config.PUBLIC_URL).origin;
    const foreign: Array<Record<string, string>> = [
      { origin: 'https://attacker.example', 'sec-fetch-site': 'cross-site' },
      { origin, 'sec-fetch-site': 'cross-site' },
      { origin: 'null' },
    ];
    for (const headers of foreign) {
      const refused = await confirmLink(p, authorizeUrl, headers);
      expect(refused.statusCode).toBe(403);
      expect(refused.headers.location).toBeUndefined();
      expect(refused.json()).toMatchObject({ error: true, code: 'FORBIDDEN' });
    }
    const noOrigin = await p.request({
      method: 'POST',
      url: '/oauth2-credential/start',
      key: null,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: `ticket=${new URL(authorizeUrl).searchParams.get('ticket')}`,
    });
    expect(noOrigin.statusCode).toBe(403);

    // The page's own button goes on, once.
    const go = await confirmLink(p, authorizeUrl);
    expect(go.statusCode).toBe(303);
    const to = new URL(String(go.headers.location));
    expect(to.host).toBe('evil.example');
    expect(to.searchParams.get('x')).toBe('1');
    expect(String(go.headers['set-cookie'])).toMatch(/^cred_oauth_/);
    const again = await confirmLink(p, authorizeUrl);
    expect(again.statusCode).toBe(400);
    expect(again.json()).toMatchObject({ error: true, code: 'VALIDATION_ERROR' });
    const body = await p.request({
      method: 'POST',
      url: '/oauth2-credential/start',
      key: null,
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin },
      payload: 'x'.repeat(2_000),
    });
    expect(body.statusCode).toBe(413);
  });

  it("a typed credential's authorize URL stays on its provider's host", async () => {
    const base = { clientId: 'c', clientSecret: 's' };
    for (const authUrl of [
      'https://evil.example/common/oauth2/v2.0/authorize',
      'http://login.microsoftonline.com/tenant/oauth2/v2.0/authorize',
    ]) {
      const refused = await p.request({
        method: 'POST',
        url: '/api/v1/credentials',
        payload: { name: `ms ${Math.random()}`, type: 'microsoftOAuth2Api', data: { ...base, authUrl } },
      });
      expect(refused.statusCode).toBe(400);
      expect(refused.json().details.fields).toEqual([
        {
          field: 'data.authUrl',
          message: "must be an https URL on login.microsoftonline.com (the type's provider)",
        },
      ]);
    }
    const tenant = await createCredential(p, `ms ${Math.random()}`, 'microsoftOAuth2Api', {
      ...base,
      authUrl: 'https://login.microsoftonline.com/tenant-1/oauth2/v2.0/authorize',
    });
    const patched = await p.request({
      method: 'PATCH',
      url: `/api/v1/credentials/${tenant}`,
      payload: { data: { authUrl: 'https://evil.example/' }, isPartialData: true },
    });
    expect(patched.statusCode).toBe(400);
    expect(patched.body).toContain('data.authUrl');
  });
});
