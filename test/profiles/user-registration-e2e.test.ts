import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listeningPlatform } from '../helpers/listening.js';
import type { TestPlatform } from '../helpers/platform.js';
import { testDialects } from '../helpers/services.js';
import { activate, createCredential } from '../workflows/support.js';

interface Profile {
  userId: string;
  displayName: string;
  email: string;
  registrationSource: string;
  createdAt: string;
  updatedAt: string;
}
interface Conversation {
  id: string;
  agentId: string | null;
  userId: string;
  messages: { data: Array<{ role: string; content: string }> };
}

/**
 * The shipped user-registration workflow on the default configuration: USERS_URL unset, so its call
 * reaches this platform's own `POST /api/users`, which makes the profile, the empty cart and the welcome.
 */
describe.each(await testDialects())('user-registration workflow end to end on %s', (dialect) => {
  let p: TestPlatform;

  beforeAll(async () => {
    p = await listeningPlatform(dialect);
    const key = await p.createKey({
      name: 'workflow → users',
      type: 'production',
      role: 'Writer',
      services: ['commerce', 'agent'],
    });
    await createCredential(p, 'platform-api-key', 'httpBearerAuth', { token: key.key });
    await activate(p, 'wf_user_registration');
  });
  afterAll(() => p?.close());

  const deliver = (body: Record<string, string>) =>
    p.app.inject({
      method: 'POST',
      url: '/webhook/user-registration',
      payload: body,
      headers: { 'x-api-key': p.adminKey },
    });
  const carts = (customerId: string) =>
    p.ctx.db
      .selectFrom('carts')
      .select('id')
      .where('account_id', '=', p.accountId)
      .where('customer_id', '=', customerId)
      .execute();
  const conversations = async (userId: string) => {
    const res = await p.request({ method: 'GET', url: `/api/conversations?userId=${userId}` });
    expect(res.statusCode, res.body).toBe(200);
    return (res.json() as { data: Array<{ id: string }> }).data;
  };
  const registration = {
    userId: 'u-ada',
    email: 'ada@example.com',
    name: 'Ada Lovelace',
    registrationSource: 'storefront',
  };

  it('creates the profile, the empty cart and the welcome message; answers with the profile', async () => {
    const res = await deliver(registration);
    expect(res.statusCode, res.body).toBe(200);
    const answer = res.json() as { onboarded: boolean; userId: string; email: string; profile: Profile };
    expect(answer).toMatchObject({
      onboarded: true,
      userId: 'u-ada',
      email: 'ada@example.com',
      profile: { userId: 'u-ada', displayName: 'Ada Lovelace', registrationSource: 'storefront' },
    });

    const profile = await p.request({ method: 'GET', url: '/api/users/u-ada/profile' });
    expect(profile.statusCode, profile.body).toBe(200);
    expect(profile.json()).toEqual(answer.profile);

    const cart = await carts('u-ada');
    expect(cart).toHaveLength(1);
    const items = await p.ctx.db
      .selectFrom('cart_items')
      .select('id')
      .where('cart_id', '=', cart[0]?.id ?? '')
      .execute();
    expect(items).toHaveLength(0);

    const list = await conversations('u-ada');
    expect(list).toHaveLength(1);
    const welcome = await p.request({ method: 'GET', url: `/api/conversations/${list[0]?.id}` });
    expect(welcome.statusCode, welcome.body).toBe(200);
    const conversation = welcome.json() as Conversation;
    expect(conversation).toMatchObject({ agentId: null, userId: 'u-ada' });
    expect(conversation.messages.data).toHaveLength(1);
    expect(conversation.messages.data[0]?.role).toBe('assistant');
    expect(conversation.messages.data[0]?.content).toContain('Ada Lovelace');
  });

  it('a second registration of the same userId changes nothing, through the webhook or the route', async () => {
    const before = (await p.request({ method: 'GET', url: '/api/users/u-ada/profile' })).json() as Profile;
    p.clock.advance(60);
    const again = await deliver({ ...registration, name: 'Someone Else', email: 'else@example.com' });
    expect(again.statusCode, again.body).toBe(200);
    expect((again.json() as { profile: Profile }).profile).toEqual(before);

    // Past the webhook's dedupe, the users route itself is idempotent.
    const direct = await p.request({
      method: 'POST',
      url: '/api/users',
      headers: { 'idempotency-key': 'user-registration-u-ada' },
      payload: { ...registration, name: 'Someone Else', onboarding: { status: 'started' } },
    });
    expect(direct.statusCode, direct.body).toBe(200);
    expect(direct.json()).toEqual(before);

    expect((await p.request({ method: 'GET', url: '/api/users/u-ada/profile' })).json()).toEqual(before);
    expect(await carts('u-ada')).toHaveLength(1);
    expect(await conversations('u-ada')).toHaveLength(1);
  });

  it('registrations of one new user at once: one creates, one welcome, one cart', async () => {
    const all = await Promise.all(
      Array.from({ length: 5 }, () =>
        p.request({ method: 'POST', url: '/api/users', payload: { ...registration, userId: 'u-twin' } }),
      ),
    );
    expect(all.map((r) => r.statusCode).sort()).toEqual([200, 200, 200, 200, 201]);
    expect(await conversations('u-twin')).toHaveLength(1);
    expect(await carts('u-twin')).toHaveLength(1);
  });

  it('an invalid registration fails at Validate and creates nothing', async () => {
    const res = await deliver({ userId: 'u-bad', email: 'not-an-email', name: 'B', registrationSource: 's' });
    expect(res.statusCode).toBe(400);
    expect((await p.request({ method: 'GET', url: '/api/users/u-bad/profile' })).statusCode).toBe(404);
    expect(await carts('u-bad')).toHaveLength(0);
  });
});
