import type { TestPlatform } from './platform.js';

/** A second account with an Admin key for all services: for isolation tests. */
export async function otherAccountKey(p: TestPlatform): Promise<string> {
  const auth = p.ctx.apis.auth;
  if (!auth) throw new Error('auth module missing');
  const accountId = `acct_other_${Math.random().toString(36).slice(2, 10)}`;
  await p.ctx.db
    .insertInto('accounts')
    .values({
      id: accountId,
      email: `${accountId}@example.com`,
      name: 'Other',
      password_hash: null,
      created_at: new Date().toISOString(),
    })
    .execute();
  const created = await auth.keys.create(
    accountId,
    { name: 'other', type: 'production', role: 'Admin', services: ['*'] } as never,
    null,
  );
  return created.key;
}
