import { ALL_SERVICES } from '../../config.js';
import {
  expandScopes,
  isCapabilityScope,
  type KeyType,
  MODEL_SCOPE_PREFIX,
  mayUseAnyCredential,
  type Principal,
  type Role,
} from '../../core/auth/principal.js';
import { AppError } from '../../core/errors.js';
import { cidrsWithin, isValidCidr } from '../../core/http/ip-rules.js';

export interface Grant {
  role: Role;
  services: readonly string[];
  scopes: readonly string[];
}

type Problem = { field: string; message: string };

/** Checks a key's grant for consistency; every problem in one 400. */
export function validateGrant(grant: Grant, allowedIps: readonly string[] | undefined): void {
  const problems: Problem[] = [];
  if (grant.services.includes('*') && grant.services.length > 1) {
    problems.push({ field: 'services', message: "'*' (all services) stands alone" });
  }
  // Capability scopes (credentials:use) go with any role; the rules below are about the others.
  const scopes = grant.scopes.filter((scope) => !isCapabilityScope(scope));
  if (grant.role === 'Custom') {
    if (scopes.length === 0) problems.push({ field: 'scopes', message: 'the Custom role needs scopes' });
    // Model scopes only narrow the llm service: alone they would make a key that can do nothing.
    else if (scopes.every((scope) => scope.startsWith(MODEL_SCOPE_PREFIX)))
      problems.push({
        field: 'scopes',
        message: 'model scopes restrict llm, they grant nothing: add a service:operation scope',
      });
    for (const scope of scopes) {
      const [service = ''] = scope.split(':');
      const known = service === '*' || (ALL_SERVICES as readonly string[]).includes(service);
      if (!known) problems.push({ field: 'scopes', message: `'${scope}' names an unknown service` });
      else if (service !== '*' && !grant.services.includes('*') && !grant.services.includes(service)) {
        problems.push({ field: 'scopes', message: `'${scope}' is for a service the key does not have` });
      }
    }
  } else if (scopes.length > 0) {
    problems.push({
      field: 'scopes',
      message: 'scopes other than credentials:use are set only with the Custom role',
    });
  }
  for (const cidr of allowedIps ?? []) {
    if (!isValidCidr(cidr))
      problems.push({ field: 'allowedIps', message: `'${cidr}' is not an IP address or CIDR` });
  }
  if (problems.length > 0)
    throw new AppError('VALIDATION_ERROR', 'Invalid key settings', { fields: problems });
}

/** The limits of a key besides its grant: what a managing key may not exceed either. */
export interface KeyBounds {
  type: KeyType;
  expiresAtMs: number;
  /** Effective requests per UTC day. */
  dailyQuota: number;
  /** CIDRs; empty = any address. */
  allowedIps: readonly string[];
  /** Models of the llm service (its `models` and model scopes together); null = any. */
  models: readonly string[] | null;
  /** Language-model tokens per UTC day; null = none. */
  dailyTokenBudget: number | null;
}

/**
 * A caller may not create, change, rotate or revoke a key that exceeds it: scopes it does not
 * hold, or (for a key caller, whose bounds are given) a production type from a development key,
 * a later expiry, a higher daily quota, addresses outside its own rules, models outside its own
 * (or any model, when it has a list), or a larger token budget (or none, when it has one).
 * Throws FORBIDDEN.
 */
export function assertWithinCaller(
  key: Grant & Partial<KeyBounds>,
  caller: Principal | null,
  callerBounds: KeyBounds | null = null,
): void {
  if (!caller) return;
  const held = new Set(expandScopes(caller, ALL_SERVICES));
  const wanted = expandScopes(key, ALL_SERVICES);
  const excess = wanted.filter((s) => !held.has(s));
  if (excess.length > 0) {
    throw new AppError('FORBIDDEN', 'A key cannot grant or manage scopes it does not hold', {
      scopes: excess,
    });
  }
  if (!callerBounds) return;
  const exceeds: string[] = [];
  if (key.type === 'production' && callerBounds.type === 'development') exceeds.push('type');
  if (key.expiresAtMs !== undefined && key.expiresAtMs > callerBounds.expiresAtMs) exceeds.push('expiresAt');
  if (key.dailyQuota !== undefined && key.dailyQuota > callerBounds.dailyQuota) exceeds.push('dailyQuota');
  if (key.allowedIps !== undefined && !cidrsWithin(key.allowedIps, callerBounds.allowedIps))
    exceeds.push('allowedIps');
  const callerModels = callerBounds.models;
  if (
    callerModels !== null &&
    key.models !== undefined &&
    (key.models === null || key.models.some((model) => !callerModels.includes(model)))
  )
    exceeds.push('models');
  const callerBudget = callerBounds.dailyTokenBudget;
  if (
    callerBudget !== null &&
    key.dailyTokenBudget !== undefined &&
    (key.dailyTokenBudget === null || key.dailyTokenBudget > callerBudget)
  )
    exceeds.push('dailyTokenBudget');
  if (exceeds.length > 0) {
    throw new AppError('FORBIDDEN', `A key cannot exceed the key that manages it (${exceeds.join(', ')})`, {
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
}

/** A caller gives `credentials:use` only when it holds it (Admin or the scope). Throws FORBIDDEN. */
export function assertCapabilitiesWithinCaller(scopes: readonly string[], caller: Principal | null): void {
  if (caller && scopes.some(isCapabilityScope) && !mayUseAnyCredential(caller))
    throw new AppError('FORBIDDEN', 'A key cannot grant credentials:use without holding it', {
      scopes: scopes.filter(isCapabilityScope),
    });
}
