import { createConfig, lintFromString } from '@redocly/openapi-core';
import type { RouteOptions } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PlatformModule } from '../../src/core/context.js';
import { ERROR_STATUS } from '../../src/core/errors.js';
import type { RouteAuth } from '../../src/core/http/auth-hook.js';
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

interface Operation {
  operationId?: string;
  summary?: string;
  description?: string;
  security?: Array<Record<string, string[]>>;
  parameters?: Array<{
    in: string;
    name: string;
    schema?: { enum?: unknown[]; maximum?: number; type?: string };
  }>;
  responses: Record<string, { $ref?: string; content?: Record<string, { schema?: unknown }> }>;
}
interface Document {
  servers?: unknown[];
  info: { license?: unknown; description?: string };
  paths: Record<string, Record<string, Operation>>;
  components: {
    schemas: Record<string, { properties?: Record<string, { enum?: string[] }> }>;
    responses: Record<string, { content: Record<string, { schema: { $ref?: string } }> }>;
    securitySchemes: Record<string, unknown>;
  };
}

const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options'];
/** `/v1/models/*` and `/v1/models/{model}` are the same path: parameters compare by position. */
const shape = (path: string) => path.replace(/\{[^}]+\}/g, '{}');
const routePath = (url: string) =>
  shape(
    url
      .replace(/:(\w+)/g, '{$1}')
      .replace(/\*$/, '{}')
      .replace(/\/$/, '') || '/',
  );

