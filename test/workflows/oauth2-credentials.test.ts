import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { otherAccountKey } from '../helpers/accounts.js';
import type { TestPlatform } from '../helpers/platform.js';
import { testDialects } from '../helpers/services.js';
import { runNode } from './db-support.js';
import { runAgentWithTool } from './support/ai-agent-run.js';
import { LC } from './support/ai-workflow.js';
import { FakeOAuth2 } from './support/fake-oauth2.js';
import { completion, FakeOpenAi, toolCalls } from './support/fake-openai.js';
import { browserGet, connect, HTML, openLink as openLinkOf } from './support/oauth2-consent.js';
import { createCredential, workflowPlatform } from './support.js';

/**
 * n8n's OAuth2 credentials: client credentials fetched on first use and renewed; the authorization-code
 * consent (PKCE) through the platform's start link and callback, followed by hand as a browser would;
 * refresh on expiry and on 401; the attacks on the callback (wrong, reused, expired state, another
 * browser, another account's credential); provider errors and a provider that hangs.
 */

const provider = new FakeOAuth2();
const openai = new FakeOpenAi();
beforeAll(async () => {
  await provider.start();
  await openai.start();
});
afterAll(async () => {
  await provider.stop();
  await openai.stop();
});
beforeEach(() => {
  provider.reset();
  openai.reset();
});

