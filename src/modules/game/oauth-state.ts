import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { addSeconds, type Clock } from '../../core/clock.js';
import { AppError } from '../../core/errors.js';
import type { GameStore, Owner } from './store.js';

export const STATE_TTL_SECONDS = 600;

/**
 * OAuth `state` values: `<nonce>.<expiry>.<hmac>`. The signature makes forged or altered states
 * fail without a database read; the row (written at issue, deleted at use) binds the state to
 * the principal and makes it single-use.
 */
export class OAuthStates {
  constructor(
    private readonly key: Buffer,
    private readonly store: GameStore,
    private readonly clock: Clock,
  ) {}

  async issue(owner: Owner): Promise<string> {
    const now = this.clock.now();
    const nonce = randomBytes(18).toString('base64url');
    const expires = addSeconds(now, STATE_TTL_SECONDS);
    const exp = Math.floor(expires.getTime() / 1000);
    await this.store.purgeStates(now.toISOString());
    await this.store.insertState({
      id: nonce,
      account_id: owner.accountId,
      customer_id: owner.customerId,
      expires_at: expires.toISOString(),
      created_at: now.toISOString(),
    });
    return `${nonce}.${exp}.${this.sign(`${nonce}.${exp}`)}`;
  }

  /** The owner the state was issued to; 400 for a bad, expired or already used state. */
  async consume(state: string): Promise<Owner> {
    const [nonce, exp, signature, extra] = state.split('.');
    if (!nonce || !exp || !signature || extra !== undefined || !this.verify(`${nonce}.${exp}`, signature)) {
      throw badState('The OAuth state is not valid');
    }
    const nowSeconds = this.clock.now().getTime() / 1000;
    if (Number(exp) <= nowSeconds) throw badState('The OAuth state has expired; start again');
    const row = await this.store.consumeState(nonce);
    if (!row) throw badState('The OAuth state was already used');
    if (Date.parse(row.expires_at) <= this.clock.now().getTime()) {
      throw badState('The OAuth state has expired; start again');
    }
    return { accountId: row.account_id, customerId: row.customer_id };
  }

  private sign(payload: string): string {
    return createHmac('sha256', this.key).update(payload).digest('base64url');
  }

  private verify(payload: string, signature: string): boolean {
    const expected = Buffer.from(this.sign(payload));
    const given = Buffer.from(signature);
    return expected.length === given.length && timingSafeEqual(expected, given);
  }
}

function badState(message: string): AppError {
  return new AppError('VALIDATION_ERROR', message, { fields: [{ field: 'querystring.state', message }] });
}
