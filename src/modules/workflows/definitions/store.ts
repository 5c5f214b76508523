import type { Transaction } from 'kysely';
import type { Db } from '../../../core/db/database.js';
import { lockRow } from '../../../core/db/row-lock.js';
import type { Database } from '../../../core/db/types.js';
import type { WorkflowDefinition } from '../engine/index.js';
import { resolveAliases } from '../nodes/aliases.js';
import type { WorkflowsTable, WorkflowTestWebhooksTable, WorkflowVersionsTable } from '../tables.js';

export type WorkflowRow = WorkflowsTable;

/** A version as stored: the definition, with n8n's versionId and its saver once those were recorded. */
type StoredVersion = WorkflowDefinition & { versionId?: string; savedBy?: string };

/** A saved version of a workflow, for n8n's workflow history. */
export interface SavedVersion {
  workflowId: string;
  version: number;
  /** n8n's versionId; the version number (as text) for versions saved before it was recorded. */
  versionId: string;
  savedBy: string | null;
  definition: WorkflowDefinition;
  createdAt: string;
}

function definitionOnly(stored: StoredVersion): WorkflowDefinition {
  const { versionId: _versionId, savedBy: _savedBy, ...definition } = stored;
  return definition;
}

function savedVersion(row: WorkflowVersionsTable): SavedVersion {
  const stored = JSON.parse(row.definition) as StoredVersion;
  return {
    workflowId: row.workflow_id,
    version: row.version,
    versionId: stored.versionId ?? String(row.version),
    savedBy: stored.savedBy ?? null,
    definition: resolveAliases(definitionOnly(stored)),
    createdAt: row.created_at,
  };
}

export interface WebhookRoute {
  path: string;
  method: string;
  workflow_id: string;
  node_name: string;
  account_id: string;
  version: number;
}

/** Queries on workflows, their saved versions and the webhook paths they hold. */
export class WorkflowStore {
  constructor(private readonly db: Db) {}

  listQuery(accountId: string) {
    return this.db.selectFrom('workflows').selectAll().where('account_id', '=', accountId);
  }

  async get(accountId: string, id: string): Promise<WorkflowRow | undefined> {
    return this.db
      .selectFrom('workflows')
      .selectAll()
      .where('id', '=', id)
      .where('account_id', '=', accountId)
      .executeTakeFirst();
  }

  /**
   * Workflows whose settings may mark them as MCP tools (`"availableInMCP":true` in the stored JSON):
   * a cheap pre-filter, the caller checks the parsed settings.
   */
  async markedForMcp(accountId: string, limit: number): Promise<WorkflowRow[]> {
    return this.db
      .selectFrom('workflows')
      .selectAll()
      .where('account_id', '=', accountId)
      .where('settings', 'like', '%"availableInMCP":true%')
      .orderBy('id')
      .limit(limit)
      .execute();
  }

  async exists(id: string): Promise<boolean> {
    const row = await this.db.selectFrom('workflows').select('id').where('id', '=', id).executeTakeFirst();
    return row !== undefined;
  }

  async all(accountId: string | null): Promise<WorkflowRow[]> {
    let q = this.db.selectFrom('workflows').selectAll().orderBy('id');
    if (accountId) q = q.where('account_id', '=', accountId);
    return q.execute();
  }

  /** Inserts a workflow and its first version. */
  async insert(row: WorkflowRow, definition: WorkflowDefinition): Promise<void> {
    await this.db.transaction().execute(async (trx) => {
      await trx.insertInto('workflows').values(row).execute();
      await this.saveVersion(trx, row, definition);
    });
  }

  /** Replaces a workflow's content as a new version, inside the caller's transaction. */
  async replace(
    trx: Transaction<Database>,
    row: Omit<WorkflowRow, 'account_id' | 'active' | 'archived' | 'created_at'>,
    definition: WorkflowDefinition,
  ): Promise<void> {
    const { id, ...content } = row;
    await trx.updateTable('workflows').set(content).where('id', '=', id).execute();
    await this.saveVersion(trx, row, definition);
  }

