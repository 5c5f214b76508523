import { type Clock, isoNow } from '../../core/clock.js';
import { isUniqueViolation } from '../../core/db/database.js';
import { runList } from '../../core/db/list.js';
import { AppError, notFound } from '../../core/errors.js';
import { type ListSpec, parseListQuery } from '../../core/http/list-query.js';
import { newId } from '../../core/ids.js';
import { fromMinor, isMoneyAmount, toMinor } from '../../core/money.js';
import type { DiscountStore } from './discount-store.js';
import type { DiscountRow } from './discounts.js';
import type { CreateDiscountBodyT } from './schemas.js';

export const DISCOUNT_LIST_SPEC: ListSpec = {
  columns: { createdAt: 'created_at' },
  sortable: ['id', 'code', 'createdAt'],
  filters: { type: ['percentage', 'fixed_amount', 'free_shipping'] },
  projectable: [
    'id',
    'code',
    'description',
    'type',
    'value',
    'minSubtotal',
    'startsAt',
    'endsAt',
    'usageLimit',
    'usedCount',
    'stackable',
    'createdAt',
  ],
  defaultSort: 'id',
  defaultOrder: 'asc',
  defaultLimit: 50,
  maxLimit: 250,
};

const discountView = (d: DiscountRow) => ({
  id: d.id,
  code: d.code,
  description: d.description,
  type: d.type,
  value: d.type === 'fixed_amount' ? fromMinor(d.value) : d.value,
  minSubtotal: fromMinor(d.min_subtotal),
  startsAt: d.starts_at,
  endsAt: d.ends_at,
  usageLimit: d.usage_limit,
  usedCount: d.used_count,
  stackable: d.stackable === 1,
  createdAt: d.created_at,
});

/** Discount codes of an account (Admin). */
export class DiscountService {
  constructor(
    private readonly store: DiscountStore,
    private readonly clock: Clock,
  ) {}

  async create(accountId: string, body: CreateDiscountBodyT) {
    const problems: Array<{ field: string; message: string }> = [];
    if (body.type === 'percentage' && (!Number.isInteger(body.value) || body.value <= 0 || body.value > 100))
      problems.push({ field: 'value', message: 'a percentage is a whole number from 1 to 100' });
    if (body.type === 'fixed_amount' && (body.value <= 0 || !isMoneyAmount(body.value)))
      problems.push({ field: 'value', message: 'must be an amount above 0 with at most 2 decimals' });
    if (body.minSubtotal !== undefined && !isMoneyAmount(body.minSubtotal))
      problems.push({ field: 'minSubtotal', message: 'must be an amount with at most 2 decimals' });
    if (body.startsAt && body.endsAt && body.startsAt >= body.endsAt)
      problems.push({ field: 'endsAt', message: 'must be after startsAt' });
    if (problems.length > 0)
      throw new AppError('VALIDATION_ERROR', 'Invalid discount code', { fields: problems });
    const row: DiscountRow = {
      id: newId('disc'),
      account_id: accountId,
      code: body.code,
      code_key: body.code.toUpperCase(),
      description: body.description ?? describe(body),
      type: body.type,
      value: body.type === 'fixed_amount' ? toMinor(body.value) : body.type === 'percentage' ? body.value : 0,
      min_subtotal: toMinor(body.minSubtotal ?? 0),
      starts_at: body.startsAt ? new Date(body.startsAt).toISOString() : null,
      ends_at: body.endsAt ? new Date(body.endsAt).toISOString() : null,
      usage_limit: body.usageLimit ?? null,
      used_count: 0,
      stackable: body.stackable ? 1 : 0,
      created_at: isoNow(this.clock),
    };
    try {
      await this.store.insert(row);
    } catch (error) {
      if (isUniqueViolation(error))
        throw new AppError('CONFLICT', `Code '${body.code}' exists`, { code: body.code });
      throw error;
    }
    return discountView(row);
  }

  async list(accountId: string, rawQuery: Record<string, unknown>) {
    const query = parseListQuery(rawQuery, DISCOUNT_LIST_SPEC);
    return runList(this.store.listQuery(accountId), query, DISCOUNT_LIST_SPEC, discountView);
  }

  async delete(accountId: string, id: string) {
    const row = await this.store.byId(accountId, id);
    if (!row) throw notFound('DISCOUNT_NOT_FOUND', 'Discount code', id);
    await this.store.delete(id);
    return discountView(row);
  }
}

function describe(body: CreateDiscountBodyT): string {
  if (body.type === 'percentage') return `${body.value}% off`;
  if (body.type === 'fixed_amount') return `${body.value.toFixed(2)} off`;
  return 'Free standard shipping';
}
