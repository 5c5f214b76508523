import type { JsonText, Timestamp } from '../../core/db/types.js';

/** One authenticated request: who called what, how it ended. Never a query string, header or body. */
export interface RequestLogsTable {
  id: string;
  account_id: string;
  request_id: string;
  method: string;
  /** The path as requested, without its query string (cut to 512 characters). */
  path: string;
  /** The route's pattern (`/api/v1/workflows/:id`), for per-endpoint figures; null when none matched. */
  route: string | null;
  /** The service of the route (`core`, `workflow`, `llm`…); null on a path no route matched. */
  service: string | null;
  status: number;
  latency_ms: number;
  key_id: string | null;
  member_id: string | null;
  /** `api_key`, `customer_token` or `session`. */
  principal_kind: string;
  client_ip: string;
  user_agent: string | null;
  created_at: Timestamp;
}

/** One security-relevant change: what was done to what, by whom, from where. */
export interface AuditEventsTable {
  id: string;
  account_id: string;
  /** `key.created`, `member.role_changed`, `workflow.activated`… */
  action: string;
  /** `api_key`, `session` (a member), `customer_token`. */
  actor_type: string;
  /** The key's or the member's id. */
  actor_id: string | null;
  target_type: string;
  target_id: string | null;
  client_ip: string | null;
  user_agent: string | null;
  request_id: string | null;
  /** What changed, without secrets (field names, a role, an email). */
  details: JsonText;
  created_at: Timestamp;
}

declare module '../../core/db/types.js' {
  interface Database {
    request_logs: RequestLogsTable;
    audit_events: AuditEventsTable;
  }
}
