import type { InjectOptions, LightMyRequestResponse } from 'fastify';
import { expect } from 'vitest';
import type { TestPlatform } from '../helpers/platform.js';

/** The owner made at first start (PLATFORM_OWNER_EMAIL's default). */
export const OWNER_EMAIL = 'owner@localhost';
export const OWNER_PASSWORD = 'violet tundra lantern 47';

export interface Session {
  cookie: string;
  csrfToken: string;
  memberId: string;
  setCookie: string;
}

export function portalApi(p: TestPlatform) {
  const portal = p.ctx.apis.portal;
  if (!portal) throw new Error('portal module missing');
  return portal;
}

/** The token of a setup or invite link (`…/portal/#/setup?token=…`). */
export function tokenOf(url: string): string {
  const token = /[?&]token=([\w-]+)$/.exec(url)?.[1];
  if (!token) throw new Error(`no token in ${url}`);
  return token;
}

export function sessionOf(res: LightMyRequestResponse): Session {
  expect(res.statusCode, res.body).toBe(200);
  const setCookie = String(res.headers['set-cookie']);
  const cookie = /^(platform_session=[^;]+)/.exec(setCookie)?.[1];
  if (!cookie) throw new Error(`no session cookie in ${setCookie}`);
  const body = res.json() as { csrfToken: string; member: { id: string } };
  return { cookie, csrfToken: body.csrfToken, memberId: body.member.id, setCookie };
}

/** Sets the owner's password through a fresh setup link, once per platform. */
export async function ownerSession(p: TestPlatform): Promise<Session> {
  const owner = await p.ctx.db
    .selectFrom('members')
    .select('password_hash')
    .where('email', '=', OWNER_EMAIL)
    .executeTakeFirstOrThrow();
  if (owner.password_hash === null) {
    const { url } = await portalApi(p).members.setupLink(OWNER_EMAIL);
    sessionOf(
      await p.request({
        method: 'POST',
        url: '/v1/auth/setup',
        key: null,
        payload: { token: tokenOf(url), password: OWNER_PASSWORD },
      }),
    );
  }
  return login(p, OWNER_EMAIL, OWNER_PASSWORD);
}

export function loginRequest(
  p: TestPlatform,
  email: string,
  password: string,
  extra: Partial<InjectOptions> = {},
) {
  return p.request({
    method: 'POST',
    url: '/v1/auth/login',
    key: null,
    payload: { email, password },
    ...extra,
  });
}

export async function login(p: TestPlatform, email: string, password: string): Promise<Session> {
  return sessionOf(await loginRequest(p, email, password));
}

/** A request made by the browser with the session: the cookie, and the CSRF header unless told otherwise. */
export function asSession(
  p: TestPlatform,
  session: Session,
  options: InjectOptions & { csrf?: boolean },
): Promise<LightMyRequestResponse> {
  const { csrf = true, headers, ...rest } = options;
  return p.request({
    ...rest,
    key: null,
    headers: {
      cookie: session.cookie,
      ...(csrf ? { 'x-csrf-token': session.csrfToken } : {}),
      ...headers,
    },
  });
}

/** Invites `email` with `role` as the owner, accepts, and returns the member's session. */
export async function memberSession(
  p: TestPlatform,
  owner: Session,
  email: string,
  role: 'admin' | 'developer' | 'viewer',
  password = 'copper meadow signal 92',
): Promise<Session> {
  const invited = await asSession(p, owner, {
    method: 'POST',
    url: '/v1/members/invites',
    payload: { email, role },
  });
  expect(invited.statusCode, invited.body).toBe(201);
  return sessionOf(
    await p.request({
      method: 'POST',
      url: '/v1/auth/invites/accept',
      key: null,
      payload: { token: tokenOf(invited.json().inviteUrl), name: email.split('@')[0], password },
    }),
  );
}
