import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOutboundHttp } from '../../../../core/http/outbound.js';
import { signOAuth2 } from '../../nodes/n8n/http-request/oauth2.js';
import { oauth2Config } from './config.js';
import { isFresh, mergeRefreshed, requestToken, TokenEndpointError } from './token-endpoint.js';

const client = { clientId: 'c', clientSecret: 's' };

describe('oauth2Config: n8n credential files fixed over the account fields', () => {
  it('a Google service type takes Google URLs and its own scopes, whatever the account says', () => {
    const { config, problems } = oauth2Config('googleDriveOAuth2Api', {
      ...client,
      authUrl: 'https://evil.test/auth',
      scope: 'mine',
    });
    expect(problems).toEqual([]);
    expect(config).toMatchObject({
      authUrl: 'https://accounts.google.com/o/oauth2/v2/auth',
      accessTokenUrl: 'https://oauth2.googleapis.com/token',
      authQueryParameters: 'access_type=offline&prompt=consent',
      authentication: 'body',
      grantType: 'authorizationCode',
    });
    expect(config.scope).toContain('https://www.googleapis.com/auth/drive.appdata');
  });

  it("Gmail's custom scopes, Linear's actor and admin scope, Microsoft's tenant URLs", () => {
    expect(oauth2Config('gmailOAuth2', { ...client }).config.scope).toContain('https://mail.google.com/');
    expect(
      oauth2Config('gmailOAuth2', { ...client, customScopes: 'true', enabledScopes: 'a b' }).config.scope,
    ).toBe('a b');
    const linear = oauth2Config('linearOAuth2Api', { ...client, actor: 'app', includeAdminScope: 'true' });
    expect(linear.config).toMatchObject({
      scope: 'read write issues:create comments:create admin',
      authQueryParameters: 'actor=app',
    });
    const ms = oauth2Config('microsoftOAuth2Api', {
      ...client,
      accessTokenUrl: 'https://login.microsoftonline.com/tenant-1/oauth2/v2.0/token',
    });
    expect(ms.config.accessTokenUrl).toContain('tenant-1');
    expect(ms.config.authUrl).toBe('https://login.microsoftonline.com/common/oauth2/v2.0/authorize');
  });

  it('names what an oAuth2Api credential lacks', () => {
    const { problems } = oauth2Config('oAuth2Api', {
      clientId: 'c',
      grantType: 'device',
      tokenExpiredStatusCode: '200',
      sendAdditionalBodyProperties: 'true',
      additionalBodyProperties: '[1]',
    });
    expect(problems.map((p) => p.field).sort()).toEqual([
      'data.accessTokenUrl',
      'data.additionalBodyProperties',
      'data.authUrl',
      'data.clientSecret',
      'data.grantType',
      'data.tokenExpiredStatusCode',
    ]);
    // PKCE: a public client without a secret.
    expect(
      oauth2Config('oAuth2Api', {
        clientId: 'c',
        grantType: 'pkce',
        authUrl: 'https://p.test/a',
        accessTokenUrl: 'https://p.test/t',
      }).problems,
    ).toEqual([]);
  });
});

describe('token answers', () => {
  let server: Server;
  let base = '';
  const answers: Array<{ status: number; type: string; body: string }> = [];
  const http = createOutboundHttp({ allowHosts: ['127.0.0.1'], timeoutMs: 2_000 });
  beforeAll(async () => {
    server = createServer((_req, res) => {
      const next = answers.shift() ?? { status: 500, type: 'text/plain', body: 'none' };
      res.writeHead(next.status, { 'content-type': next.type }).end(next.body);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  const config = () =>
    oauth2Config('oAuth2Api', {
      ...client,
      grantType: 'clientCredentials',
      accessTokenUrl: `${base}/token`,
    }).config;
  const now = new Date('2030-01-01T00:00:00Z');

  it('reads a form-encoded answer (as some providers send) and computes its expiry', async () => {
    answers.push({
      status: 200,
      type: 'application/x-www-form-urlencoded',
      body: 'access_token=a1&token_type=bearer&expires_in=60&extra=dropped',
    });
    const token = await requestToken(http, config(), { grant_type: 'client_credentials' }, now);
    expect(token).toEqual({
      access_token: 'a1',
      token_type: 'bearer',
      expires_in: 60,
      expires_at: '2030-01-01T00:01:00.000Z',
    });
    expect(isFresh(token, now)).toBe(true);
    expect(isFresh(token, new Date('2030-01-01T00:00:45Z'))).toBe(false);
  });

  it('a refusal names the status and a well-formed error code only', async () => {
    answers.push({ status: 400, type: 'application/json', body: '{"error":"<script>x</script>"}' });
    const refused = await requestToken(http, config(), { grant_type: 'client_credentials' }, now).catch(
      (e: unknown) => e,
    );
    expect(refused).toBeInstanceOf(TokenEndpointError);
    expect((refused as Error).message).toBe(
      'The OAuth2 token endpoint refused the client_credentials grant (HTTP 400)',
    );
    answers.push({ status: 200, type: 'application/json', body: '{"token_type":"bearer"}' });
    await expect(requestToken(http, config(), { grant_type: 'client_credentials' }, now)).rejects.toThrow(
      /HTTP 200/,
    );
  });

  it('a refresh without a new refresh token keeps the old one', () => {
    expect(
      mergeRefreshed(
        { access_token: 'a', refresh_token: 'r', expires_in: 10, expires_at: 'x' },
        { access_token: 'b' },
      ),
    ).toEqual({ access_token: 'b', refresh_token: 'r' });
  });
});

describe('signOAuth2 (n8n client sign)', () => {
  const req = () => ({ qs: {} as Record<string, unknown>, headers: {} as Record<string, string> });
  it('a bearer token is a header; another type goes in the query, not stored by caches', () => {
    const headers: Array<[string, string]> = [];
    const a = req();
    signOAuth2(a as never, 't1', 'bearer', (n, v) => headers.push([n, v]));
    expect(headers).toEqual([['authorization', 'Bearer t1']]);
    const b = req();
    signOAuth2(b as never, 't2', 'mac', () => undefined);
    expect(b.qs).toEqual({ access_token: 't2' });
    expect(b.headers).toEqual({ pragma: 'no-store', 'cache-control': 'no-store' });
  });
});
