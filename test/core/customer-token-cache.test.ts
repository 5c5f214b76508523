import { SignJWT } from 'jose';
import { describe, expect, it, vi } from 'vitest';
import { CustomerTokens } from '../../src/modules/auth/customer-tokens.js';
import { TestClock } from '../helpers/clock.js';

// Verified customer tokens are kept by their hash for at most a minute and never past their own
// expiry; the issuing key is checked on every request elsewhere (customer-token-flow.test.ts:
// revoking the key kills its tokens at once, with the token verified before).

const secret = new TextEncoder().encode('a-test-secret-of-enough-length-32b!');

function tokensAt(clock: TestClock) {
  return new CustomerTokens(secret, clock, { defaultSeconds: 600, maxSeconds: 3600 }, async () => {
    throw new Error('not minting here');
  });
}

async function sign(clock: TestClock, ttlSeconds: number, key = secret, sub = 'cust_1') {
  const now = Math.floor(clock.now().getTime() / 1000);
  return new SignJWT({ scope: 'game:read game:write', key: 'key_1', kv: 'v1' })
    .setProtectedHeader({ alg: 'HS256' })
    .setIssuer('api-platform')
    .setAudience('api-platform:customer')
    .setSubject(sub)
    .setIssuedAt(now)
    .setExpirationTime(now + ttlSeconds)
    .sign(key);
}

describe('customer token verification cache', () => {
  it('answers the same claims again, and a caller changing them does not change the next answer', async () => {
    const clock = new TestClock();
    const tokens = tokensAt(clock);
    const token = await sign(clock, 600);
    const first = await tokens.verify(token);
    expect(first).toMatchObject({ customerId: 'cust_1', keyId: 'key_1', binding: 'v1' });
    first.scopes.push('commerce:write');
    first.customerId = 'someone else';
    const again = await tokens.verify(token);
    expect(again.customerId).toBe('cust_1');
    expect(again.scopes).toEqual(['game:read', 'game:write']);
  });

  it('refuses a cached token once it has expired', async () => {
    const clock = new TestClock();
    const tokens = tokensAt(clock);
    const token = await sign(clock, 30);
    await tokens.verify(token);
    clock.advance(29);
    await expect(tokens.verify(token)).resolves.toMatchObject({ customerId: 'cust_1' });
    clock.advance(2);
    await expect(tokens.verify(token)).rejects.toThrow(/expired/);
  });

  it('checks the token again after a minute (a long-lived one is not trusted from memory forever)', async () => {
    const clock = new TestClock();
    const tokens = tokensAt(clock);
    const token = await sign(clock, 3600);
    const jwt = vi.spyOn(tokens as unknown as { verifyJwt: (t: string) => Promise<unknown> }, 'verifyJwt');
    await tokens.verify(token);
    await tokens.verify(token);
    clock.advance(59);
    await tokens.verify(token);
    expect(jwt).toHaveBeenCalledTimes(1);
    clock.advance(2);
    await expect(tokens.verify(token)).resolves.toMatchObject({ customerId: 'cust_1' });
    expect(jwt).toHaveBeenCalledTimes(2);
  });

  it('never answers a forged token from the cache of the genuine one', async () => {
    const clock = new TestClock();
    const tokens = tokensAt(clock);
    await tokens.verify(await sign(clock, 600));
    const forged = await sign(clock, 600, new TextEncoder().encode('another-secret-of-enough-length-32b'));
    await expect(tokens.verify(forged)).rejects.toThrow(/invalid/);
    const otherCustomer = await sign(clock, 600, secret, 'cust_2');
    await expect(tokens.verify(otherCustomer)).resolves.toMatchObject({ customerId: 'cust_2' });
  });
});
