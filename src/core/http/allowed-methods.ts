import type { FastifyInstance } from 'fastify';
import Router from 'find-my-way';

/**
 * Which methods a path has routes for, so a request with another method is a 405 with `Allow`,
 * not a 404 that suggests the path is wrong. Fastify's router answers only "no route for this
 * method"; this keeps a second router of the same patterns, each holding the set of its methods.
 */
export function trackAllowedMethods(app: FastifyInstance): (path: string) => ReadonlySet<string> | null {
  const router = Router({ ignoreTrailingSlash: true, maxParamLength: 100 });
  const byPattern = new Map<string, Set<string>>();
  app.addHook('onRoute', (route) => {
    let methods = byPattern.get(route.url);
    if (!methods) {
      methods = new Set();
      byPattern.set(route.url, methods);
      try {
        router.on('GET', route.url, () => undefined, methods);
      } catch {
        // A pattern find-my-way cannot hold beside another (a parameter renamed): no 405 for it.
      }
    }
    for (const method of [route.method].flat()) methods.add(method);
    if (methods.has('GET')) methods.add('HEAD');
  });
  return (path) => (router.find('GET', path)?.store as Set<string> | undefined) ?? null;
}
