import { mayUseAnyCredential, type Principal } from '../../../core/auth/principal.js';
import { AppError } from '../../../core/errors.js';
import { credentialRefs } from '../definitions/definitions.js';
import type { WorkflowDefinition } from '../engine/index.js';
import { NodeOperationError } from '../engine/node-type.js';
import type { CredentialStore } from './store.js';

/**
 * Who owns a credential or acts for a workflow (n8n's sharing model, with keys and members as
 * n8n's users): `key:<id>`, `member:<id>`, or `account` — the operator (CLI) and whoever holds
 * `credentials:use` (Admin), which may use every credential of the account.
 */
export const ACCOUNT_ACTOR = 'account';

/** The principal as an owner: its key (a customer token: the key that minted it), else its member. */
export function actorOf(principal: Principal | null): string {
  if (!principal) return ACCOUNT_ACTOR;
  if (principal.keyId) return `key:${principal.keyId}`;
  // A session always names its member; one that did not could not own anything.
  return `member:${principal.memberId ?? 'unknown'}`;
}

/**
 * Whose credential rights a workflow saved by `principal` runs with: `account` when the saver may
 * use every credential, else the saver itself. Every trigger (webhook, schedule, sub-workflow call,
 * manual run) runs it with these rights, so who may start it does not matter.
 */
export function savedByOf(principal: Principal | null): string {
  return mayUseAnyCredential(principal) ? ACCOUNT_ACTOR : actorOf(principal);
}

/** Whether `actor` may use a credential owned by `owner` and shared with `sharedWith`. */
export function mayUse(actor: string, owner: string, sharedWith: ReadonlySet<string>): boolean {
  return actor === ACCOUNT_ACTOR || owner === actor || sharedWith.has(actor);
}

/** Whether `principal` may change, delete, share or transfer a credential owned by `owner`. */
export function mayManage(principal: Principal | null, owner: string): boolean {
  return mayUseAnyCredential(principal) || owner === actorOf(principal);
}

/** The save-time refusal: which references, where, and what to do about it. */
function notUsable(actor: string, refused: Array<{ ref: string; path: string }>): AppError {
  const names = [...new Set(refused.map((r) => `'${r.ref}'`))].join(', ');
  return new AppError(
    'FORBIDDEN',
    `This workflow may not use credential ${names}: it belongs to another principal and is not shared with ${actor === ACCOUNT_ACTOR ? 'the account' : actor}. Ask its owner to share it (PUT /api/v1/credentials/{id}/share), or use a key with credentials:use`,
    { credentials: refused.map((r) => ({ ref: r.ref, path: r.path })), actor },
  );
}

/** The run-time refusal, as the failing node's error. */
export function notUsableAtRun(ref: string, actor: string): Error {
  return new Error(
    `Credential '${ref}' may not be used by this workflow: it is neither owned by nor shared with ${actor}, who saved it`,
  );
}

/**
 * Save-time check: every credential a workflow refers to (that exists) is usable by `actor`, whose
 * rights the workflow will run with. Throws FORBIDDEN naming them.
 */
export async function assertCredentialsUsable(
  store: Pick<CredentialStore, 'owners'>,
  accountId: string,
  actor: string,
  refs: Array<{ ref: string; path: string }>,
): Promise<void> {
  const refused = await unusableRefs(store, accountId, actor, refs);
  if (refused.length > 0) throw notUsable(actor, refused);
}

/** The references among `refs` that name an existing credential `actor` may not use. */
export async function unusableRefs(
  store: Pick<CredentialStore, 'owners'>,
  accountId: string,
  actor: string,
  refs: Array<{ ref: string; path: string }>,
): Promise<Array<{ ref: string; path: string }>> {
  if (actor === ACCOUNT_ACTOR || refs.length === 0) return [];
  const rows = await store.owners(
    accountId,
    refs.map((r) => r.ref),
  );
  return refs.filter(({ ref }) => {
    const row = rows.find((r) => r.id === ref) ?? rows.find((r) => r.name === ref);
    return row !== undefined && !mayUse(actor, row.owner, row.sharedWith);
  });
}

/**
 * Who starts a workflow chooses its input, which expressions may turn into a request's URL: a
 * manual run (items, pinned data) and a sub-workflow call need the right to use every credential of
 * the workflow they start, as saving it does.
 */
export function callerChecks(store: Pick<CredentialStore, 'owners' | 'savedBy'>) {
  return {
    manualRun: (accountId: string, principal: Principal | null, def: WorkflowDefinition) =>
      assertCredentialsUsable(store, accountId, savedByOf(principal), credentialRefs(def)),
    subWorkflow: async (accountId: string, callerWorkflowId: string, callee: WorkflowDefinition) => {
      const caller = (await store.savedBy(accountId, callerWorkflowId)) ?? ACCOUNT_ACTOR;
      const refused = await unusableRefs(store, accountId, caller, credentialRefs(callee));
      if (refused.length > 0) throw new NodeOperationError(notUsable(caller, refused).message);
    },
  };
}
