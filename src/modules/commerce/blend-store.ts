import type { Selectable } from 'kysely';
import type { Db } from '../../core/db/database.js';
import { lockRow } from '../../core/db/row-lock.js';
import { newId } from '../../core/ids.js';
import type { Blend, BlendUsage, Intensity, NoteRatio } from './domain.js';
import type { BlendsTable } from './tables.js';
import './tables.js';

type BlendRow = Selectable<BlendsTable>;

function toBlend(row: BlendRow): Blend {
  return {
    id: row.id,
    accountId: row.account_id,
    owner: row.owner,
    name: row.name,
    description: row.description,
    isPublic: Number(row.is_public) === 1,
    notes: JSON.parse(row.notes) as NoteRatio[],
    baseIntensity: row.base_intensity as Intensity,
    occasions: JSON.parse(row.occasions) as string[],
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

function toRow(blend: Blend): BlendRow {
  return {
    id: blend.id,
    account_id: blend.accountId,
    owner: blend.owner,
    name: blend.name,
    name_key: blend.name.toLowerCase(),
    description: blend.description,
    is_public: blend.isPublic ? 1 : 0,
    notes: JSON.stringify(blend.notes),
    base_intensity: blend.baseIntensity,
    occasions: JSON.stringify(blend.occasions),
    created_at: blend.createdAt,
    updated_at: blend.updatedAt,
  };
}

/** Queries on blends and their usage in orders. */
export class BlendStore {
  constructor(private readonly db: Db) {}

  /**
   * Inserts a blend unless its owner holds `max` already (false then). Counted on the account's
   * locked row: a customer has no row of their own, and creates racing each see the others, so a
   * burst cannot pass the bound. Short (a count on the owner's index, one insert), so the account's
   * other customers barely wait.
   */
  async insertUnder(blend: Blend, max: number): Promise<boolean> {
    return this.db.transaction().execute(async (trx) => {
      await lockRow(trx, 'accounts', blend.accountId);
      const row = await trx
        .selectFrom('blends')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('account_id', '=', blend.accountId)
        .where('owner', '=', blend.owner)
        .executeTakeFirst();
      if (Number(row?.n ?? 0) >= max) return false;
      await trx.insertInto('blends').values(toRow(blend)).execute();
      return true;
    });
  }

  async update(blend: Blend): Promise<void> {
    const { id, account_id, owner, created_at, ...rest } = toRow(blend);
    await this.db
      .updateTable('blends')
      .set(rest)
      .where('id', '=', id)
      .where('account_id', '=', account_id)
      .execute();
  }

  async delete(accountId: string, id: string): Promise<void> {
    await this.db.deleteFrom('blends').where('id', '=', id).where('account_id', '=', accountId).execute();
  }

  /** A blend of the account that the owner may read: their own, or a public one. */
  async readable(accountId: string, owner: string, id: string): Promise<Blend | null> {
    const row = await this.db
      .selectFrom('blends')
      .selectAll()
      .where('id', '=', id)
      .where('account_id', '=', accountId)
      .where((eb) => eb.or([eb('owner', '=', owner), eb('is_public', '=', 1)]))
      .executeTakeFirst();
    return row ? toBlend(row) : null;
  }

  /** A customer's blends, at most `limit` (the per-customer bound: the list has no pages in the spec). */
  async listOwn(accountId: string, owner: string, limit: number): Promise<Blend[]> {
    const rows = await this.db
      .selectFrom('blends')
      .selectAll()
      .where('account_id', '=', accountId)
      .where('owner', '=', owner)
      .orderBy('id')
      .limit(limit)
      .execute();
    return rows.map(toBlend);
  }

  async usage(blendIds: readonly string[]): Promise<Map<string, BlendUsage[]>> {
    const out = new Map<string, BlendUsage[]>();
    if (blendIds.length === 0) return out;
    const rows = await this.db
      .selectFrom('blend_usage')
      .selectAll()
      .where('blend_id', 'in', blendIds)
      .orderBy('order_date')
      .orderBy('id')
      .execute();
    for (const r of rows) {
      const list = out.get(r.blend_id) ?? [];
      list.push({
        blendId: r.blend_id,
        productId: r.product_id,
        productName: r.product_name,
        orderId: r.order_id,
        orderDate: r.order_date,
        customerId: r.customer_id,
      });
      out.set(r.blend_id, list);
    }
    return out;
  }

  /**
   * Records that an order of `accountId` used a blend; an id that is not the account's blend is
   * ignored, and recording the same order line twice is a no-op.
   */
  async recordUsage(accountId: string, usage: BlendUsage): Promise<void> {
    const blend = await this.db
      .selectFrom('blends')
      .select('id')
      .where('id', '=', usage.blendId)
      .where('account_id', '=', accountId)
      .executeTakeFirst();
    // An order may name any id; only a blend of the ordering account records the use.
    if (!blend) return;
    await this.db
      .insertInto('blend_usage')
      .values({
        id: newId('bu'),
        blend_id: usage.blendId,
        product_id: usage.productId,
        product_name: usage.productName,
        order_id: usage.orderId,
        order_date: usage.orderDate,
        customer_id: usage.customerId,
      })
      .onConflict((oc) => oc.columns(['blend_id', 'order_id', 'product_id']).doNothing())
      .execute();
  }
}
