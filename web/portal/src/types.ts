/**
 * Shapes of the API bodies the portal reads, taken from the SDK's generated OpenAPI types so a
 * change of the document shows here as a type error. Imports of types only: the bundle holds none.
 */
import type { paths } from '../../../sdk/schema.js';

/** The JSON body of one response of the document. */
type Json<R> = R extends { content: { 'application/json': infer B } } ? B : never;

type MemberList = Json<paths['/v1/members']['get']['responses'][200]>;
export type Member = MemberList['data'][number];
export type MemberRole = Member['role'];
export const MEMBER_ROLES: readonly MemberRole[] = ['owner', 'admin', 'developer', 'viewer'];

type SessionBody = Json<paths['/v1/auth/session']['get']['responses'][200]>;
/** What sign-in, setup and invite acceptance answer; the session read adds the account. */
export type SignedIn = Json<paths['/v1/auth/login']['post']['responses'][200]> &
  Partial<Pick<SessionBody, 'account'>>;

export type SessionView = Json<paths['/v1/auth/sessions']['get']['responses'][200]>['data'][number];

export type Invite = Json<paths['/v1/members/invites']['post']['responses'][201]>;

export const SERVICES = ['core', 'workflow', 'llm', 'flow', 'docproc', 'commerce', 'game', 'agent'] as const;
export const KEY_ROLES = ['Reader', 'Writer', 'Admin', 'Custom'] as const;
export type KeyRole = (typeof KEY_ROLES)[number];
export type KeyType = ApiKey['type'];

/**
 * A key as the key routes answer it. `Required`: the document leaves scopes, allowedIps,
 * dailyQuota, revokedAt, lastUsedAt and updatedAt out of `required` (ApiKeyView in
 * src/modules/auth/schemas.ts), yet every key view carries them, and lists asked without `fields`.
 */
export type ApiKey = Required<Json<paths['/v1/api-keys/{id}']['get']['responses'][200]>>;
export type ApiKeyWithSecret = Required<Json<paths['/v1/api-keys']['post']['responses'][201]>>;

/** A page of a cursor list (every list route answers this envelope). */
export interface List<T> {
  data: T[];
  nextCursor: string | null;
}

export type Usage = Json<paths['/v1/usage']['get']['responses'][200]>;
export type UsageRow = Usage['data'][number];
export type TokenRow = Usage['tokens'][number];

/**
 * n8n's connections: source node → connection type → output index → targets. The document types
 * them as `unknown` (their keys are node names), so this one shape is the portal's own.
 */
export interface ConnectionTarget {
  node: string;
  type: string;
  index: number;
}
export type Connections = Record<string, Record<string, Array<ConnectionTarget[] | null>>>;

type WorkflowBody = Json<paths['/api/v1/workflows/{id}']['get']['responses'][200]>;
export type Workflow = Omit<WorkflowBody, 'connections'> & { connections: Connections };
export type WorkflowNode = Workflow['nodes'][number];
/** A row of the workflow list asked with `fields=id,name,active,tags,updatedAt`. */
export type WorkflowSummary = Required<
  Pick<
    Json<paths['/api/v1/workflows']['get']['responses'][200]>['data'][number],
    'id' | 'name' | 'active' | 'tags' | 'updatedAt'
  >
>;

export type Execution = Json<paths['/api/v1/executions/{id}/retry']['post']['responses'][201]>;
type ExecutionBody = Json<paths['/api/v1/executions/{id}']['get']['responses'][200]>;
/** One run of one node, in n8n's structure (ITaskData). */
export type NodeRun = NonNullable<ExecutionBody['data']>['resultData']['runData'][string][number];
/**
 * An execution read with its data. The document types `workflowData` (the workflow as it ran) as
 * `unknown`; the page reads its name, nodes and connections.
 */
export type ExecutionDetail = Omit<ExecutionBody, 'workflowData'> & {
  workflowData?: { name?: string; nodes?: WorkflowNode[]; connections?: Connections } | null;
};

export type Model = Json<paths['/v1/models']['get']['responses'][200]>['data'][number];

export type Chatflow = Json<paths['/api/v1/chatflows']['get']['responses'][200]>[number];

/** A row of the request log; lists items lose `required` (fields may project), every row has them all. */
export type RequestLogRow = Required<
  Json<paths['/v1/request-logs']['get']['responses'][200]>['data'][number]
>;
export type LlmRequestRow = Required<
  Json<paths['/v1/llm/requests']['get']['responses'][200]>['data'][number]
>;
export type AuditEvent = Required<Json<paths['/v1/audit-events']['get']['responses'][200]>['data'][number]>;
export type RequestSummary = Json<paths['/v1/request-logs/summary']['get']['responses'][200]>;
