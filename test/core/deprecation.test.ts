import type { RouteOptions } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PlatformModule } from '../../src/core/context.js';
import { AppError } from '../../src/core/errors.js';
import { type Deprecation, deprecationHeaders } from '../../src/core/http/deprecation.js';
import { allModules } from '../../src/modules/index.js';
import { createTestPlatform, type TestPlatform } from '../helpers/platform.js';

/** 2026-11-24T00:00:00Z, the day /api/embeddings was deprecated, in Unix seconds. */
const EMBEDDINGS_SINCE = '@1795478400';

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

/** A route past its sunset that points at a guide and sets a Link of its own. */
const sunsetRoute: PlatformModule = {
  name: 'sunset-fixture',
  services: [],
  migrations: {},
  routes(app) {
    app.get(
      '/test/sunset',
      {
        config: {
          public: true,
          deprecation: { since: '2019-06-01', sunset: '2020-01-01', link: '/docs/x', linkRel: 'deprecation' },
        },
        schema: { querystring: { type: 'object', properties: { fail: { type: 'string' } } } },
      },
      async (request, reply) => {
        if ((request.query as { fail?: string }).fail) throw new AppError('CONFLICT', 'refused');
        reply.header('link', '</test/sunset?page=2>; rel="next"');
        return { ok: true };
      },
    );
  },
};

describe('deprecated routes', () => {
  let p: TestPlatform;
  beforeAll(async () => {
    p = await createTestPlatform({ dialect: 'sqlite', modules: [collector, sunsetRoute, ...allModules] });
  });
  afterAll(async () => {
    await p.close();
  });

  const embeddings = (payload: unknown, key?: string | null) =>
    p.request({ method: 'POST', url: '/api/embeddings', payload: payload as object, key });

  it('POST /api/embeddings answers with Deprecation and a successor Link, no Sunset', async () => {
    const res = await embeddings({ model: 'builtin/hashed-ngrams', prompt: 'hello world' });
    expect(res.statusCode).toBe(200);
    expect(res.json().embedding).toHaveLength(384);
    expect(res.headers.deprecation).toBe(EMBEDDINGS_SINCE);
    expect(res.headers.link).toBe('</api/embed>; rel="successor-version"');
    expect(res.headers.sunset).toBeUndefined();
  });

  it('its errors carry the headers too: 401, 400 and an unknown model', async () => {
    const unauthenticated = await embeddings({ model: 'builtin/hashed-ngrams', prompt: 'x' }, null);
    const invalid = await embeddings({ model: 'builtin/hashed-ngrams' });
    const unknown = await embeddings({ model: 'no-such-model', prompt: 'x' });
    expect([unauthenticated.statusCode, invalid.statusCode, unknown.statusCode]).toEqual([401, 400, 404]);
    for (const res of [unauthenticated, invalid, unknown]) {
      // Still Ollama's error body: the headers add to the answer, they do not change it.
      expect(typeof res.json().error).toBe('string');
      expect(res.headers.deprecation).toBe(EMBEDDINGS_SINCE);
      expect(res.headers.link).toBe('</api/embed>; rel="successor-version"');
    }
  });

  it('other routes have none of the headers, their successor included', async () => {
    const embed = await p.request({
      method: 'POST',
      url: '/api/embed',
      payload: { model: 'builtin/hashed-ngrams', input: 'hello' },
    });
    const health = await p.request({ method: 'GET', url: '/health', key: null });
    const missing = await p.request({ method: 'GET', url: '/v1/nothing-here' });
    expect([embed.statusCode, health.statusCode, missing.statusCode]).toEqual([200, 200, 404]);
    for (const res of [embed, health, missing]) {
      expect(res.headers.deprecation).toBeUndefined();
      expect(res.headers.sunset).toBeUndefined();
      expect(res.headers.link).toBeUndefined();
    }
  });

  it('after its sunset a route still answers, with Sunset, a guide link and its own Link kept', async () => {
    const res = await p.request({ method: 'GET', url: '/test/sunset', key: null });
    expect(res.statusCode).toBe(200);
    expect(res.headers.deprecation).toBe('@1559347200');
    expect(res.headers.sunset).toBe('Wed, 01 Jan 2020 00:00:00 GMT');
    expect(res.headers.link).toBe('</test/sunset?page=2>; rel="next", </docs/x>; rel="deprecation"');
    const failed = await p.request({ method: 'GET', url: '/test/sunset?fail=1', key: null });
    expect(failed.statusCode).toBe(409);
    expect(failed.headers.sunset).toBe('Wed, 01 Jan 2020 00:00:00 GMT');
    expect(failed.headers.link).toBe('</docs/x>; rel="deprecation"');
  });

  it('OpenAPI marks exactly the routes that declare a deprecation as deprecated', async () => {
    const res = await p.request({ method: 'GET', url: '/openapi.json', key: null });
    const doc = res.json() as { paths: Record<string, Record<string, { deprecated?: boolean }>> };
    const marked = Object.entries(doc.paths).flatMap(([path, ops]) =>
      Object.entries(ops)
        .filter(([, op]) => op.deprecated === true)
        .map(([method]) => `${method.toUpperCase()} ${path}`),
    );
    const declared = collected
      .filter((r) => r.config?.deprecation)
      .map((r) => `${String(r.method)} ${r.url}`);
    expect(marked).toContain('POST /api/embeddings');
    expect(marked).toContain('GET /test/sunset');
    expect(marked).not.toContain('POST /api/embed');
    expect(marked.sort()).toEqual(declared.sort());
  });
});

describe('deprecation declarations', () => {
  it.each<[string, Deprecation, RegExp]>([
    ['an impossible day', { since: '2026-02-30' }, /since must be a day/],
    ['a timestamp', { since: '2026-11-24T00:00:00Z' }, /since must be a day/],
    ['a sunset before since', { since: '2026-11-24', sunset: '2026-11-24' }, /sunset must come after/],
    ['a link with a space', { since: '2026-11-24', link: '/api/embed now' }, /not a URI reference/],
    ['a rel without link', { since: '2026-11-24', linkRel: 'deprecation' }, /needs deprecation.link/],
  ])('refuses %s', (_name, declaration, message) => {
    expect(() => deprecationHeaders(declaration)).toThrow(message);
  });

  it('a malformed declaration stops the platform at boot, naming the route', async () => {
    const broken: PlatformModule = {
      name: 'broken-fixture',
      services: [],
      migrations: {},
      routes(app) {
        app.get(
          '/test/broken',
          { config: { public: true, deprecation: { since: '24.11.2026' } } },
          async () => ({}),
        );
      },
    };
    await expect(createTestPlatform({ dialect: 'sqlite', modules: [broken, ...allModules] })).rejects.toThrow(
      /GET \/test\/broken: deprecation.since/,
    );
  });
});
