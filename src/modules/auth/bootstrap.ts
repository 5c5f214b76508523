import { isUniqueViolation } from '../../core/db/database.js';
import { newId } from '../../core/ids.js';
import { parseKey } from './key-format.js';
import type { KeyService } from './key-service.js';
import type { AuthStore } from './store.js';

export interface BootstrapResult {
  accountId: string;
  /** The owner's first key, when this call created it; shown once. */
  createdKey: string | null;
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
): Promise<BootstrapResult> {
  const existing = await store.firstAccount();
  if (existing) return { accountId: existing.id, createdKey: null };
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
    return { accountId: winner.id, createdKey: null };
  }
  const created = await keys.create(
    accountId,
    { name: 'bootstrap', type, services: ['*'], role: 'Admin' },
    null,
    preset,
  );
  return { accountId, createdKey: preset ? null : created.key };
}
