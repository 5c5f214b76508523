import type { ServiceId } from '../../config.js';

export const ROLES = ['Reader', 'Writer', 'Admin', 'Custom'] as const;
export type Role = (typeof ROLES)[number];
const OPERATIONS = ['read', 'write', 'delete', 'admin'] as const;
export type Operation = (typeof OPERATIONS)[number];
export type KeyType = 'development' | 'production';

/** Who is calling: an API key, a customer token minted by a key, or a signed-in account. */
export interface Principal {
  kind: 'api_key' | 'customer_token' | 'session';
  accountId: string;
  /** The key (for a token: the issuing key) whose quota the request counts against. */
  keyId: string | null;
  keyType: KeyType | null;
  /** Services the principal may use; `*` means all. */
  services: readonly string[];
  role: Role;
  /** Explicit scopes of Custom roles and tokens: `service:operation`, and `llm:model:<name>` on keys. */
  scopes: readonly string[];
  customerId: string | null;
  /** Requests per UTC day; null when not quota-limited (sessions). */
  dailyQuota: number | null;
  /**
   * Models of the `llm` service the principal may use; null means any. For a key: the union of its
   * `models` and its `llm:model:*` scopes. A customer token has its issuing key's.
   */
  models: readonly string[] | null;
  /** Language-model tokens (prompt + completion) per UTC day; null when not limited. */
  dailyTokenBudget: number | null;
  /** Client IP rules, checked by the auth hook; null means any address. */
  ipAllowed: ((ip: string) => boolean) | null;
  /**
   * When the presented credential stops working before its key does: the previous value of a
   * rotated key, at the end of its grace period. What it creates (customer tokens) ends then too.
   */
  credentialEndsAtMs?: number;
  /** The signed-in member, for a session: what it creates (credentials, workflows) is owned by it. */
  memberId?: string;
}

/**
 * A capability scope, allowed on a key of any role: use every credential of the account in the
 * workflows it saves or runs, not only those it owns or that are shared with it. Admin holds it.
 */
const CREDENTIALS_USE_SCOPE = 'credentials:use';
const CAPABILITY_SCOPES: readonly string[] = [CREDENTIALS_USE_SCOPE];
export const isCapabilityScope = (scope: string): boolean => CAPABILITY_SCOPES.includes(scope);

/** Whether the principal may use every credential of its account; null (the CLI, the operator) may. */
export function mayUseAnyCredential(principal: Pick<Principal, 'role' | 'scopes'> | null): boolean {
  return principal === null || principal.role === 'Admin' || principal.scopes.includes(CREDENTIALS_USE_SCOPE);
}

/** Custom scopes that name a model restrict the `llm` service to it; they grant no operation. */
export const MODEL_SCOPE_PREFIX = 'llm:model:';

/**
 * The models a key may use: its `models` list joined with the models its scopes name; null (any
 * model) when neither names one.
 */
export function modelsOf(models: readonly string[], scopes: readonly string[]): string[] | null {
  const named = new Set(models);
  for (const scope of scopes)
    if (scope.startsWith(MODEL_SCOPE_PREFIX)) named.add(scope.slice(MODEL_SCOPE_PREFIX.length));
  return named.size > 0 ? [...named] : null;
}

/** Whether the principal may use the model of the `llm` service (its services and scopes aside). */
export function mayUseModel(principal: Pick<Principal, 'models'>, name: string): boolean {
  return principal.models === null || principal.models.includes(name);
}

/** read = GET/HEAD, write = POST/PUT/PATCH, delete = DELETE (DESIGN.md). */
export function operationFor(method: string): Operation {
  switch (method) {
    case 'GET':
    case 'HEAD':
    case 'OPTIONS':
      return 'read';
    case 'DELETE':
      return 'delete';
    default:
      return 'write';
  }
}

const ROLE_OPERATIONS: Record<Exclude<Role, 'Custom'>, readonly Operation[]> = {
  Reader: ['read'],
  Writer: ['read', 'write'],
  Admin: ['read', 'write', 'delete', 'admin'],
};

export function hasService(principal: Pick<Principal, 'services'>, service: ServiceId | string): boolean {
  return principal.services.includes('*') || principal.services.includes(service);
}

/** Whether the principal holds `service:operation` (service membership is checked separately). */
export function hasScope(
  principal: Pick<Principal, 'role' | 'scopes' | 'services'>,
  service: string,
  operation: Operation,
): boolean {
  if (!hasService(principal, service)) return false;
  if (principal.role === 'Custom') {
    return (
      principal.scopes.includes(`${service}:${operation}`) || principal.scopes.includes(`*:${operation}`)
    );
  }
  return ROLE_OPERATIONS[principal.role].includes(operation);
}

/** Every concrete scope a principal holds, for token minting and display. */
export function expandScopes(
  principal: Pick<Principal, 'role' | 'scopes' | 'services'>,
  allServices: readonly string[],
): string[] {
  const services = principal.services.includes('*') ? allServices : principal.services;
  const out: string[] = [];
  for (const service of services) {
    for (const op of OPERATIONS) if (hasScope(principal, service, op)) out.push(`${service}:${op}`);
  }
  return out;
}

/**
 * The account as a principal for accounting only (its workflows' and documents' own model calls): no
 * service, no key and so no key budget, any model as the account's members have; it can do nothing but
 * be charged and recorded.
 */
export function accountPrincipal(accountId: string): Principal {
  return {
    kind: 'session',
    accountId,
    keyId: null,
    keyType: null,
    services: [],
    role: 'Reader',
    scopes: [],
    customerId: null,
    dailyQuota: null,
    models: null,
    dailyTokenBudget: null,
    ipAllowed: null,
  };
}
