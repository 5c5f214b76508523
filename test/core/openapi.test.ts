import { readFileSync } from 'node:fs';
import type { RouteOptions } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PlatformModule } from '../../src/core/context.js';
import { allModules } from '../../src/modules/index.js';
import { createTestPlatform, type TestPlatform } from '../helpers/platform.js';

/** Registered first, so it sees every route the modules after it add. */
const collected: RouteOptions[] = [];
const collector: PlatformModule = {
  name: 'route-collector',
  services: [],
  migrations: {},
  routes(app) {
    app.addHook('onRoute', (route) => {
      collected.push(route);
    });
  },
};

/** Wildcards are named in the document (`/webhook/{path}`): paths compare with parameters unnamed. */
const unnamed = (path: string) => path.replace(/\{[^}]+\}/g, '{}');
const toOpenApiPath = (url: string) =>
  unnamed(
    url
      .replace(/:(\w+)/g, '{$1}')
      .replace(/\*$/, '{}')
      .replace(/\/$/, '') || '/',
  );

describe('OpenAPI document', () => {
  let p: TestPlatform;
  let doc: {
    openapi: string;
    info: { version: string };
    paths: Record<
      string,
      Record<string, { requestBody?: unknown; responses?: Record<string, unknown>; parameters?: unknown[] }>
    >;
  };
  beforeAll(async () => {
    p = await createTestPlatform({ dialect: 'sqlite', modules: [collector, ...allModules] });
    const res = await p.request({ method: 'GET', url: '/openapi.json', key: null });
    expect(res.statusCode).toBe(200);
    doc = res.json();
  });
  afterAll(async () => {
    await p.close();
  });

  it('is OpenAPI 3.1 with the package version', () => {
    expect(doc.openapi).toMatch(/^3\.1\.\d+$/);
    const pkg = JSON.parse(readFileSync('package.json', 'utf8')) as { version: string };
    expect(doc.info.version).toBe(pkg.version);
  });

  it('lists every registered module route, with response schemas and, for bodies, request schemas', () => {
    const routes = collected.filter((r) => !r.url.startsWith('/reference') && r.url !== '/openapi.json');
    expect(routes.length).toBeGreaterThan(8);
    const missing: string[] = [];
    const undocumented: string[] = [];
    for (const route of routes) {
      for (const method of [route.method].flat()) {
        if (method === 'HEAD') continue;
        const path = toOpenApiPath(route.url);
        const documented = Object.keys(doc.paths).find((candidate) => unnamed(candidate) === path);
        const op = documented ? doc.paths[documented]?.[method.toLowerCase()] : undefined;
        const name = `${method} ${route.url}`;
        if (!op) {
          missing.push(name);
          continue;
        }
        if (!op.responses || Object.keys(op.responses).length === 0) undocumented.push(`${name}: responses`);
        const schema = route.schema as { body?: unknown; response?: Record<string, unknown> } | undefined;
        if (!schema?.response) undocumented.push(`${name}: response schema`);
        if (['POST', 'PUT', 'PATCH'].includes(method) && !schema?.body && !op.requestBody)
          undocumented.push(`${name}: request body`);
        if (route.url.includes(':') && !(op.parameters ?? []).length)
          undocumented.push(`${name}: path parameters`);
      }
    }
    expect(missing).toEqual([]);
    expect(undocumented).toEqual([]);
  });

  it('the core routes document their error responses with the shared error body', () => {
    const create = doc.paths['/v1/api-keys']?.post;
    expect(create?.requestBody).toBeDefined();
    expect(Object.keys(create?.responses ?? {})).toEqual(
      expect.arrayContaining(['201', '400', '401', '403', '429', '5XX']),
    );
    expect(create?.responses?.['401']).toEqual({ $ref: '#/components/responses/Unauthorized' });
  });

  it('/reference serves a readable HTML page', async () => {
    for (const url of ['/reference', '/reference/']) {
      const res = await p.request({ method: 'GET', url, key: null });
      const page =
        res.statusCode === 302
          ? await p.request({ method: 'GET', url: String(res.headers.location), key: null })
          : res;
      expect(page.statusCode).toBe(200);
      expect(page.headers['content-type']).toMatch(/text\/html/);
      expect(page.body).toMatch(/<html/i);
    }
  });
});
