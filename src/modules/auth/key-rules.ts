import { ALL_SERVICES } from '../../config.js';
import { assertWithinCeiling, type Bounds, type Grant } from '../../core/auth/ceiling.js';
import {
  isCapabilityScope,
  MODEL_SCOPE_PREFIX,
  mayUseAnyCredential,
  type Principal,
} from '../../core/auth/principal.js';
import { AppError } from '../../core/errors.js';
import { isValidCidr } from '../../core/http/ip-rules.js';

export type { Grant } from '../../core/auth/ceiling.js';

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
export type KeyBounds = Bounds;

/**
 * A caller may not create, change, rotate or revoke a key that exceeds it: scopes it does not
 * hold, or (for a key caller, whose bounds are given) a production type from a development key,
 * a later expiry, a higher daily quota, addresses outside its own rules, models outside its own
 * (or any model, when it has a list), or a larger token budget (or none, when it has one).
 * The platform's one ceiling check (core/auth/ceiling.ts). Throws FORBIDDEN.
 */
export function assertWithinCaller(
  key: Grant & Partial<KeyBounds>,
  caller: Principal | null,
  callerBounds: KeyBounds | null = null,
): void {
  assertWithinCeiling(key, caller, callerBounds, 'A key');
}

/** A caller gives `credentials:use` only when it holds it (Admin or the scope). Throws FORBIDDEN. */
export function assertCapabilitiesWithinCaller(scopes: readonly string[], caller: Principal | null): void {
  if (caller && scopes.some(isCapabilityScope) && !mayUseAnyCredential(caller))
    throw new AppError('FORBIDDEN', 'A key cannot grant credentials:use without holding it', {
      scopes: scopes.filter(isCapabilityScope),
    });
}
