import type { Db } from '../../../core/db/database.js';
import { isUniqueViolation } from '../../../core/db/database.js';

/** Webhook deliveries seen recently, by dedupe key: a repeat gets the first one's answer. */
export class DeliveryStore {
  constructor(private readonly db: Db) {}

  /** Claims a key for an execution; returns the earlier claim when the key was already taken. */
  async claim(
    workflowId: string,
    nodeName: string,
    key: string,
    executionId: string,
    at: string,
    since: string,
  ): Promise<{ executionId: string; response: string | null } | null> {
    // An expired claim gives way to the new delivery.
    await this.db
      .deleteFrom('webhook_deliveries')
      .where('workflow_id', '=', workflowId)
      .where('node_name', '=', nodeName)
      .where('dedupe_key', '=', key)
      .where('created_at', '<', since)
      .execute();
    try {
      await this.db
        .insertInto('webhook_deliveries')
        .values({
          workflow_id: workflowId,
          node_name: nodeName,
          dedupe_key: key,
          execution_id: executionId,
          response: null,
          created_at: at,
        })
        .execute();
      return null;
    } catch (error) {
      if (!isUniqueViolation(error)) throw error;
    }
    const row = await this.db
      .selectFrom('webhook_deliveries')
      .select(['execution_id', 'response'])
      .where('workflow_id', '=', workflowId)
      .where('node_name', '=', nodeName)
      .where('dedupe_key', '=', key)
      .executeTakeFirst();
    // Deleted between insert and read (pruned): treat as first delivery is not possible here; report it taken.
    return { executionId: row?.execution_id ?? executionId, response: row?.response ?? null };
  }

  async setResponse(workflowId: string, nodeName: string, key: string, response: string): Promise<void> {
    await this.db
      .updateTable('webhook_deliveries')
      .set({ response })
      .where('workflow_id', '=', workflowId)
      .where('node_name', '=', nodeName)
      .where('dedupe_key', '=', key)
      .execute();
  }

  /** Releases a claim whose delivery was not accepted (so the sender's retry can run). */
  async release(workflowId: string, nodeName: string, key: string, executionId: string): Promise<void> {
    await this.db
      .deleteFrom('webhook_deliveries')
      .where('workflow_id', '=', workflowId)
      .where('node_name', '=', nodeName)
      .where('dedupe_key', '=', key)
      .where('execution_id', '=', executionId)
      .execute();
  }

  async prune(before: string): Promise<void> {
    await this.db.deleteFrom('webhook_deliveries').where('created_at', '<', before).execute();
  }
}
