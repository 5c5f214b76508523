import { createHash, randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';

export interface SeenRequest {
  method: string;
  path: string;
  query: URLSearchParams;
  headers: IncomingMessage['headers'];
  body: string;
  /** performance.now() when the request arrived. */
  at: number;
}

/** A scripted answer for the next API request: an envelope error, an HTTP status, a delay. */
export interface ScriptedAnswer {
  errorCode?: number;
  errorStatus?: string;
  throttleSeconds?: number;
  httpStatus?: number;
  delayMs?: number;
  /** Pads the answer's envelope with this many bytes (an oversized answer). */
  padBytes?: number;
}

export const FAKE_API_KEY = 'fake-game-api-key';
export const FAKE_CLIENT_ID = '4242';
export const FAKE_CLIENT_SECRET = 'fake-client-secret';

interface Token {
  membershipId: string;
  expired: boolean;
}

/** A code issued on consent, with the PKCE challenge and redirect_uri of its authorize request. */
interface IssuedCode {
  membershipId: string;
  codeChallenge: string;
  redirectUri: string | null;
}

/** The cookie that says who is signed in at the fake in a browser (Bungie's own session). */
export const FAKE_SESSION_COOKIE = 'bungie_user';
/** Where the fake sends the browser back when the authorize request names no redirect_uri. */
export const FAKE_REGISTERED_REDIRECT = 'http://platform.test/game/oauth/callback';

/**
 * A local stand-in for the game platform: the real envelope, the OAuth authorize endpoint (the
 * signed-in user consents at once; PKCE S256 required), the token endpoint (Bungie's token shape,
 * client secret by HTTP Basic, the code_verifier checked against the code's challenge), HTTP-200
 * errors, throttling with ThrottleSeconds, expired tokens. It records every request it receives,
 * as sent (path not normalised), with its arrival time.
 */
export class FakeGamePlatform {
  readonly requests: SeenRequest[] = [];
  readonly script: ScriptedAnswer[] = [];
  manifestVersion = '1.0.0';
  /** Manifest definition tables, by entity type then hash (served as content files). */
  definitions: Record<string, Record<string, unknown>> = {
    DestinyInventoryItemDefinition: {
      '1363886209': { hash: 1363886209, displayProperties: { name: 'Gjallarhorn' } },
      '3628991658': { hash: 3628991658, displayProperties: { name: 'Graviton Lance' } },
    },
    DestinyClassDefinition: { '671679327': { hash: 671679327, displayProperties: { name: 'Hunter' } } },
  };
  /** Lifetime the token endpoint announces for access tokens. */
  accessExpiresIn = 3600;
  refuseRefresh = false;
  refreshDelayMs = 0;
  refreshes = 0;
  /** TCP connections clients opened to this fake. */
  connections = 0;
  private readonly codes = new Map<string, IssuedCode>();
  private readonly accessTokens = new Map<string, Token>();
  private readonly refreshTokens = new Map<string, string>();
  readonly issued: string[] = [];
  private server: Server | null = null;
  baseUrl = '';

  async start(): Promise<this> {
    this.server = createServer((req, res) => {
      void this.handle(req, res);
    });
    this.server.on('connection', () => {
      this.connections += 1;
    });
    await new Promise<void>((resolve) => this.server?.listen(0, '127.0.0.1', resolve));
    const { port } = this.server.address() as AddressInfo;
    this.baseUrl = `http://127.0.0.1:${port}`;
    return this;
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => this.server?.close(() => resolve()));
  }

  /** Settings that point a platform at this fake. */
  env(overrides: Record<string, string> = {}): Record<string, string> {
    return {
      GAME_API_URL: `${this.baseUrl}/Platform`,
      GAME_API_KEY: FAKE_API_KEY,
      GAME_OAUTH_CLIENT_ID: FAKE_CLIENT_ID,
      GAME_OAUTH_CLIENT_SECRET: FAKE_CLIENT_SECRET,
      GAME_OAUTH_AUTHORIZE_URL: `${this.baseUrl}/en/OAuth/Authorize`,
      GAME_OAUTH_TOKEN_URL: `${this.baseUrl}/Platform/App/OAuth/Token/`,
      ...overrides,
    };
  }

  expireAccessTokens(): void {
    for (const token of this.accessTokens.values()) token.expired = true;
  }

  apiRequests(): SeenRequest[] {
    return this.requests.filter((r) => !r.path.includes('/OAuth/'));
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const at = performance.now();
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const url = new URL(req.url ?? '/', 'http://fake');
    const seen: SeenRequest = {
      method: req.method ?? 'GET',
      // As received: URL parsing would resolve dot segments and hide what the client sent.
      path: (req.url ?? '/').split('?')[0] ?? '/',
      query: url.searchParams,
      headers: req.headers,
      body: Buffer.concat(chunks).toString('utf8'),
      at,
    };
    this.requests.push(seen);
    if (url.pathname === '/Platform/App/OAuth/Token/') return this.token(seen, res);
    if (url.pathname === '/en/OAuth/Authorize') return this.authorize(seen, res);
    if (url.pathname.startsWith('/common/destiny2_content/json/')) return this.contentFile(seen, res);
    const scripted = this.script.shift();
    if (scripted?.delayMs) await sleep(scripted.delayMs);
    if (req.headers['x-api-key'] !== FAKE_API_KEY) {
      return send(res, 401, envelope(null, 2102, 'ApiKeyMissingFromRequest'));
    }
    if (scripted?.errorCode !== undefined) {
      return send(
        res,
        scripted.httpStatus ?? 200,
        envelope(null, scripted.errorCode, scripted.errorStatus ?? 'Error', scripted.throttleSeconds ?? 0),
      );
    }
    const [status, answer] = this.route(seen);
    if (scripted?.padBytes) (answer as Record<string, unknown>).Padding = 'x'.repeat(scripted.padBytes);
    send(res, status, answer);
  }

  private route(seen: SeenRequest): [number, unknown] {
    const parts = seen.path.split('/').filter(Boolean).slice(1); // drop "Platform"
    const user = this.userOf(seen);
    const [a, b, c, d, e, f, g] = parts;
    if (a === 'App' && b === 'ApiUsage') {
      return [200, envelope({ applicationId: c, apiCalls: [], throttledRequests: [] })];
    }
    if (a === 'User' && b === 'GetMembershipsForCurrentUser') {
      if (user === 'missing') return [401, envelope(null, 99, 'WebAuthRequired')];
      if (user === 'expired') return [200, envelope(null, 2111, 'AccessTokenHasExpired')];
      return [200, envelope({ bungieNetUser: { membershipId: user }, destinyMemberships: [] })];
    }
    if (a === 'GroupV2' && b === 'Name') {
      return [200, envelope({ detail: { name: decodeURIComponent(c ?? ''), groupType: Number(d) } })];
    }
    if (a === 'Destiny2' && b === 'Manifest' && c === undefined) {
      const v = this.manifestVersion;
      return [
        200,
        envelope({
          version: v,
          jsonWorldContentPaths: { en: '/x.json' },
          jsonWorldComponentContentPaths: {
            en: Object.fromEntries(
              Object.keys(this.definitions).map((t) => [
                t,
                `/common/destiny2_content/json/en/${t}-${v}.json`,
              ]),
            ),
          },
        }),
      ];
    }
    if (a === 'Destiny2' && c === 'Profile' && e === undefined) {
      const authed = user !== 'missing' && user !== 'expired';
      return [200, envelope({ membershipType: Number(b), membershipId: d, authed })];
    }
    if (a === 'Destiny2' && c === 'Profile' && e === 'Character' && g === 'Vendors' && parts.length === 7) {
      if (user === 'missing') return [401, envelope(null, 99, 'WebAuthRequired')];
      if (user === 'expired') return [200, envelope(null, 2111, 'AccessTokenHasExpired')];
      return [200, envelope({ characterId: f, vendors: { data: {} } })];
    }
    if (parts.length === 0) return [404, envelope(null, 21, 'NotFound')];
    // Any other endpoint: what it received, in the envelope (and whether a user token came).
    let body: unknown = null;
    try {
      body = seen.body ? JSON.parse(seen.body) : null;
    } catch {
      body = seen.body;
    }
    return [
      200,
      envelope({
        method: seen.method,
        path: seen.path,
        query: Object.fromEntries(seen.query),
        body,
        user: user === 'missing' ? null : user,
      }),
    ];
  }

  /** A manifest definition table, `{Type}-{version}.json`: its entries, tagged with the version. */
  private contentFile(seen: SeenRequest, res: ServerResponse): void {
    const match = /\/en\/(\w+)-(.+)\.json$/.exec(seen.path);
    const table = match?.[1] ? this.definitions[match[1]] : undefined;
    if (!match || !table) {
      send(res, 404, { error: 'not found' });
      return;
    }
    const entries = Object.fromEntries(
      Object.entries(table).map(([hash, value]) => [hash, { ...(value as object), version: match[2] }]),
    );
    send(res, 200, entries);
  }

  private userOf(seen: SeenRequest): string {
    const match = /^Bearer (.+)$/.exec(seen.headers.authorization ?? '');
    const token = match?.[1] ? this.accessTokens.get(match[1]) : undefined;
    if (!token) return 'missing';
    return token.expired ? 'expired' : token.membershipId;
  }

  /**
   * The consent page, consented at once by the user signed in at the fake in this browser: a 302
   * back with a code bound to the request's PKCE challenge, or an OAuth error as Bungie would.
   */
  private authorize(seen: SeenRequest, res: ServerResponse) {
    const q = seen.query;
    const user = cookieValue(seen.headers.cookie, FAKE_SESSION_COOKIE);
    if (!user) return send(res, 401, { error: 'login_required' });
    if (q.get('client_id') !== FAKE_CLIENT_ID || q.get('response_type') !== 'code') {
      return send(res, 400, { error: 'invalid_request', error_description: 'client_id or response_type' });
    }
    const challenge = q.get('code_challenge') ?? '';
    if (q.get('code_challenge_method') !== 'S256' || !CHALLENGE.test(challenge)) {
      return send(res, 400, { error: 'invalid_request', error_description: 'PKCE S256 is required' });
    }
    const redirectUri = q.get('redirect_uri');
    if (redirectUri !== null && redirectUri !== FAKE_REGISTERED_REDIRECT) {
      return send(res, 400, { error: 'invalid_request', error_description: 'redirect_uri not registered' });
    }
    const code = randomBytes(8).toString('hex');
    this.codes.set(code, { membershipId: user, codeChallenge: challenge, redirectUri });
    const back = new URL(redirectUri ?? FAKE_REGISTERED_REDIRECT);
    back.searchParams.set('code', code);
    const state = q.get('state');
    if (state !== null) back.searchParams.set('state', state);
    res.writeHead(302, { location: back.toString() });
    res.end();
  }

  private async token(seen: SeenRequest, res: ServerResponse): Promise<void> {
    const expected = `Basic ${Buffer.from(`${FAKE_CLIENT_ID}:${FAKE_CLIENT_SECRET}`).toString('base64')}`;
    if (seen.headers.authorization !== expected) {
      return send(res, 401, { error: 'invalid_client', error_description: 'bad client credentials' });
    }
    const form = new URLSearchParams(seen.body);
    let membershipId: string | undefined;
    if (form.get('grant_type') === 'authorization_code') {
      const issued = this.codes.get(form.get('code') ?? '');
      this.codes.delete(form.get('code') ?? '');
      const verifier = form.get('code_verifier') ?? '';
      // RFC 7636 §4.6: the verifier's S256 must equal the challenge of the authorize request.
      const pkceHolds = VERIFIER.test(verifier) && s256(verifier) === issued?.codeChallenge;
      const redirectHolds = issued?.redirectUri === null || issued?.redirectUri === form.get('redirect_uri');
      if (issued && pkceHolds && redirectHolds) membershipId = issued.membershipId;
    } else if (form.get('grant_type') === 'refresh_token') {
      this.refreshes += 1;
      if (this.refreshDelayMs) await sleep(this.refreshDelayMs);
      const old = form.get('refresh_token') ?? '';
      membershipId = this.refuseRefresh ? undefined : this.refreshTokens.get(old);
      this.refreshTokens.delete(old);
    }
    if (!membershipId) return send(res, 400, { error: 'invalid_grant', error_description: 'refused' });
    const access = `at-${randomBytes(12).toString('hex')}`;
    const refresh = `rt-${randomBytes(12).toString('hex')}`;
    this.accessTokens.set(access, { membershipId, expired: false });
    this.refreshTokens.set(refresh, membershipId);
    this.issued.push(access, refresh);
    send(res, 200, {
      access_token: access,
      token_type: 'Bearer',
      expires_in: this.accessExpiresIn,
      refresh_token: refresh,
      refresh_expires_in: 7_776_000,
      membership_id: membershipId,
    });
  }
}

const VERIFIER = /^[A-Za-z0-9._~-]{43,128}$/;
const CHALLENGE = /^[A-Za-z0-9_-]{43}$/;

function s256(verifier: string): string {
  return createHash('sha256').update(verifier, 'ascii').digest('base64url');
}

function cookieValue(header: string | undefined, name: string): string | undefined {
  for (const pair of (header ?? '').split(';')) {
    const [key, ...value] = pair.trim().split('=');
    if (key === name) return value.join('=');
  }
  return undefined;
}

function envelope(response: unknown, code = 1, status = 'Success', throttleSeconds = 0) {
  return {
    Response: response,
    ErrorCode: code,
    ThrottleSeconds: throttleSeconds,
    ErrorStatus: status,
    Message: code === 1 ? 'Ok' : status,
    MessageData: {},
  };
}

function send(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}
