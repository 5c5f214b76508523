import { isUniqueViolation } from '../../core/db/database.js';
import { newId } from '../../core/ids.js';
import { parseKey } from './key-format.js';
import type { KeyService } from './key-service.js';
import type { AuthStore } from './store.js';

export interface BootstrapResult {
  accountId: string;
  /** The owner's first key, when this call created it; shown once. */
  createdKey: string | null;
  /** The one-time link that sets the owner's portal password, when this call made the owner member. */
  setupUrl?: string;
}

/**
 * What later modules add to the owner account (the portal: its owner member and setup link). Runs on
 * every bootstrap, so an account made where the module was not loaded (a CLI command) gets it later.
 */
export type OwnerStep = (owner: { accountId: string; email: string; name: string }) => Promise<{
  setupUrl?: string;
}>;

async function runSteps(
  steps: readonly OwnerStep[],
  owner: { id: string; email: string; name: string },
): Promise<{ setupUrl?: string }> {
  let out: { setupUrl?: string } = {};
  for (const step of steps)
    out = { ...out, ...(await step({ accountId: owner.id, email: owner.email, name: owner.name })) };
  return out;
}

export class BootstrapError extends Error {}

/**
 * First start on an empty database: an owner account and one production Admin key for all
 * services (or the PLATFORM_BOOTSTRAP_KEY value, if it is a well-formed key).
 */
export async function bootstrapOwner(
  store: AuthStore,
  keys: KeyService,
  settings: { ownerEmail: string; bootstrapKey: string },
  nowIso: string,
  steps: readonly OwnerStep[] = [],
): Promise<BootstrapResult> {
  const existing = await store.firstAccount();
  if (existing) return { accountId: existing.id, createdKey: null, ...(await runSteps(steps, existing)) };
  let preset: string | undefined;
  let type: 'development' | 'production' = 'production';
  if (settings.bootstrapKey) {
    const parsed = parseKey(settings.bootstrapKey);
    if (!parsed.ok)
      throw new BootstrapError('PLATFORM_BOOTSTRAP_KEY is not a well-formed key (bad shape or checksum)');
    preset = settings.bootstrapKey;
    type = parsed.type;
  }
  const accountId = newId('acct');
  try {
    await store.insertAccount({
      id: accountId,
      email: settings.ownerEmail,
      name: 'Owner',
      created_at: nowIso,
    });
  } catch (error) {
    // Another process bootstrapped at the same moment.
    if (!isUniqueViolation(error)) throw error;
    const winner = await store.firstAccount();
    if (!winner) throw error;
    return { accountId: winner.id, createdKey: null, ...(await runSteps(steps, winner)) };
  }
  const created = await keys.create(
    accountId,
    { name: 'bootstrap', type, services: ['*'], role: 'Admin' },
    null,
    preset,
  );
  const added = await runSteps(steps, { id: accountId, email: settings.ownerEmail, name: 'Owner' });
  return { accountId, createdKey: preset ? null : created.key, ...added };
}
