import { validationError } from '../../core/errors.js';
import type { FlowMessageRow, FlowStore, MessageFilter } from './flow-store.js';
import type { MessageQueryT } from './schemas.js';

/** Messages answered at once: Flowise pages nothing, so the list is capped instead. */
const DEFAULT_LIMIT = 1_000;

/** A date filter as an ISO instant (Flowise sends dates or full timestamps); a bad one is a 400. */
function instant(value: string | undefined, field: string, endOfDay: boolean): string | undefined {
  if (value === undefined) return undefined;
  const dateOnly = /^\d{4}-\d{2}-\d{2}$/.test(value);
  const ms = Date.parse(dateOnly ? `${value}T${endOfDay ? '23:59:59.999' : '00:00:00.000'}Z` : value);
  if (Number.isNaN(ms))
    throw validationError(`Invalid ${field}`, [{ field, message: 'must be a date or an ISO 8601 time' }]);
  return new Date(ms).toISOString();
}

export function messageFilterOf(query: MessageQueryT): MessageFilter {
  const filter: MessageFilter = {};
  if (query.chatId !== undefined) filter.chatId = query.chatId;
  if (query.sessionId !== undefined) filter.sessionId = query.sessionId;
  const start = instant(query.startDate, 'startDate', false);
  const end = instant(query.endDate, 'endDate', true);
  if (start !== undefined) filter.startDate = start;
  if (end !== undefined) filter.endDate = end;
  return filter;
}

function messageView(row: FlowMessageRow) {
  return {
    id: row.id,
    role: row.role as 'userMessage' | 'apiMessage',
    chatflowid: row.flow_id,
    content: row.content,
    sourceDocuments: row.source_documents,
    usedTools: row.used_tools ?? null,
    chatType: 'EXTERNAL' as const,
    chatId: row.chat_id,
    sessionId: row.session_id,
    memoryType: row.memory_type,
    createdDate: row.created_at,
  };
}

export async function listMessages(store: FlowStore, flowId: string, query: MessageQueryT) {
  const order = (query.sort ?? query.order ?? 'ASC').toLowerCase() as 'asc' | 'desc';
  const rows = await store.messages(flowId, messageFilterOf(query), order, query.limit ?? DEFAULT_LIMIT);
  return rows.map(messageView);
}
