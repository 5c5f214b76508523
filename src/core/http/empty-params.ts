import type { FastifyInstance, FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify';
import Router from 'find-my-way';
import { AppError } from '../errors.js';

/**
 * The one rule for empty path parameters: a path whose `:parameter` is empty is a 404, on every
 * route. The router ignores a trailing slash (`/v1/api-keys/` would be the collection) and takes
 * `//` as an empty value, so both are refused before any route runs:
 * - a path ending in `/` where some route has a parameter next (`/v1/api-keys/` for
 *   `/v1/api-keys/:id`, `/api/v1/workflows/abc/tags/`), whatever the method;
 * - an empty segment (`//`) anywhere.
 * A trailing slash elsewhere (`/health/`) is still the same route. Wildcard routes (`*`) are not
 * parameters here: their rest of path may be empty, and a request they serve may end in `/`.
 */
export function emptyPathParamCheck(app: FastifyInstance): (request: FastifyRequest) => AppError | null {
  const parents = Router({ maxParamLength: 100 });
  const seen = new Set<string>();
  app.addHook('onRoute', (route) => {
    const url = route.url;
    for (let at = url.indexOf('/:'); at !== -1; at = url.indexOf('/:', at + 1)) {
      const parent = url.slice(0, at + 1);
      if (seen.has(parent)) continue;
      seen.add(parent);
      try {
        parents.on('GET', parent, () => undefined);
      } catch {
        // A pattern find-my-way cannot hold beside another (a parameter renamed): left to the route.
      }
    }
  });
  return (request: FastifyRequest): AppError | null => {
    const queryAt = request.url.indexOf('?');
    const path = queryAt === -1 ? request.url : request.url.slice(0, queryAt);
    // A wildcard route has no parameter a trailing slash could empty (`/game/Settings/` is the
    // upstream's own form of a game-platform path), so only `//` is refused there.
    const wildcard = request.routeOptions.url?.endsWith('*') === true;
    const empty =
      path.includes('//') ||
      (!wildcard && path.length > 1 && path.endsWith('/') && parents.find('GET', path));
    if (!empty) return null;
    return new AppError('ROUTE_NOT_FOUND', `No route ${request.method} ${path}: a path parameter is empty`, {
      path,
    });
  };
}

/** As a callback hook of its own (app.ts runs the check inside its first hook). */
export function refuseEmptyPathParams(app: FastifyInstance): void {
  const check = emptyPathParamCheck(app);
  app.addHook('onRequest', (request: FastifyRequest, _reply: FastifyReply, done: HookHandlerDoneFunction) => {
    const refusal = check(request);
    if (refusal) done(refusal);
    else done();
  });
}
