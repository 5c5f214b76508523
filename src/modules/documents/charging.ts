import type { Principal } from '../../core/auth/principal.js';

/**
 * Who pays for the model calls the documents module makes (embedding chunks and queries): the key
 * that asked, held to its model allow-list and daily token budget like any gateway call, or the
 * account alone (a signed-in member, the platform's own retrieval), recorded but not budgeted.
 * A queued job carries the key's id, and the key is read again when the job runs.
 */
export interface Payer {
  accountId: string;
  keyId: string | null;
}

/**
 * The account as a principal for accounting only: no service, so it can do nothing but be charged
 * and recorded (it has no budget, and any model, as the account's members do).
 */
export function accountPayer(accountId: string): Principal {
  return {
    kind: 'session',
    accountId,
    keyId: null,
    keyType: null,
    services: [],
    role: 'Reader',
    scopes: [],
    customerId: null,
    dailyQuota: null,
    models: null,
    dailyTokenBudget: null,
    ipAllowed: null,
  };
}
