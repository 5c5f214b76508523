import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { PlatformModule } from '../../core/context.js';
import { AppError } from '../../core/errors.js';
import { withErrors } from '../../core/http/schemas.js';
import {
  ASSET_CACHE_CONTROL,
  INDEX_CACHE_CONTROL,
  PORTAL_SECURITY_HEADERS,
  PortalFiles,
  type StaticFile,
} from './static-files.js';

/** The repository root: the nearest folder above this file with a package.json (from src/ or dist/). */
function repositoryRoot(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  while (!existsSync(path.join(dir, 'package.json'))) {
    const parent = path.dirname(dir);
    if (parent === dir) return process.cwd();
    dir = parent;
  }
  return dir;
}

/** Where `scripts/build-portal.mjs` writes the portal. */
export const DEFAULT_PORTAL_DIR = path.join(repositoryRoot(), 'dist', 'portal');

/** No key: the page signs in with a session. */
const config = { public: true } as const;
const tags = ['Developer portal'];

function send(request: FastifyRequest, reply: FastifyReply, file: StaticFile, cacheControl: string) {
  reply.header('cache-control', cacheControl).header('etag', file.etag).type(file.contentType);
  if (request.headers['if-none-match'] === file.etag) return reply.code(304).send();
  return reply.send(file.body);
}

function portalRoutes(app: FastifyInstance, files: PortalFiles): void {
  app.addHook('onRequest', async (_request, reply) => {
    reply.headers(PORTAL_SECURITY_HEADERS);
  });

  // `/portal/` too: the router ignores a trailing slash.
  app.get(
    '/portal',
    {
      config,
      schema: {
        tags,
        summary: 'The developer portal (HTML page; its routes are hash fragments, e.g. /portal/#/keys)',
        description:
          'Served with `Cache-Control: no-cache` and a strict Content-Security-Policy; 503 until built.',
        produces: ['text/html'],
        response: withErrors({ 200: Type.String({ description: 'The page' }) }),
      },
    },
    async (request, reply) => {
      const index = await files.index();
      if (!index) {
        throw new AppError(
          'SERVICE_UNAVAILABLE',
          'The portal is not built: run `npm run build` (or `node scripts/build-portal.mjs`)',
        );
      }
      return send(request, reply, index, INDEX_CACHE_CONTROL);
    },
  );

  app.get(
    '/portal/assets/*',
    {
      config,
      schema: {
        tags,
        summary: "A file of the portal's build (content-hashed name, cached for a year)",
        params: Type.Object({ '*': Type.String({ description: 'The file name, e.g. app.3KD9X2QF.js' }) }),
        produces: ['text/javascript', 'text/css', 'application/json'],
        response: withErrors({ 200: Type.String({ description: 'JavaScript, CSS or a source map' }) }),
      },
    },
    async (request, reply) => {
      const name = (request.params as { '*': string })['*'];
      const asset = await files.asset(name);
      if (!asset) throw new AppError('NOT_FOUND', `No portal file '${name.slice(0, 200)}'`);
      return send(request, reply, asset, ASSET_CACHE_CONTROL);
    },
  );
}

/** The developer portal's page and its hashed assets, at `/portal` (a folder built by build-portal.mjs). */
export function createPortalWebModule(options: { dir?: string } = {}): PlatformModule {
  const files = new PortalFiles(path.resolve(options.dir ?? DEFAULT_PORTAL_DIR));
  return {
    name: 'portal-web',
    services: [],
    migrations: {},
    async routes(app) {
      // Its own scope: the security headers' hook applies to these routes only.
      await app.register(async (scope) => portalRoutes(scope, files));
    },
  };
}

export const portalWebModule: PlatformModule = createPortalWebModule();
