import type { Clock } from '../../core/clock.js';
import type { Db } from '../../core/db/database.js';
import { runList } from '../../core/db/list.js';
import { type ListSpec, parseListQuery } from '../../core/http/list-query.js';
import { takeTimeRange } from '../../core/http/time-range.js';
import { newId } from '../../core/ids.js';
import type { AuditEventsTable } from './tables.js';

/** One security-relevant change, as the code that saw it describes it. */
export interface AuditEvent {
  accountId: string;
  action: string;
  actorType: string;
  actorId: string | null;
  targetType: string;
  targetId: string | null;
  clientIp: string | null;
  userAgent: string | null;
  requestId: string | null;
  /** Field names, roles, emails: never a secret. */
  details?: Record<string, unknown>;
}

export const AUDIT_LIST_SPEC: ListSpec = {
  columns: {
    action: 'action',
    actorType: 'actor_type',
    actorId: 'actor_id',
    targetType: 'target_type',
    targetId: 'target_id',
    requestId: 'request_id',
  },
  sortable: ['id'],
  filters: {
    action: 'string',
    actorType: 'string',
    actorId: 'string',
    targetType: 'string',
    targetId: 'string',
    requestId: 'string',
    from: 'string',
    to: 'string',
  },
  projectable: [
    'id',
    'action',
    'actorType',
    'actorId',
    'targetType',
    'targetId',
    'clientIp',
    'userAgent',
    'requestId',
    'details',
    'createdAt',
  ],
  defaultSort: 'id',
  defaultOrder: 'desc',
  defaultLimit: 50,
  maxLimit: 500,
};

const view = (row: AuditEventsTable) => ({
  id: row.id,
  action: row.action,
  actorType: row.actor_type,
  actorId: row.actor_id,
  targetType: row.target_type,
  targetId: row.target_id,
  clientIp: row.client_ip,
  userAgent: row.user_agent,
  requestId: row.request_id,
  details: JSON.parse(row.details) as Record<string, unknown>,
  createdAt: row.created_at,
});

/**
 * The audit trail: written at once (a change is rare and must not be lost with a process), kept
 * without end, listed newest first per account.
 */
export class AuditLog {
  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
  ) {}

  async record(event: AuditEvent): Promise<void> {
    await this.db
      .insertInto('audit_events')
      .values({
        id: newId('aud'),
        account_id: event.accountId,
        action: event.action,
        actor_type: event.actorType,
        actor_id: event.actorId,
        target_type: event.targetType,
        target_id: event.targetId,
        client_ip: event.clientIp,
        user_agent:
          event.userAgent && event.userAgent.length > 256 ? event.userAgent.slice(0, 256) : event.userAgent,
        request_id: event.requestId,
        details: JSON.stringify(event.details ?? {}),
        created_at: this.clock.now().toISOString(),
      })
      .execute();
  }

  /** Newest first; filters action, actorType, actorId, targetType, targetId, requestId, from, to. */
  async list(accountId: string, rawQuery: Record<string, unknown>) {
    const query = parseListQuery(rawQuery, AUDIT_LIST_SPEC);
    const range = takeTimeRange(query);
    let base = this.db.selectFrom('audit_events').selectAll().where('account_id', '=', accountId);
    if (range.from) base = base.where('created_at', '>=', range.from);
    if (range.to) base = base.where('created_at', '<', range.to);
    return runList(base, query, AUDIT_LIST_SPEC, view);
  }
}