  /**
   * Keeps the saved shape as a version. n8n's `versionId` and who saved it (`savedBy`) ride along in
   * the stored JSON, for n8n's workflow history (`GET /workflows/{id}/{versionId}`).
   */
  private async saveVersion(
    trx: Transaction<Database>,
    row: Pick<WorkflowRow, 'id' | 'version' | 'version_id' | 'saved_by' | 'updated_at'>,
    definition: WorkflowDefinition,
  ): Promise<void> {
    const stored: StoredVersion = { ...definition, versionId: row.version_id, savedBy: row.saved_by };
    await trx
      .insertInto('workflow_versions')
      .values({
        workflow_id: row.id,
        version: row.version,
        definition: JSON.stringify(stored),
        created_at: row.updated_at,
      })
      .execute();
  }

  /** A workflow's saved versions, newest first (n8n's history: `take`, `skip`). */
  async history(id: string, take: number, skip: number): Promise<SavedVersion[]> {
    const rows = await this.db
      .selectFrom('workflow_versions')
      .selectAll()
      .where('workflow_id', '=', id)
      .orderBy('version', 'desc')
      .limit(take)
      .offset(skip)
      .execute();
    return rows.map(savedVersion);
  }

  /**
   * One saved version by n8n's `versionId` (kept with versions saved since it was recorded) or by
   * the platform's version number; `current` maps the workflow's own versionId for versions saved
   * before (their JSON does not carry it).
   */
  async versionByN8nId(
    id: string,
    versionId: string,
    current: { versionId: string; version: number },
  ): Promise<SavedVersion | null> {
    let q = this.db.selectFrom('workflow_versions').selectAll().where('workflow_id', '=', id);
    if (/^\d{1,9}$/.test(versionId)) q = q.where('version', '=', Number(versionId));
    else if (versionId === current.versionId) q = q.where('version', '=', current.version);
    else if (/^[A-Za-z0-9-]{1,64}$/.test(versionId)) {
      q = q.where('definition', 'like', `%"versionId":${JSON.stringify(versionId)}%`);
    } else return null;
    const rows = (await q.orderBy('version', 'desc').limit(20).execute()).map(savedVersion);
    // The LIKE is a pre-filter: a node parameter could hold the same text.
    return (
      rows.find((r) => r.versionId === versionId) ??
      rows.find(
        (r) =>
          String(r.version) === versionId ||
          (versionId === current.versionId && r.version === current.version),
      ) ??
      null
    );
  }

  /**
   * Locks the workflow's row for the rest of `trx` (a no-op update: PostgreSQL's row lock, SQLite's
   * write lock) and reads whether it is active as of now: activations and deactivations racing see
   * each other instead of what they read before.
   */
  async lockActive(trx: Transaction<Database>, id: string): Promise<boolean> {
    await lockRow(trx, 'workflows', id);
    const row = await trx.selectFrom('workflows').select('active').where('id', '=', id).executeTakeFirst();
    return row?.active === 1;
  }

  async setActive(trx: Transaction<Database>, id: string, active: boolean, at: string): Promise<void> {
    await trx
      .updateTable('workflows')
      .set({ active: active ? 1 : 0, updated_at: at })
      .where('id', '=', id)
      .execute();
  }

  async setArchived(trx: Transaction<Database>, id: string, archived: boolean, at: string): Promise<void> {
    await trx
      .updateTable('workflows')
      .set({ archived: archived ? 1 : 0, active: 0, updated_at: at })
      .where('id', '=', id)
      .execute();
  }

  async version(id: string, version: number): Promise<WorkflowDefinition | null> {
    const row = await this.db
      .selectFrom('workflow_versions')
      .select('definition')
      .where('workflow_id', '=', id)
      .where('version', '=', version)
      .executeTakeFirst();
    // A version saved before the one dialect may hold short node names: read as what they stand for.
    return row ? resolveAliases(definitionOnly(JSON.parse(row.definition) as StoredVersion)) : null;
  }