describe('OpenAPI document: lint and conventions', () => {
  let p: TestPlatform;
  let doc: Document;
  let source: string;
  const operations: Array<{ method: string; path: string; op: Operation }> = [];
  beforeAll(async () => {
    p = await createTestPlatform({ dialect: 'sqlite', modules: [collector, ...allModules] });
    const res = await p.request({ method: 'GET', url: '/openapi.json', key: null });
    expect(res.statusCode).toBe(200);
    source = res.body;
    doc = res.json();
    for (const [path, item] of Object.entries(doc.paths))
      for (const [method, op] of Object.entries(item))
        if (METHODS.includes(method)) operations.push({ method, path, op });
  });
  afterAll(async () => {
    await p.close();
  });

  /** The operation of a route's method, or undefined when the document does not list it. */
  function operationOf(route: RouteOptions, method: string): Operation | undefined {
    const wanted = routePath(route.url);
    const path = Object.keys(doc.paths).find((candidate) => shape(candidate) === wanted);
    return path ? doc.paths[path]?.[method.toLowerCase()] : undefined;
  }

  it("has no error under Redocly's recommended rules", async () => {
    const config = await createConfig({ extends: ['recommended'] });
    const problems = await lintFromString({ source, absoluteRef: 'openapi.json', config });
    const errors = problems
      .filter((problem) => problem.severity === 'error')
      .map((problem) => `${problem.ruleId}: ${problem.message} at ${problem.location[0]?.pointer}`);
    expect(errors).toEqual([]);
  });

  it('names servers, a license and what the platform holds', () => {
    expect(doc.servers?.length).toBeGreaterThan(0);
    expect(doc.info.license).toBeDefined();
    expect(doc.info.description).toMatch(/flows/i);
    expect(doc.info.description).toMatch(/agents/i);
  });

  it('gives every operation a unique operationId, a summary and a description', () => {
    expect(operations.length).toBeGreaterThan(50);
    const ids = operations.map(({ op }) => op.operationId);
    const missing = operations.filter(({ op }) => !op.operationId || !op.summary || !op.description);
    expect(missing.map(({ method, path }) => `${method} ${path}`)).toEqual([]);
    const duplicates = ids.filter((id, i) => ids.indexOf(id) !== i);
    expect(duplicates).toEqual([]);
    for (const id of ids) expect(id).toMatch(/^[a-z]+[A-Za-z0-9]*$/);
  });

  it('names every path parameter; no `{*}` that clients would send literally', () => {
    for (const { method, path, op } of operations) {
      const inPath = [...path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]);
      const declared = (op.parameters ?? []).filter((q) => q.in === 'path').map((q) => q.name);
      expect(declared.sort(), `${method} ${path}`).toEqual(inPath.sort());
      expect(inPath, `${method} ${path}`).not.toContain('*');
    }
  });

  it('says which credential each route takes: none on public routes, the key or the customer token', () => {
    expect(Object.keys(doc.components.securitySchemes).sort()).toEqual(['apiKey', 'customerToken']);
    const wrong: string[] = [];
    let checked = 0;
    for (const route of collected) {
      const config = (route.config ?? {}) as { public?: boolean; auth?: RouteAuth };
      for (const method of [route.method].flat()) {
        const op = operationOf(route, method);
        if (!op) continue;
        checked++;
        const schemes = (op.security ?? []).flatMap((s) => Object.keys(s)).sort();
        const name = `${method} ${route.url}`;
        if (op.security === undefined) wrong.push(`${name}: no security`);
        else if (config.public && schemes.length > 0) wrong.push(`${name}: public but ${schemes}`);
        else if (config.auth) {
          const token =
            config.auth.customerFacing === true &&
            (!config.auth.principals || config.auth.principals.includes('customer_token'));
          const expected = token ? ['apiKey', 'customerToken'] : ['apiKey'];
          if (schemes.join() !== expected.join()) wrong.push(`${name}: ${schemes} instead of ${expected}`);
          if (!/scope/.test(op.description ?? ''))
            wrong.push(`${name}: the description does not name the scope`);
        }
      }
    }
    expect(checked).toBeGreaterThan(50);
    expect(wrong).toEqual([]);
    expect(doc.paths['/health']?.get?.security).toEqual([]);
    expect(doc.paths['/webhook/{path}']?.post?.security).toEqual([]);
  });

  it('points every platform error at one Error schema whose code is the closed list', () => {
    const error = doc.components.schemas.Error;
    expect(error?.properties?.code?.enum?.sort()).toEqual(Object.keys(ERROR_STATUS).sort());
    for (const [name, response] of Object.entries(doc.components.responses))
      expect(response.content['application/json']?.schema.$ref, name).toBe('#/components/schemas/Error');

    const inline: string[] = [];
    let checked = 0;
    for (const route of collected) {
      // Compatible surfaces (Ollama, OpenAI, Flowise) keep the error bodies their clients parse.
      const format = (route.config as { errorFormat?: string } | undefined)?.errorFormat;
      if (format && format !== 'platform') continue;
      for (const method of [route.method].flat()) {
        const op = operationOf(route, method);
        if (!op) continue;
        checked++;
        // A 503 of /health is its report, not an error: only error bodies must be the shared one.
        for (const [status, response] of Object.entries(op.responses))
          if (/^[45]/.test(status) && !response.$ref && JSON.stringify(response).includes('requestId'))
            inline.push(`${method} ${route.url} ${status}`);
      }
    }
    expect(checked).toBeGreaterThan(50);
    expect(inline).toEqual([]);
    // The platform's error body is written once, not once per operation: one schema per error format
    // (the platform's, Ollama's, OpenAI's, Anthropic's, Flowise's) and their examples, never hundreds.
    // The request log and the audit trail (GET and HEAD) have a requestId of their own: field and filter.
    expect(source.split('"requestId"').length - 1).toBeLessThan(20);
  });

  it('lists the statuses an operation answers, by how it is protected and what it takes', () => {
    const get = doc.paths['/v1/api-keys/{id}']?.get;
    expect(Object.keys(get?.responses ?? {})).toEqual(
      expect.arrayContaining(['200', '400', '401', '403', '404', '429', '5XX']),
    );
    const create = doc.paths['/v1/api-keys']?.post;
    expect(Object.keys(create?.responses ?? {})).toEqual(
      expect.arrayContaining(['201', '400', '401', '403', '413', '415', '429', '5XX']),
    );
    expect(create?.responses['404']).toBeUndefined();
    const health = doc.paths['/health']?.get;
    expect(health?.responses['401']).toBeUndefined();
    expect(doc.paths['/api/v1/workflows']?.post?.responses['409']?.$ref).toBe(
      '#/components/responses/Conflict',
    );
  });

  it('serves JSON Schema 2020-12 tuples (prefixItems), not the draft-07 array form of items', () => {
    expect(source).not.toContain('"additionalItems"');
    // paths → requestBody → JSON schema → nodes[] → position
    const at = (value: unknown, ...keys: string[]) =>
      keys.reduce<unknown>((v, k) => (v as Record<string, unknown> | undefined)?.[k], value);
    const node = at(
      doc.paths['/api/v1/workflows']?.post,
      ...['requestBody', 'content', 'application/json', 'schema', 'properties', 'nodes', 'items'],
      ...['properties', 'position'],
    ) as { prefixItems?: unknown[]; items?: unknown } | undefined;
    expect(node?.prefixItems).toHaveLength(2);
    expect(node?.items).toBe(false);
  });

  it('states the rules the server enforces on list queries: what it documents, it accepts', async () => {
    const refused: string[] = [];
    let checked = 0;
    for (const { method, path, op } of operations) {
      if (method !== 'get' || path.includes('{')) continue;
      for (const param of op.parameters ?? []) {
        if (param.in !== 'query' || !param.schema) continue;
        const values = [...(param.schema.enum ?? [])].map(String);
        if (param.name === 'limit' && param.schema.maximum !== undefined) {
          values.push(String(param.schema.maximum));
          checked++;
          const over = await p.request({ method: 'GET', url: `${path}?limit=${param.schema.maximum + 1}` });
          if (over.statusCode !== 400) refused.push(`${path}?limit above the maximum: ${over.statusCode}`);
        }
        for (const value of values) {
          checked++;
          const url = `${path}?${param.name}=${encodeURIComponent(value)}`;
          const res = await p.request({ method: 'GET', url });
          if (res.statusCode === 400) refused.push(`${url}: ${res.body.slice(0, 160)}`);
        }
      }
    }
    expect(checked).toBeGreaterThan(10);
    expect(refused).toEqual([]);
  });
});
