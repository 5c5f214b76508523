import type { Bool, JsonText, Timestamp } from '../../core/db/types.js';

export interface WorkflowsTable {
  id: string;
  account_id: string;
  name: string;
  active: Bool;
  /** Bumped on every change; executions point at (id, version) in workflow_versions. */
  version: number;
  nodes: JsonText;
  connections: JsonText;
  settings: JsonText;
  /** Tag names, a JSON array of strings (read with tagsOf). */
  tags: JsonText;
  /** n8n's pinData, staticData and meta, as given (null: none). */
  pin_data: JsonText | null;
  static_data: JsonText | null;
  meta: JsonText | null;
  /** n8n's versionId: a UUID, new on every save unless the body gives one. */
  version_id: string;
  /**
   * Whose credential rights the workflow runs with: who saved its current version (`key:<id>`,
   * `member:<id>`), or `account` when that principal could use every credential (and for workflows
   * saved before owners existed).
   */
  saved_by: string;
  /** n8n's isArchived: a soft-deleted workflow (inactive; not changed, activated or run until unarchived). */
  archived: Bool;
  created_at: Timestamp;
  updated_at: Timestamp;
}

/** Each saved shape of a workflow, so an execution shows the workflow as it ran. */
export interface WorkflowVersionsTable {
  workflow_id: string;
  version: number;
  /** The whole definition: {id, name, nodes, connections, settings}. */
  definition: JsonText;
  created_at: Timestamp;
}

/** Webhook paths held by active workflows; the primary key makes a taken path a conflict. */
export interface WebhooksTable {
  path: string;
  method: string;
  workflow_id: string;
  node_name: string;
  account_id: string;
  /** Set for a path with parameters (`{webhookId}/users/:id`): its first segment. */
  dynamic_prefix: string | null;
}

/** A key a Remove Duplicates node has seen (scope '' is the workflow's, else the node id). */
export interface WorkflowDedupeKeysTable {
  workflow_id: string;
  scope: string;
  key_hash: string;
  created_at: string;
}

/** The highest number (`kind` 'number') or date (`kind` 'date', epoch ms) a scope has seen. */
export interface WorkflowDedupeLatestTable {
  workflow_id: string;
  scope: string;
  kind: string;
  value: number;
}

/** A Schedule Trigger rule of an active workflow (`spec`: schedule/rules.ts ScheduleSpec as JSON). */
export interface WorkflowSchedulesTable {
  workflow_id: string;
  node_name: string;
  rule_index: number;
  account_id: string;
  spec: string;
  next_fire_at: string;
  last_fire_at: string | null;
}

/** A webhook path listening at `/webhook-test/` for one call (n8n's test webhooks). */
export interface WorkflowTestWebhooksTable {
  path: string;
  method: string;
  workflow_id: string;
  node_name: string;
  account_id: string;
  dynamic_prefix: string | null;
  expires_at: string;
}

/** Which account holds a webhook path (whatever the method, active or not). */
export interface WebhookClaimsTable {
  path: string;
  account_id: string;
  claimed_at: Timestamp;
}

export interface CredentialsTable {
  id: string;
  account_id: string;
  name: string;
  type: string;
  /** AES-256-GCM sealed JSON. */
  data: string;
  /** Who created it: `key:<id>`, `member:<id>`, or `account` (the operator; credentials made before owners). */
  owner: string;
  created_at: Timestamp;
  updated_at: Timestamp;
}

/** A pending OAuth2 consent of a credential (credentials/oauth2/consent-store.ts). */
export interface CredentialOauthStatesTable {
  id: string;
  account_id: string;
  credential_id: string;
  /** Who started it (`key:<id>`, `member:<id>`, `account`). */
  actor: string;
  /** SHA-256 of the one-time browser ticket; null once a browser claimed it. */
  ticket_hash: string | null;
  /** SHA-256 of the claiming browser's cookie nonce. */
  browser_hash: string | null;
  /** SHA-256 of the state's secret part, set when the browser is sent to the provider. */
  state_hash: string | null;
  /** The PKCE verifier, sealed. */
  code_verifier: string;
  expires_at: Timestamp;
  created_at: Timestamp;
}

/** A renewal of an OAuth2 credential's token in progress (credentials/oauth2/renewal-lease.ts). */
export interface CredentialOauthRenewalsTable {
  credential_id: string;
  /** The renewing process's random id: only it releases the row. */
  holder: string;
  /** When another process may take the renewal over (the holder died or hangs). */
  expires_at: Timestamp;
}

/** A credential shared with another principal of its account (n8n's shared credentials). */
export interface CredentialSharesTable {
  credential_id: string;
  /** `key:<id>` or `member:<id>`. */
  principal: string;
  account_id: string;
  created_at: Timestamp;
}

/** `canceled`: stopped through the API before it ended (n8n's name). */
export type StoredExecutionStatus = 'new' | 'running' | 'success' | 'error' | 'waiting' | 'canceled';

export interface ExecutionsTable {
  id: string;
  account_id: string;
  workflow_id: string;
  workflow_version: number;
  mode: string;
  status: StoredExecutionStatus;
  finished: Bool;
  retry_of: string | null;
  /** The webhook node and items the run starts from (kept for retries and crash recovery). */
  trigger_data: JsonText;
  /** The engine's RunState (null until the run stops). */
  run_data: JsonText | null;
  error_message: string | null;
  /** The webhook answer the workflow chose (responseNode / lastNode), for deduplicated repeats. */
  response: JsonText | null;
  wait_till: Timestamp | null;
  started_at: Timestamp;
  stopped_at: Timestamp | null;
}

export interface WebhookDeliveriesTable {
  workflow_id: string;
  node_name: string;
  dedupe_key: string;
  execution_id: string;
  /** {statusCode, headers, body} of the first delivery, once known. */
  response: JsonText | null;
  created_at: Timestamp;
}

export interface WorkflowImportsTable {
  workflow_id: string;
  imported_at: Timestamp;
}

/** Executions an account started on a UTC day (the daily execution quota's counter without Redis). */
export interface WorkflowExecutionCountsTable {
  account_id: string;
  /** YYYY-MM-DD, UTC. */
  day: string;
  count: number;
}

declare module '../../core/db/types.js' {
  interface Database {
    workflows: WorkflowsTable;
    workflow_versions: WorkflowVersionsTable;
    webhooks: WebhooksTable;
    webhook_claims: WebhookClaimsTable;
    workflow_dedupe_keys: WorkflowDedupeKeysTable;
    workflow_schedules: WorkflowSchedulesTable;
    workflow_execution_counts: WorkflowExecutionCountsTable;
    workflow_test_webhooks: WorkflowTestWebhooksTable;
    workflow_dedupe_latest: WorkflowDedupeLatestTable;
    credentials: CredentialsTable;
    credential_shares: CredentialSharesTable;
    credential_oauth_states: CredentialOauthStatesTable;
    credential_oauth_renewals: CredentialOauthRenewalsTable;
    executions: ExecutionsTable;
    webhook_deliveries: WebhookDeliveriesTable;
    workflow_imports: WorkflowImportsTable;
  }
}
