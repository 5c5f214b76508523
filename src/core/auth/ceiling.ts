import { ALL_SERVICES } from '../../config.js';
import { AppError } from '../errors.js';
import { cidrsWithin } from '../http/ip-rules.js';
import { expandScopes, hasScope, type KeyType, type Principal, type Role } from './principal.js';

/**
 * Privilege ceilings: nothing a caller creates or changes may hold more than the caller. Every route
 * that makes something which grants access (keys, customer tokens, member invites and roles, flows
 * and agents that run workflows) asks here, so there is one rule and one error for it.
 */

/** What something grants: a role, its services and (Custom) its scopes. */
export interface Grant {
  role: Role;
  services: readonly string[];
  scopes: readonly string[];
}

/** The limits besides a grant: what a creator may not exceed either. */
export interface Bounds {
  type: KeyType;
  expiresAtMs: number;
  /** Effective requests per UTC day. */
  dailyQuota: number;
  /** CIDRs; empty = any address. */
  allowedIps: readonly string[];
  /** Models of the llm service; null = any. */
  models: readonly string[] | null;
  /** Language-model tokens per UTC day; null = none. */
  dailyTokenBudget: number | null;
}

/** The scopes `wanted` would hold that `caller` does not. */
export function excessScopes(caller: Principal, wanted: Grant | readonly string[]): string[] {
  const held = new Set(expandScopes(caller, ALL_SERVICES));
  const scopes = Array.isArray(wanted) ? wanted : expandScopes(wanted as Grant, ALL_SERVICES);
  return (scopes as readonly string[]).filter((s) => !held.has(s));
}

/** Which of `wanted`'s bounds reach past `ceiling` (fields given as undefined are not compared). */
function exceededBounds(wanted: Partial<Bounds>, ceiling: Bounds): string[] {
  const exceeds: string[] = [];
  if (wanted.type === 'production' && ceiling.type === 'development') exceeds.push('type');
  if (wanted.expiresAtMs !== undefined && wanted.expiresAtMs > ceiling.expiresAtMs) exceeds.push('expiresAt');
  if (wanted.dailyQuota !== undefined && wanted.dailyQuota > ceiling.dailyQuota) exceeds.push('dailyQuota');
  if (wanted.allowedIps !== undefined && !cidrsWithin(wanted.allowedIps, ceiling.allowedIps))
    exceeds.push('allowedIps');
  const models = ceiling.models;
  if (
    models !== null &&
    wanted.models !== undefined &&
    (wanted.models === null || wanted.models.some((model) => !models.includes(model)))
  )
    exceeds.push('models');
  const budget = ceiling.dailyTokenBudget;
  if (
    budget !== null &&
    wanted.dailyTokenBudget !== undefined &&
    (wanted.dailyTokenBudget === null || wanted.dailyTokenBudget > budget)
  )
    exceeds.push('dailyTokenBudget');
  return exceeds;
}

/**
 * Throws FORBIDDEN when `wanted` holds a scope the caller does not, or (for a key caller, whose
 * bounds are given) any bound past the caller's. A null caller (the CLI, bootstrap) has no ceiling.
 */
export function assertWithinCeiling(
  wanted: Grant & Partial<Bounds>,
  caller: Principal | null,
  callerBounds: Bounds | null,
  what: string,
): void {
  if (!caller) return;
  const excess = excessScopes(caller, wanted);
  if (excess.length > 0)
    throw new AppError('FORBIDDEN', `${what} cannot hold scopes the caller does not hold`, {
      scopes: excess,
    });
  if (!callerBounds) return;
  const exceeds = exceededBounds(wanted, callerBounds);
  if (exceeds.length > 0)
    throw new AppError('FORBIDDEN', `${what} cannot exceed the key that makes it (${exceeds.join(', ')})`, {
      exceeds,
      caller: {
        type: callerBounds.type,
        expiresAt: new Date(callerBounds.expiresAtMs).toISOString(),
        dailyQuota: callerBounds.dailyQuota,
        allowedIps: callerBounds.allowedIps,
        models: callerBounds.models,
        dailyTokenBudget: callerBounds.dailyTokenBudget,
      },
    });
}

/**
 * The bounds of an unbounded principal (a signed-in member): what something reaching as far as a
 * member (an invite, a role) carries. Expiry and request quota are not compared (see docs/security.md).
 */
const UNBOUNDED: Omit<Bounds, 'expiresAtMs' | 'dailyQuota'> = {
  type: 'production',
  allowedIps: [],
  models: null,
  dailyTokenBudget: null,
};

/**
 * May the caller make someone who acts as `grant` with no bounds (a member of the account)? A key
 * must hold every scope of it and be unbounded itself: a production key without address rules,
 * model list or token budget. Sessions are bounded by their role alone.
 */
export function assertMayGrantUnbounded(caller: Principal, grant: Grant, what: string): void {
  const excess = excessScopes(caller, grant);
  const exceeds: string[] = [];
  if (caller.kind !== 'session') {
    if (caller.kind === 'customer_token') exceeds.push('kind');
    if (caller.keyType !== UNBOUNDED.type) exceeds.push('type');
    if (caller.ipAllowed !== null) exceeds.push('allowedIps');
    if (caller.models !== null) exceeds.push('models');
    if (caller.dailyTokenBudget !== null) exceeds.push('dailyTokenBudget');
  }
  if (excess.length === 0 && exceeds.length === 0) return;
  throw new AppError('FORBIDDEN', `${what} would hold more than the caller`, {
    ...(excess.length > 0 ? { scopes: excess } : {}),
    ...(exceeds.length > 0 ? { exceeds } : {}),
  });
}

/**
 * Running a workflow through another entry point (a flow, an agent's tool) takes the right to run it
 * directly: `workflow:write`, as `POST /api/v1/workflows/{id}/run` does. Whoever saves a flow or an
 * agent that runs workflows must hold it; the flow or agent then runs them for its callers.
 */
const RUN_WORKFLOW = { service: 'workflow', operation: 'write' } as const;

export function assertMayRunWorkflows(caller: Principal, workflowIds: readonly string[]): void {
  if (workflowIds.length === 0 || hasScope(caller, RUN_WORKFLOW.service, RUN_WORKFLOW.operation)) return;
  throw new AppError(
    'FORBIDDEN',
    'Running a workflow from here needs the right to run it directly: the workflow service with workflow:write',
    { requiredScope: 'workflow:write', workflowIds },
  );
}
