import { expect } from 'vitest';
import type { TestPlatform } from '../helpers/platform.js';
import { Browser } from './browser.js';
import type { FakeGamePlatform } from './fake-game-platform.js';

/**
 * The API call that starts a connection (an API key: the integration's; `customerId` for one of
 * its customers): the one-time link for the user's browser.
 */
export async function connectLink(p: TestPlatform, customerId?: string): Promise<string> {
  const query = customerId === undefined ? '' : `?customerId=${encodeURIComponent(customerId)}`;
  const res = await p.request({ method: 'GET', url: `/game/oauth/authorize${query}` });
  expect(res.statusCode, res.body).toBe(200);
  return res.json().authorizeUrl as string;
}

/**
 * The whole flow as an integration and its user would run it: the API call, then the user's
 * browser (signed in at the game platform as `membershipId`) opens the link; returns the state.
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
  expect(done.status, done.body).toBe(200);
  return { state, browser };
}
