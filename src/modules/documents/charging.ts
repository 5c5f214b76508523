import { accountPrincipal } from '../../core/auth/principal.js';

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

/** The account as a principal for accounting only (core's, so workflows charge the same way). */
export const accountPayer = accountPrincipal;
