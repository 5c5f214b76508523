import { createHash } from 'node:crypto';
import type { Db } from '../../../core/db/database.js';
import type { DedupeHistory, DedupeScope } from '../engine/types.js';

/** Rows per insert: far below SQLite's bound on statement variables. */
const CHUNK = 250;

const hashOf = (key: string) => createHash('sha256').update(key).digest('base64url');

/**
 * What Remove Duplicates v2 has seen in earlier executions (n8n's processed data). Keys are stored
 * hashed, so a key's size or content never reaches the database; the insert that records a key is
 * the check, so two executions racing on one key let it through once.
 */
export class DedupeStore implements DedupeHistory {
  constructor(
    private readonly db: Db,
    private readonly now: () => Date,
  ) {}

  async count({ workflowId, scope }: DedupeScope): Promise<number> {
    const row = await this.db
      .selectFrom('workflow_dedupe_keys')
      .select((eb) => eb.fn.countAll<string | number>().as('n'))
      .where('workflow_id', '=', workflowId)
      .where('scope', '=', scope)
      .executeTakeFirst();
    return Number(row?.n ?? 0);
  }

  async recordKeys({ workflowId, scope }: DedupeScope, keys: string[]): Promise<Set<string>> {
    const at = this.now().toISOString();
    const byHash = new Map(keys.map((k) => [hashOf(k), k]));
    const fresh = new Set<string>();
    const hashes = [...byHash.keys()];
    for (let i = 0; i < hashes.length; i += CHUNK) {
      const rows = await this.db
        .insertInto('workflow_dedupe_keys')
        .values(
          hashes
            .slice(i, i + CHUNK)
            .map((key_hash) => ({ workflow_id: workflowId, scope, key_hash, created_at: at })),
        )
        .onConflict((oc) => oc.columns(['workflow_id', 'scope', 'key_hash']).doNothing())
        .returning('key_hash')
        .execute();
      for (const row of rows) fresh.add(byHash.get(row.key_hash) as string);
    }
    return fresh;
  }

  async latest({ workflowId, scope }: DedupeScope, kind: 'number' | 'date'): Promise<number | null> {
    const row = await this.db
      .selectFrom('workflow_dedupe_latest')
      .select('value')
      .where('workflow_id', '=', workflowId)
      .where('scope', '=', scope)
      .where('kind', '=', kind)
      .executeTakeFirst();
    return row ? Number(row.value) : null;
  }

  async raiseLatest(
    { workflowId, scope }: DedupeScope,
    kind: 'number' | 'date',
    value: number,
  ): Promise<void> {
    await this.db
      .insertInto('workflow_dedupe_latest')
      .values({ workflow_id: workflowId, scope, kind, value })
      .onConflict((oc) =>
        oc
          .columns(['workflow_id', 'scope', 'kind'])
          .doUpdateSet((eb) => ({ value: eb.ref('excluded.value') }))
          .where('workflow_dedupe_latest.value', '<', value),
      )
      .execute();
  }

  async clear({ workflowId, scope }: DedupeScope): Promise<void> {
    await this.db.transaction().execute(async (trx) => {
      await trx
        .deleteFrom('workflow_dedupe_keys')
        .where('workflow_id', '=', workflowId)
        .where('scope', '=', scope)
        .execute();
      await trx
        .deleteFrom('workflow_dedupe_latest')
        .where('workflow_id', '=', workflowId)
        .where('scope', '=', scope)
        .execute();
    });
  }
}
