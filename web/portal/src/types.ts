/** Shapes of the API bodies the portal reads (see the platform's OpenAPI document). */

export type MemberRole = 'owner' | 'admin' | 'developer' | 'viewer';
export const MEMBER_ROLES: readonly MemberRole[] = ['owner', 'admin', 'developer', 'viewer'];

export interface Member {
  id: string;
  email: string;
  name: string;
  role: MemberRole;
  createdAt: string;
}

export interface SignedIn {
  member: Member;
  csrfToken: string;
  expiresAt: string;
  account?: { id: string; name: string };
}

export interface SessionView {
  id: string;
  current: boolean;
  createdAt: string;
  lastSeenAt: string;
  expiresAt: string;
  ip: string | null;
  userAgent: string | null;
}

export interface Invite {
  id: string;
  email: string;
  role: MemberRole;
  inviteUrl: string;
  expiresAt: string;
}

export const SERVICES = ['core', 'workflow', 'llm', 'flow', 'docproc', 'commerce', 'game', 'agent'] as const;
export const KEY_ROLES = ['Reader', 'Writer', 'Admin', 'Custom'] as const;
export type KeyRole = (typeof KEY_ROLES)[number];
export type KeyType = 'development' | 'production';

export interface ApiKey {
  id: string;
  name: string;
  type: KeyType;
  prefix: string;
  last4: string;
  services: string[];
  role: KeyRole;
  scopes: string[];
  allowedIps: string[];
  dailyQuota: number;
  models: string[];
  dailyTokenBudget: number | null;
  status: 'active' | 'expired' | 'revoked';
  expiresAt: string;
  revokedAt: string | null;
  lastUsedAt: string | null;
  createdAt: string;
  updatedAt: string;
}

export interface ApiKeyWithSecret extends ApiKey {
  key: string;
}

export interface List<T> {
  data: T[];
  nextCursor: string | null;
}

export interface UsageRow {
  keyId: string;
  day: string;
  service: string;
  requests: number;
  rejected: number;
}

export interface TokenRow {
  keyId: string;
  day: string;
  model: string;
  requests: number;
  promptTokens: number;
  completionTokens: number;
  estimatedRequests: number;
}

export interface Usage {
  from: string;
  to: string;
  data: UsageRow[];
  tokens: TokenRow[];
  totals: { requests: number; rejected: number; promptTokens: number; completionTokens: number };
}

export interface WorkflowNode {
  id: string;
  name: string;
  type: string;
  position: [number, number];
  disabled?: boolean;
}

export interface ConnectionTarget {
  node: string;
  type: string;
  index: number;
}

export type Connections = Record<string, Record<string, Array<ConnectionTarget[] | null>>>;

export interface Workflow {
  id: string;
  name: string;
  active: boolean;
  nodes: WorkflowNode[];
  connections: Connections;
  tags: Array<{ id: string; name: string }>;
  createdAt: string;
  updatedAt: string;
}

export interface Execution {
  id: string;
  workflowId: string;
  finished: boolean;
  mode: string;
  status: string;
  startedAt: string;
  stoppedAt: string | null;
  retryOf: string | null;
}

/** One run of one node, in n8n's structure (ITaskData). */
export interface NodeRun {
  startTime: number;
  executionTime: number;
  executionStatus: 'success' | 'error';
  data: { main: Array<Array<{ json: Record<string, unknown> }> | null> };
  error?: unknown;
}

export interface ExecutionDetail extends Execution {
  workflowData?: { name?: string; nodes?: WorkflowNode[]; connections?: Connections } | null;
  data?: {
    resultData: { runData: Record<string, NodeRun[]>; lastNodeExecuted: string | null; error: unknown };
  };
}

export interface Model {
  id: string;
  owned_by?: string;
}

export interface Chatflow {
  id: string;
  name: string;
}