  /** Deletes a workflow and its webhooks; versions stay while executions point at them. */
  async delete(id: string): Promise<void> {
    await this.db.transaction().execute(async (trx) => {
      await trx.deleteFrom('webhooks').where('workflow_id', '=', id).execute();
      await trx.deleteFrom('workflows').where('id', '=', id).execute();
      await trx.deleteFrom('executions').where('workflow_id', '=', id).execute();
      await trx.deleteFrom('webhook_deliveries').where('workflow_id', '=', id).execute();
      await trx.deleteFrom('workflow_versions').where('workflow_id', '=', id).execute();
      await trx.deleteFrom('workflow_dedupe_keys').where('workflow_id', '=', id).execute();
      await trx.deleteFrom('workflow_dedupe_latest').where('workflow_id', '=', id).execute();
      await trx.deleteFrom('workflow_schedules').where('workflow_id', '=', id).execute();
      await trx.deleteFrom('workflow_test_webhooks').where('workflow_id', '=', id).execute();
    });
  }

  async webhooksOf(trx: Transaction<Database>, workflowId: string) {
    return trx.selectFrom('webhooks').selectAll().where('workflow_id', '=', workflowId).execute();
  }

  async clearWebhooks(trx: Transaction<Database>, workflowId: string): Promise<void> {
    await trx.deleteFrom('webhooks').where('workflow_id', '=', workflowId).execute();
  }

  async holderOf(trx: Transaction<Database>, path: string, method: string) {
    return trx
      .selectFrom('webhooks')
      .select(['workflow_id', 'node_name'])
      .where('path', '=', path)
      .where('method', '=', method)
      .executeTakeFirst();
  }

  /**
   * Claims webhook paths for an account where no one holds them yet, and returns who holds each
   * (this account, or the one that was first).
   */
  async claimPaths(
    trx: Transaction<Database>,
    accountId: string,
    paths: string[],
    at: string,
  ): Promise<Map<string, string>> {
    if (paths.length === 0) return new Map();
    for (const path of paths) {
      await trx
        .insertInto('webhook_claims')
        .values({ path, account_id: accountId, claimed_at: at })
        .onConflict((oc) => oc.column('path').doNothing())
        .execute();
    }
    const rows = await trx
      .selectFrom('webhook_claims')
      .select(['path', 'account_id'])
      .where('path', 'in', paths)
      .execute();
    return new Map(rows.map((r) => [r.path, r.account_id]));
  }

  /** Gives up an account's claims on paths none of its workflows declares any more. */
  async releasePaths(trx: Transaction<Database>, accountId: string, paths: string[]): Promise<void> {
    if (paths.length === 0) return;
    await trx
      .deleteFrom('webhook_claims')
      .where('account_id', '=', accountId)
      .where('path', 'in', paths)
      .execute();
  }

  /** The stored nodes of an account's workflows (to see which webhook paths they still declare). */
  async nodesOf(
    trx: Transaction<Database>,
    accountId: string,
  ): Promise<Array<{ id: string; nodes: string }>> {
    return trx.selectFrom('workflows').select(['id', 'nodes']).where('account_id', '=', accountId).execute();
  }

  /**
   * The nodes of an account's active workflows whose stored JSON names one of `types` (a cheap
   * pre-filter: the caller reads the nodes).
   */
  async activeNaming(accountId: string, types: string[]): Promise<Array<{ id: string; nodes: string }>> {
    if (types.length === 0) return [];
    return this.db
      .selectFrom('workflows')
      .select(['id', 'nodes'])
      .where('account_id', '=', accountId)
      .where('active', '=', 1)
      .where((eb) => eb.or(types.map((t) => eb('nodes', 'like', `%${t}%`))))
      .execute();
  }

  async addWebhook(
    trx: Transaction<Database>,
    hook: {
      path: string;
      method: string;
      workflow_id: string;
      node_name: string;
      account_id: string;
      dynamic_prefix: string | null;
    },
  ): Promise<void> {
    await trx.insertInto('webhooks').values(hook).execute();
  }

