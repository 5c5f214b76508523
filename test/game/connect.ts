import { createHash } from 'node:crypto';
import { expect } from 'vitest';
import type { TestPlatform } from '../helpers/platform.js';
import { Browser } from './browser.js';
import type { FakeGamePlatform } from './fake-game-platform.js';

/** The integration's page its users' browsers come back to after a customer's connection. */
export const RETURN_URL = 'https://shop.example/game/return';
/** The secret the integration keeps in its signed-in user's session (a customer's flow is bound to it). */
export const SESSION_SECRET = 'shop-session-7f3a9c';

export const sessionBindingOf = (secret: string): string =>
  createHash('sha256').update(secret, 'utf8').digest('hex');

/**
 * The API call that starts a connection (an API key: the integration's; `customerId` for one of
 * its customers, bound to the integration's user session by the hash of `secret`): the one-time
 * link for the user's browser.
 */
export async function connectLink(
  p: TestPlatform,
  customerId?: string,
  secret = SESSION_SECRET,
): Promise<string> {
  const query = new URLSearchParams();
  if (customerId !== undefined) {
    query.set('customerId', customerId);
    query.set('sessionBinding', sessionBindingOf(secret));
    query.set('returnUrl', RETURN_URL);
  }
  const res = await p.request({
    method: 'GET',
    url: `/game/oauth/authorize${customerId === undefined ? '' : `?${query}`}`,
  });
  expect(res.statusCode, res.body).toBe(200);
  return res.json().authorizeUrl as string;
}

/** Step 4 of a customer's flow: the integration presents its user session's secret. */
export async function complete(p: TestPlatform, completion: string, sessionSecret: string, key?: string) {
  return p.request({
    method: 'POST',
    url: '/game/oauth/complete',
    payload: { completion, sessionSecret },
    ...(key ? { key } : {}),
  });
}

/** The `gameConnection` a browser brought back to the return URL. */
export function completionOf(answer: { status: number; headers: Record<string, unknown> }): string {
  expect(answer.status).toBe(302);
  const back = new URL(String(answer.headers.location));
  expect(`${back.origin}${back.pathname}`).toBe(RETURN_URL);
  return back.searchParams.get('gameConnection') ?? '';
}

/**
 * The whole flow as an integration and its user would run it: the API call, then the user's
 * browser (signed in at the game platform as `membershipId`) opens the link; for a customer, the
 * browser comes back to the return URL and the integration completes with its session's secret.
 * Returns the state.
 */
export async function connectAccount(
  p: TestPlatform,
  fake: FakeGamePlatform,
  membershipId: string,
  customerId?: string,
): Promise<{ state: string; browser: Browser }> {
  const browser = new Browser(p, fake, membershipId);
  const start = await browser.step(await connectLink(p, customerId));
  expect(start.status, start.body).toBe(302);
  const state = new URL(String(start.headers.location)).searchParams.get('state') ?? '';
  const done = await browser.open(String(start.headers.location));
  if (customerId === undefined) {
    expect(done.status, done.body).toBe(200);
  } else {
    const finished = await complete(p, completionOf(done), SESSION_SECRET);
    expect(finished.statusCode, finished.body).toBe(200);
  }
  return { state, browser };
}
