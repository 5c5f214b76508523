import { ALL_SERVICES } from '../../config.js';
import { expandScopes, type Principal, type Role } from '../../core/auth/principal.js';
import { AppError } from '../../core/errors.js';
import { isValidCidr } from '../../core/http/ip-rules.js';

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
  if (grant.role === 'Custom') {
    if (grant.scopes.length === 0)
      problems.push({ field: 'scopes', message: 'the Custom role needs scopes' });
    for (const scope of grant.scopes) {
      const [service = ''] = scope.split(':');
      const known = service === '*' || (ALL_SERVICES as readonly string[]).includes(service);
      if (!known) problems.push({ field: 'scopes', message: `'${scope}' names an unknown service` });
      else if (service !== '*' && !grant.services.includes('*') && !grant.services.includes(service)) {
        problems.push({ field: 'scopes', message: `'${scope}' is for a service the key does not have` });
      }
    }
  } else if (grant.scopes.length > 0) {
    problems.push({ field: 'scopes', message: 'scopes are set only with the Custom role' });
  }
  for (const cidr of allowedIps ?? []) {
    if (!isValidCidr(cidr))
      problems.push({ field: 'allowedIps', message: `'${cidr}' is not an IP address or CIDR` });
  }
  if (problems.length > 0)
    throw new AppError('VALIDATION_ERROR', 'Invalid key settings', { fields: problems });
}

/** A caller may not grant a key more than it holds itself. */
export function assertWithinCaller(grant: Grant, caller: Principal | null): void {
  if (!caller) return;
  const held = new Set(expandScopes(caller, ALL_SERVICES));
  const wanted = expandScopes(grant, ALL_SERVICES);
  const excess = wanted.filter((s) => !held.has(s));
  if (excess.length > 0) {
    throw new AppError('FORBIDDEN', 'A key cannot grant scopes its creator does not hold', {
      scopes: excess,
    });
  }
}