  /**
   * The routes registered on a fixed path, or on templates with parameters under a prefix (a webhook
   * id), every method, with the holder's current version.
   */
  async routesFor(key: { path: string } | { prefix: string }): Promise<WebhookRoute[]> {
    const query = this.db
      .selectFrom('webhooks')
      .innerJoin('workflows', 'workflows.id', 'webhooks.workflow_id')
      .select([
        'webhooks.path',
        'webhooks.method',
        'webhooks.workflow_id',
        'webhooks.node_name',
        'webhooks.account_id',
        'workflows.version',
      ]);
    return (
      'path' in key
        ? query.where('webhooks.path', '=', key.path).where('webhooks.dynamic_prefix', 'is', null)
        : query.where('webhooks.dynamic_prefix', '=', key.prefix)
    ).execute();
  }

  /**
   * Makes a workflow's webhooks listen at `/webhook-test/` until `expiresAt`: its earlier listeners go,
   * and so do expired ones of any workflow on the same path and method. Returns the workflow that
   * still listens on one of them, if another does.
   */
  async listenTest(
    trx: Transaction<Database>,
    workflowId: string,
    rows: Array<Omit<WorkflowTestWebhooksTable, 'workflow_id'>>,
    now: string,
  ): Promise<string | null> {
    await trx.deleteFrom('workflow_test_webhooks').where('workflow_id', '=', workflowId).execute();
    for (const row of rows) {
      await trx
        .deleteFrom('workflow_test_webhooks')
        .where('path', '=', row.path)
        .where('method', '=', row.method)
        .where('expires_at', '<=', now)
        .execute();
      const holder = await trx
        .selectFrom('workflow_test_webhooks')
        .select('workflow_id')
        .where('path', '=', row.path)
        .where('method', '=', row.method)
        .executeTakeFirst();
      if (holder) return holder.workflow_id;
      await trx
        .insertInto('workflow_test_webhooks')
        .values({ ...row, workflow_id: workflowId })
        .execute();
    }
    return null;
  }

  /** The listening test routes on a fixed path, or on templates under a prefix, with the current version. */
  async testRoutesFor(key: { path: string } | { prefix: string }, now: string): Promise<WebhookRoute[]> {
    let query = this.db
      .selectFrom('workflow_test_webhooks as t')
      .innerJoin('workflows', 'workflows.id', 't.workflow_id')
      .select(['t.path', 't.method', 't.workflow_id', 't.node_name', 't.account_id', 'workflows.version'])
      .where('t.expires_at', '>', now);
    query =
      'path' in key
        ? query.where('t.path', '=', key.path).where('t.dynamic_prefix', 'is', null)
        : query.where('t.dynamic_prefix', '=', key.prefix);
    return query.execute();
  }

  /** Ends a workflow's test listening; true for the one caller that found it still listening. */
  async consumeTest(workflowId: string, now: string): Promise<boolean> {
    const gone = await this.db
      .deleteFrom('workflow_test_webhooks')
      .where('workflow_id', '=', workflowId)
      .where('expires_at', '>', now)
      .executeTakeFirst();
    await this.db.deleteFrom('workflow_test_webhooks').where('workflow_id', '=', workflowId).execute();
    return Number(gone.numDeletedRows) > 0;
  }

  async markImported(trx: Transaction<Database>, workflowId: string, at: string): Promise<boolean> {
    const done = await trx
      .selectFrom('workflow_imports')
      .select('workflow_id')
      .where('workflow_id', '=', workflowId)
      .executeTakeFirst();
    if (done) return false;
    await trx.insertInto('workflow_imports').values({ workflow_id: workflowId, imported_at: at }).execute();
    return true;
  }

  transaction<T>(fn: (trx: Transaction<Database>) => Promise<T>): Promise<T> {
    return this.db.transaction().execute(fn);
  }
}
