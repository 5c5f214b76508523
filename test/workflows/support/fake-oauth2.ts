import { createHash, randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * An OAuth2 provider on loopback, speaking RFC 6749/7636 as providers do: /authorize redirects with a
 * code, /token grants client_credentials, authorization_code (with the PKCE check) and refresh_token,
 * and /api/me answers only a valid bearer token. Tests can expire every token, make the token
 * endpoint refuse, fail or hang, and read what it was sent.
 */
export class FakeOAuth2 {
  base = '';
  clientId = 'client-1';
  clientSecret = 'client-secret-xyz';
  /** 'ok', 'refuse' (400 invalid_grant), 'fail' (500) or 'hang' (never answers). */
  tokenMode: 'ok' | 'refuse' | 'fail' | 'hang' = 'ok';
  /** Whether a refresh answers a new refresh token (rotation): the one presented is spent. */
  rotate = false;
  /** Refresh requests wait (after being recorded) until `releaseRefreshes()`: a renewal in flight. */
  holdRefreshes = false;
  readonly grants: Array<{ grant_type: string; auth: 'header' | 'body'; form: Record<string, string> }> = [];
  readonly apiCalls: Array<{ authorization: string | undefined; url: string }> = [];
  private server: Server | null = null;
  private readonly codes = new Map<
    string,
    { redirectUri: string; challenge: string | null; scope: string }
  >();
  private readonly access = new Set<string>();
  private readonly refresh = new Set<string>();
  private readonly hanging = new Set<ServerResponse>();
  private held: Array<() => void> = [];

  async start(): Promise<void> {
    this.server = createServer((req, res) => void this.handle(req, res));
    await new Promise<void>((resolve) => this.server?.listen(0, '127.0.0.1', resolve));
    this.base = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  async stop(): Promise<void> {
    this.releaseRefreshes();
    for (const res of this.hanging) res.destroy();
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => this.server?.close(() => resolve()));
  }

  reset(): void {
    this.tokenMode = 'ok';
    this.rotate = false;
    this.releaseRefreshes();
    this.grants.length = 0;
    this.apiCalls.length = 0;
  }

  /** Answers the held refresh requests, and holds no more. */
  releaseRefreshes(): void {
    this.holdRefreshes = false;
    for (const go of this.held.splice(0)) go();
  }

  /** Every access token issued so far stops working (the API answers 401). */
  expireAll(): void {
    this.access.clear();
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', this.base);
    if (url.pathname === '/authorize') return this.authorize(url, res);
    if (url.pathname === '/token' && req.method === 'POST') return this.token(req, res);
    if (url.pathname === '/api/me') {
      const authorization = req.headers.authorization;
      this.apiCalls.push({ authorization, url: req.url ?? '' });
      const token = authorization?.startsWith('Bearer ')
        ? authorization.slice(7)
        : url.searchParams.get('access_token');
      if (!token || !this.access.has(token))
        return json(res, 401, { error: 'invalid_token', echo: authorization });
      return json(res, 200, { ok: true, user: 'ada' });
    }
    json(res, 404, { error: 'not_found' });
  }

  private authorize(url: URL, res: ServerResponse): void {
    const redirectUri = url.searchParams.get('redirect_uri') ?? '';
    if (url.searchParams.get('client_id') !== this.clientId || !redirectUri) {
      json(res, 400, { error: 'invalid_client' });
      return;
    }
    const code = randomBytes(12).toString('hex');
    this.codes.set(code, {
      redirectUri,
      challenge: url.searchParams.get('code_challenge'),
      scope: url.searchParams.get('scope') ?? '',
    });
    const back = new URL(redirectUri);
    back.searchParams.set('code', code);
    back.searchParams.set('state', url.searchParams.get('state') ?? '');
    res.writeHead(302, { location: back.toString() }).end();
  }

  private async token(req: IncomingMessage, res: ServerResponse): Promise<void> {
    let text = '';
    for await (const chunk of req) text += chunk;
    const form = Object.fromEntries(new URLSearchParams(text));
    const basic = req.headers.authorization?.startsWith('Basic ')
      ? Buffer.from(req.headers.authorization.slice(6), 'base64').toString()
      : null;
    const auth = basic ? 'header' : 'body';
    this.grants.push({ grant_type: form.grant_type ?? '', auth, form });
    if (this.holdRefreshes && form.grant_type === 'refresh_token')
      await new Promise<void>((resolve) => this.held.push(resolve));
    if (this.tokenMode === 'hang') {
      this.hanging.add(res);
      return;
    }
    if (this.tokenMode === 'fail') return json(res, 500, { error: 'server_error' });
    if (this.tokenMode === 'refuse')
      return json(res, 400, { error: 'invalid_grant', error_description: `bad ${form.client_secret ?? ''}` });
    const [id, secret] = basic ? basic.split(':') : [form.client_id, form.client_secret];
    if (id !== this.clientId || secret !== this.clientSecret)
      return json(res, 401, { error: 'invalid_client' });
    if (form.grant_type === 'client_credentials') return json(res, 200, this.issue(false));
    if (form.grant_type === 'authorization_code') {
      const code = this.codes.get(form.code ?? '');
      this.codes.delete(form.code ?? '');
      if (!code || code.redirectUri !== form.redirect_uri) return json(res, 400, { error: 'invalid_grant' });
      if (code.challenge) {
        const s256 = createHash('sha256')
          .update(form.code_verifier ?? '')
          .digest('base64url');
        if (s256 !== code.challenge) return json(res, 400, { error: 'invalid_grant', reason: 'pkce' });
      }
      return json(res, 200, this.issue(true));
    }
    if (form.grant_type === 'refresh_token') {
      if (!this.refresh.has(form.refresh_token ?? '')) return json(res, 400, { error: 'invalid_grant' });
      if (this.rotate) this.refresh.delete(form.refresh_token ?? '');
      return json(res, 200, this.issue(this.rotate));
    }
    json(res, 400, { error: 'unsupported_grant_type' });
  }

  private issue(withRefresh: boolean): Record<string, unknown> {
    const access = `at-${randomBytes(10).toString('hex')}`;
    this.access.add(access);
    const out: Record<string, unknown> = { access_token: access, token_type: 'Bearer', expires_in: 3600 };
    if (withRefresh) {
      const refresh = `rt-${randomBytes(10).toString('hex')}`;
      this.refresh.add(refresh);
      out.refresh_token = refresh;
    }
    return out;
  }
}

function json(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
}
