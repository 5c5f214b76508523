import { type Clock, isoNow } from '../../../core/clock.js';
import type { Db } from '../../../core/db/database.js';
import { AppError, notFound } from '../../../core/errors.js';
import type { WorkflowTagsBodyT } from './schemas.js';

/** An execution's annotation tag (migration 318). */
interface ExecutionTagsTable {
  account_id: string;
  execution_id: string;
  tag_id: string;
  created_at: string;
}

declare module '../../../core/db/types.js' {
  interface Database {
    execution_tags: ExecutionTagsTable;
  }
}

/**
 * n8n's execution annotation tags (`GET`/`PUT /api/v1/executions/{id}/tags`). The tags are the
 * account's tags (`/api/v1/tags`), the ones its workflows carry: n8n keeps a separate tag space for
 * annotations, which its public API cannot create, so one space is what a caller can use.
 */
export class ExecutionTagService {
  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
  ) {}

  /** The execution's tags in the order they were given, as `/api/v1/tags` shows them. */
  async get(accountId: string, executionId: string) {
    await this.mustExist(accountId, executionId);
    const rows = await this.db
      .selectFrom('execution_tags as et')
      .innerJoin('workflow_tags as t', (j) =>
        j.onRef('t.account_id', '=', 'et.account_id').onRef('t.id', '=', 'et.tag_id'),
      )
      .select(['t.id', 't.name', 't.created_at', 't.updated_at'])
      .where('et.account_id', '=', accountId)
      .where('et.execution_id', '=', executionId)
      .orderBy('et.created_at')
      .orderBy('t.name')
      .execute();
    return rows.map((r) => ({ id: r.id, name: r.name, createdAt: r.created_at, updatedAt: r.updated_at }));
  }

  /** Replaces the execution's tags with the given ones; each must be a tag of the account (else 404 naming them). */
  async set(accountId: string, executionId: string, body: WorkflowTagsBodyT) {
    await this.mustExist(accountId, executionId);
    const ids = [...new Set(body.map((t) => t.id))];
    const known =
      ids.length === 0
        ? []
        : await this.db
            .selectFrom('workflow_tags')
            .select('id')
            .where('account_id', '=', accountId)
            .where('id', 'in', ids)
            .execute();
    const missing = ids.filter((id) => !known.some((k) => k.id === id));
    if (missing.length > 0)
      throw new AppError('NOT_FOUND', `No tag ${missing.map((m) => `'${m}'`).join(', ')} in this account`, {
        ids: missing,
      });
    const at = isoNow(this.clock);
    await this.db.transaction().execute(async (trx) => {
      await trx
        .deleteFrom('execution_tags')
        .where('account_id', '=', accountId)
        .where('execution_id', '=', executionId)
        .execute();
      if (ids.length > 0)
        await trx
          .insertInto('execution_tags')
          .values(
            // Millisecond steps keep the given order when read back.
            ids.map((tagId, i) => ({
              account_id: accountId,
              execution_id: executionId,
              tag_id: tagId,
              created_at: new Date(Date.parse(at) + i).toISOString(),
            })),
          )
          .execute();
    });
    return this.get(accountId, executionId);
  }

  private async mustExist(accountId: string, executionId: string): Promise<void> {
    const row = await this.db
      .selectFrom('executions')
      .select('id')
      .where('account_id', '=', accountId)
      .where('id', '=', executionId)
      .executeTakeFirst();
    if (!row) throw notFound('EXECUTION_NOT_FOUND', 'Execution', executionId);
  }
}