describe.each(await testDialects())('OAuth2 credentials on %s', (dialect) => {
  let p: TestPlatform;
  beforeAll(async () => {
    // A short outbound limit: the hanging provider must end a run in bounded time.
    p = await workflowPlatform(dialect, { OUTBOUND_TIMEOUT_MS: '1500' });
  });
  afterAll(() => p.close());

  const oauthData = (over: Record<string, string> = {}) => ({
    grantType: 'pkce',
    authUrl: `${provider.base}/authorize`,
    accessTokenUrl: `${provider.base}/token`,
    clientId: provider.clientId,
    clientSecret: provider.clientSecret,
    scope: 'read write',
    authentication: 'header',
    ...over,
  });

  const callApi = (credentialId: string, type = 'oAuth2Api', predefined = false) =>
    runNode(p, {
      type: 'httpRequest',
      typeVersion: 4.2,
      parameters: {
        method: 'GET',
        url: `${provider.base}/api/me`,
        ...(predefined
          ? { authentication: 'predefinedCredentialType', nodeCredentialType: type }
          : { authentication: 'genericCredentialType', genericAuthType: type }),
        options: {},
      },
      credentials: { [type]: { id: credentialId, name: 'oauth' } },
    });

  const consent = (credentialId: string, opts: { key?: string; dropCookie?: boolean } = {}) =>
    connect(p, provider, credentialId, opts);
  const openLink = (authorizeUrl: string) => openLinkOf(p, authorizeUrl);

  it('client credentials: fetched on first use, cached sealed, renewed after a 401, client auth in the body', async () => {
    const id = await createCredential(p, `cc ${Math.random()}`, 'oAuth2Api', {
      grantType: 'clientCredentials',
      accessTokenUrl: `${provider.base}/token`,
      clientId: provider.clientId,
      clientSecret: provider.clientSecret,
      authentication: 'body',
      scope: 'api',
    });
    const first = await callApi(id);
    expect(first.error).toBeUndefined();
    expect(first.out).toEqual([{ ok: true, user: 'ada' }]);
    expect(provider.grants).toHaveLength(1);
    expect(provider.grants[0]).toMatchObject({
      grant_type: 'client_credentials',
      auth: 'body',
      form: { scope: 'api', client_id: provider.clientId },
    });
    expect(provider.apiCalls[0]?.authorization).toMatch(/^Bearer at-/);

    const second = await callApi(id);
    expect(second.error).toBeUndefined();
    expect(provider.grants).toHaveLength(1);

    provider.expireAll();
    const third = await callApi(id);
    expect(third.error).toBeUndefined();
    expect(third.out).toEqual([{ ok: true, user: 'ada' }]);
    expect(provider.grants.map((g) => g.grant_type)).toEqual(['client_credentials', 'client_credentials']);
    expect(provider.apiCalls.map((c) => c.authorization === provider.apiCalls[0]?.authorization)).toEqual([
      true,
      true,
      true,
      false,
    ]);
    // Nothing of the token in what the API shows of the credential or the execution.
    const shown = await p.request({ method: 'GET', url: `/api/v1/credentials/${id}` });
    expect(shown.body).not.toMatch(/at-|secret/);
    const token = provider.apiCalls.at(-1)?.authorization?.slice(7) as string;
    expect(JSON.stringify(third.execution)).not.toContain(token);
  });

  it('the consent with PKCE stores the tokens; the node signs with them and refreshes on 401 and on expiry', async () => {
    const id = await createCredential(p, `pkce ${Math.random()}`, 'oAuth2Api', oauthData());
    const { atProvider, page } = await consent(id);
    expect(atProvider.searchParams.get('code_challenge_method')).toBe('S256');
    expect(atProvider.searchParams.get('scope')).toBe('read write');
    expect(page.statusCode).toBe(200);
    expect(page.headers['content-type']).toMatch(/text\/html/);
    expect(page.headers['content-security-policy']).toMatch(/default-src 'none'/);
    expect(page.body).toContain('is connected');
    expect(String(page.headers['set-cookie'])).toMatch(/Max-Age=0/);
    const exchange = provider.grants.find((g) => g.grant_type === 'authorization_code');
    expect(exchange).toMatchObject({ auth: 'header' });
    expect(exchange?.form.code_verifier).toMatch(/^[A-Za-z0-9_-]{43}$/);

    const run = await callApi(id);
    expect(run.error).toBeUndefined();
    expect(run.out).toEqual([{ ok: true, user: 'ada' }]);

    provider.expireAll();
    const afterExpiry = await callApi(id);
    expect(afterExpiry.error).toBeUndefined();
    expect(provider.grants.filter((g) => g.grant_type === 'refresh_token')).toHaveLength(1);

    // Past expires_in, the token is renewed before the call (no 401 needed).
    const calls = provider.apiCalls.length;
    p.clock.advance(3_700);
    const later = await callApi(id);
    expect(later.error).toBeUndefined();
    expect(provider.grants.filter((g) => g.grant_type === 'refresh_token')).toHaveLength(2);
    expect(provider.apiCalls.length).toBe(calls + 1);
  });

  it('the HTTP Request tool signs with an oAuth2Api credential and renews it on 401', async () => {
    const openAiCred = await createCredential(p, `openai ${Math.random()}`, 'openAiApi', {
      apiKey: 'sk-test',
      url: `${openai.base}/v1`,
    });
    const cred = await createCredential(p, `tool cc ${Math.random()}`, 'oAuth2Api', {
      ...oauthData({ grantType: 'clientCredentials' }),
    });
    await callApi(cred);
    provider.expireAll();
    openai.queue(toolCalls([{ id: 'c1', name: 'me', arguments: '{}' }]), completion('Done.'));
    const { execution } = await runAgentWithTool(
      p,
      openAiCred,
      {
        name: 'me',
        type: `${LC}.toolHttpRequest`,
        typeVersion: 1.1,
        parameters: {
          toolDescription: 'Who am I',
          url: `${provider.base}/api/me`,
          authentication: 'genericCredentialType',
          genericAuthType: 'oAuth2Api',
        },
        credentials: { oAuth2Api: { id: cred, name: 'tool cc' } },
      } as never,
      { typeVersion: 2, text: 'who am I' },
    );
    expect(execution.data.resultData.error ?? null).toBeNull();
    // The stale token got 401, a new one was fetched, the call went again.
    expect(provider.apiCalls.map((c) => c.authorization?.slice(0, 10))).toHaveLength(3);
    expect(provider.grants.map((g) => g.grant_type)).toEqual(['client_credentials', 'client_credentials']);
    expect(JSON.stringify(openai.requests)).toContain('ada');
  });

  it('a predefined OAuth2 type (microsoftOAuth2Api with its tenant URLs) signs as the generic one', async () => {
    const tenantAuthorize = 'https://login.microsoftonline.com/tenant-1/oauth2/v2.0/authorize';
    const id = await createCredential(p, `ms ${Math.random()}`, 'microsoftOAuth2Api', {
      clientId: provider.clientId,
      clientSecret: provider.clientSecret,
      authUrl: tenantAuthorize,
      accessTokenUrl: `${provider.base}/token`,
      scope: 'User.Read',
    });
    const { atProvider, page } = await consent(id);
    expect(`${atProvider.origin}${atProvider.pathname}`).toBe(tenantAuthorize);
    // n8n's fixed values for the type: its query parameters and client authentication in the body.
    expect(atProvider.searchParams.get('response_mode')).toBe('query');
    expect(atProvider.searchParams.get('code_challenge')).toBeNull();
    expect(page.statusCode).toBe(200);
    expect(provider.grants.at(-1)).toMatchObject({ grant_type: 'authorization_code', auth: 'body' });
    const run = await callApi(id, 'microsoftOAuth2Api', true);
    expect(run.error).toBeUndefined();
    expect(run.out).toEqual([{ ok: true, user: 'ada' }]);
  });

  it("the Google family goes to Google's URLs with its own scopes", async () => {
    const id = await createCredential(p, `sheets ${Math.random()}`, 'googleSheetsOAuth2Api', {
      clientId: 'g-client',
      clientSecret: 'g-secret',
    });
    const started = await p.request({ method: 'POST', url: `/api/v1/credentials/${id}/oauth2/authorize` });
    const start = await openLink((started.json() as { authorizeUrl: string }).authorizeUrl);
    const to = new URL(String(start.headers.location));
    expect(to.origin + to.pathname).toBe('https://accounts.google.com/o/oauth2/v2/auth');
    expect(to.searchParams.get('scope')).toBe(
      'https://www.googleapis.com/auth/drive.file https://www.googleapis.com/auth/spreadsheets',
    );
    expect(to.searchParams.get('access_type')).toBe('offline');
    expect(to.searchParams.get('client_id')).toBe('g-client');
  });

  it('refuses a wrong state, a reused state, an expired state and another browser', async () => {
    const id = await createCredential(p, `attack ${Math.random()}`, 'oAuth2Api', oauthData());
    // Reused: the callback a second time.
    const done = await consent(id);
    expect(done.page.statusCode).toBe(200);
    const again = await p.request({
      method: 'GET',
      url: `${done.callback.pathname}${done.callback.search}`,
      key: null,
      headers: { cookie: done.cookie, accept: HTML },
    });
    expect(again.statusCode).toBe(400);
    expect(again.body).toMatch(/not valid or was already used/);

    // Another browser (no cookie): refused, and the flow is spent.
    const other = await consent(id, { dropCookie: true });
    expect(other.page.statusCode).toBe(403);
    expect(other.page.body).toMatch(/did not start this connection/);

    // Wrong state: a forged secret for a real flow's id matches nothing and spends nothing (whoever
    // saw the flow id cannot cancel the consent); the real callback then connects.
    const started = await p.request({ method: 'POST', url: `/api/v1/credentials/${id}/oauth2/authorize` });
    const link = new URL((started.json() as { authorizeUrl: string }).authorizeUrl);
    const start = await openLink(link.toString());
    const cookie = String(start.headers['set-cookie']).split(';')[0] as string;
    const atProvider = new URL(String(start.headers.location));
    const state = atProvider.searchParams.get('state') as string;
    const returned = new URL(
      (await browserGet(`${provider.base}/authorize${atProvider.search}`)).location ?? '',
    );
    const code = returned.searchParams.get('code') as string;
    const forged = `${state.split('.')[0]}.AAAA${state.slice(state.indexOf('.') + 5)}`;
    const wrong = await p.request({
      method: 'GET',
      url: `/oauth2-credential/callback?code=${code}&state=${encodeURIComponent(forged)}`,
      key: null,
      headers: { cookie },
    });
    // A caller that is not a browser gets the platform's error shape.
    expect(wrong.statusCode).toBe(400);
    expect(wrong.json()).toMatchObject({ error: true, code: 'VALIDATION_ERROR' });
    const real = await p.request({
      method: 'GET',
      url: `/oauth2-credential/callback?code=${code}&state=${encodeURIComponent(state)}`,
      key: null,
      headers: { cookie, accept: HTML },
    });
    expect(real.statusCode).toBe(200);
    expect(real.body).toContain('is connected');
    // The start link itself is single use.
    const reopened = await p.request({ method: 'GET', url: `${link.pathname}${link.search}`, key: null });
    expect(reopened.statusCode).toBe(400);
    expect(reopened.json()).toMatchObject({ error: true, code: 'VALIDATION_ERROR' });

    // Expired: the browser comes back after the 10 minutes.
    const late = await p.request({ method: 'POST', url: `/api/v1/credentials/${id}/oauth2/authorize` });
    const lateStart = await openLink((late.json() as { authorizeUrl: string }).authorizeUrl);
    const back = await browserGet(String(lateStart.headers.location));
    p.clock.advance(601);
    const callback = new URL(back.location as string);
    const expired = await p.request({
      method: 'GET',
      url: `${callback.pathname}${callback.search}`,
      key: null,
      headers: { cookie: String(lateStart.headers['set-cookie']).split(';')[0] as string, accept: HTML },
    });
    expect(expired.statusCode).toBe(400);
    expect(expired.body).toMatch(/expired/);
    // None of the refused attempts reached the token endpoint: only the two consents did.
    expect(provider.grants.filter((g) => g.grant_type === 'authorization_code')).toHaveLength(2);
  });

  it("another account's credential is not found; a key that does not own it may not connect it", async () => {
    const id = await createCredential(p, `mine ${Math.random()}`, 'oAuth2Api', oauthData());
    const stranger = await otherAccountKey(p);
    const foreign = await p.request({
      method: 'POST',
      url: `/api/v1/credentials/${id}/oauth2/authorize`,
      key: stranger,
    });
    expect(foreign.statusCode).toBe(404);
    expect(foreign.json()).toMatchObject({ error: true, code: 'CREDENTIAL_NOT_FOUND' });
    const writer = await p.createKey({
      name: `writer ${Math.random()}`,
      type: 'production',
      services: ['workflow'],
      role: 'Writer',
    });
    const notOwner = await p.request({
      method: 'POST',
      url: `/api/v1/credentials/${id}/oauth2/authorize`,
      key: writer.key,
    });
    expect(notOwner.statusCode).toBe(403);
    expect(notOwner.json()).toMatchObject({ error: true, code: 'FORBIDDEN' });
    // A client-credentials credential needs no consent; a non-OAuth2 credential has none.
    const cc = await createCredential(p, `cc2 ${Math.random()}`, 'oAuth2Api', {
      ...oauthData({ grantType: 'clientCredentials' }),
    });
    const noConsent = await p.request({ method: 'POST', url: `/api/v1/credentials/${cc}/oauth2/authorize` });
    expect(noConsent.statusCode).toBe(400);
    const bearer = await createCredential(p, `b ${Math.random()}`, 'httpBearerAuth', { token: 't' });
    const notOAuth = await p.request({
      method: 'POST',
      url: `/api/v1/credentials/${bearer}/oauth2/authorize`,
    });
    expect(notOAuth.statusCode).toBe(400);
  });

  it('refuses token data from callers, and an incomplete OAuth2 credential, naming the fields', async () => {
    const withTokens = await p.request({
      method: 'POST',
      url: '/api/v1/credentials',
      payload: {
        name: `t ${Math.random()}`,
        type: 'oAuth2Api',
        data: { ...oauthData(), oauthTokenData: { access_token: 'planted' } },
      },
    });
    expect(withTokens.statusCode).toBe(400);
    expect(withTokens.body).toContain('data.oauthTokenData');
    const incomplete = await p.request({
      method: 'POST',
      url: '/api/v1/credentials',
      payload: {
        name: `i ${Math.random()}`,
        type: 'oAuth2Api',
        data: {
          clientId: 'c',
          grantType: 'authorizationCode',
          accessTokenUrl: 'ftp://x',
          authentication: 'x',
        },
      },
    });
    expect(incomplete.statusCode).toBe(400);
    const fields = (
      incomplete.json() as { details: { fields: Array<{ field: string }> } }
    ).details.fields.map((f) => f.field);
    expect(fields).toEqual(
      expect.arrayContaining([
        'data.accessTokenUrl',
        'data.authUrl',
        'data.clientSecret',
        'data.authentication',
      ]),
    );
    const schema = await p.request({ method: 'GET', url: '/api/v1/credentials/schema/oAuth2Api' });
    expect(schema.statusCode).toBe(200);
    expect(Object.keys((schema.json() as { properties: object }).properties)).not.toContain('oauthTokenData');
  });

  it('provider errors: a refused code, a refused client-credentials grant, a 500; none leaks the secret', async () => {
    const id = await createCredential(p, `refused ${Math.random()}`, 'oAuth2Api', oauthData());
    provider.tokenMode = 'refuse';
    const { page } = await consent(id);
    expect(page.statusCode).toBe(502);
    expect(page.body).toMatch(/refused the authorization_code grant \(HTTP 400, invalid_grant\)/);
    expect(page.body).not.toContain(provider.clientSecret);

    const notConnected = await callApi(id);
    expect(notConnected.error).toMatch(/is not connected yet/);

    const cc = await createCredential(p, `cc refused ${Math.random()}`, 'oAuth2Api', {
      ...oauthData({ grantType: 'clientCredentials', authentication: 'body' }),
    });
    const refused = await callApi(cc);
    expect(refused.error).toMatch(/refused the client_credentials grant \(HTTP 400, invalid_grant\)/);
    expect(JSON.stringify(refused.execution)).not.toContain(provider.clientSecret);
    provider.tokenMode = 'fail';
    const failed = await callApi(cc);
    expect(failed.error).toMatch(/HTTP 500/);
  });

  it('a provider that never answers ends the run within the outbound time limit', async () => {
    const cc = await createCredential(p, `hang ${Math.random()}`, 'oAuth2Api', {
      ...oauthData({ grantType: 'clientCredentials' }),
    });
    provider.tokenMode = 'hang';
    const started = Date.now();
    const run = await callApi(cc);
    expect(run.error).toMatch(/could not be reached: .*timed out/);
    expect(Date.now() - started).toBeLessThan(10_000);
  });

  it('the token URL goes through the outbound guard', async () => {
    const cc = await createCredential(p, `ssrf ${Math.random()}`, 'oAuth2Api', {
      ...oauthData({ grantType: 'clientCredentials', accessTokenUrl: 'http://169.254.169.254/latest/token' }),
    });
    const run = await callApi(cc);
    expect(run.error).toMatch(/could not be reached/);
    expect(provider.grants).toHaveLength(0);
  });
});
