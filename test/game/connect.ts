import { expect } from 'vitest';
import type { TestPlatform } from '../helpers/platform.js';
import type { FakeGamePlatform } from './fake-game-platform.js';

/** The whole authorization-code flow, as a user's browser would run it; returns the state used. */
export async function connectAccount(
  p: TestPlatform,
  fake: FakeGamePlatform,
  membershipId: string,
  key?: string,
): Promise<{ state: string; code: string }> {
  const start = await p.request({ method: 'GET', url: '/game/oauth/authorize', ...(key ? { key } : {}) });
  expect(start.statusCode, start.body).toBe(302);
  const location = new URL(String(start.headers.location));
  const state = location.searchParams.get('state') ?? '';
  const code = fake.issueCode(membershipId);
  const done = await p.request({
    method: 'GET',
    url: `/game/oauth/callback?code=${code}&state=${encodeURIComponent(state)}`,
    key: null,
  });
  expect(done.statusCode, done.body).toBe(200);
  return { state, code };
}
