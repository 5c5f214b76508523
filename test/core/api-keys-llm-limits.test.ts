import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mayUseModel, type Principal } from '../../src/core/auth/principal.js';
import type { PlatformModule } from '../../src/core/context.js';
import { authModule } from '../../src/modules/auth/index.js';
import { healthModule } from '../../src/modules/health/index.js';
import { createTestPlatform, type TestPlatform } from '../helpers/platform.js';
import { testDialects } from '../helpers/services.js';

const dialects = await testDialects();

type Response = Awaited<ReturnType<TestPlatform['request']>>;

/** A customer-facing llm route that shows what the gateway will see of its caller. */
const limitsProbe: PlatformModule = {
  name: 'llm-limits-probe',
  services: [],
  migrations: {},
  routes(app) {
    app.get(
      '/probe/llm-limits',
      { config: { auth: { service: 'llm', customerFacing: true } } },
      async (request) => {
        const p = request.principal;
        return {
          kind: p?.kind,
          models: p?.models === undefined ? 'unset' : p.models,
          dailyTokenBudget: p?.dailyTokenBudget === undefined ? 'unset' : p.dailyTokenBudget,
        };
      },
    );
  },
};

/** Issue 12: model allow-lists and daily token budgets on API keys, for the llm gateway. */
describe.each(dialects)('API keys: models and daily token budgets on %s', (dialect) => {
  let p: TestPlatform;
  beforeAll(async () => {
    p = await createTestPlatform({ dialect });
  });
  afterAll(async () => {
    await p.close();
  });

  const create = (body: Record<string, unknown>, key?: string) =>
    p.request({ method: 'POST', url: '/v1/api-keys', payload: body, ...(key ? { key } : {}) });
  const patch = (id: string, body: Record<string, unknown>, key?: string) =>
    p.request({ method: 'PATCH', url: `/v1/api-keys/${id}`, payload: body, ...(key ? { key } : {}) });
  const principalOf = (key: string): Promise<Principal> => {
    const auth = p.ctx.apis.auth;
    if (!auth) throw new Error('auth module missing');
    return auth.verifyApiKey(key);
  };
  const llmKey = (extra: Record<string, unknown>) => ({
    name: 'llm',
    type: 'development',
    services: ['llm'],
    role: 'Writer',
    ...extra,
  });
  const fieldsOf = (res: Response): string[] => {
    expect(res.statusCode, res.body).toBe(400);
    expect(res.json().code).toBe('VALIDATION_ERROR');
    return res.json().details.fields.map((f: { field: string }) => f.field);
  };
  const expectExceeds = (res: Response, exceeds: string[]) => {
    expect(res.statusCode, res.body).toBe(403);
    expect(res.json()).toMatchObject({ error: true, code: 'FORBIDDEN' });
    expect(res.json().details.exceeds).toEqual(exceeds);
  };

  it('a key without limits shows no models and no budget, and may use any model', async () => {
    const { key, id } = await p.createKey(llmKey({}));
    const view = (await p.request({ method: 'GET', url: `/v1/api-keys/${id}` })).json();
    expect(view.models).toEqual([]);
    expect(view.dailyTokenBudget).toBeNull();
    const principal = await principalOf(key);
    expect(principal.models).toBeNull();
    expect(principal.dailyTokenBudget).toBeNull();
    expect(mayUseModel(principal, 'anything:at-all')).toBe(true);
    // So does the owner's key, made at first start.
    const owner = await principalOf(p.adminKey);
    expect(owner).toMatchObject({ models: null, dailyTokenBudget: null });
  });

  it('creates, shows, lists, updates and rotates keys with models and a budget', async () => {
    const models = ['llama3.1:8b', 'gpt-4o-mini', 'builtin/hashed-ngrams', 'org@v1+beta_x'];
    const created = await create(llmKey({ models, dailyTokenBudget: 5_000 }));
    expect(created.statusCode, created.body).toBe(201);
    const body = created.json();
    expect(body).toMatchObject({ models, dailyTokenBudget: 5_000 });

    const one = (await p.request({ method: 'GET', url: `/v1/api-keys/${body.id}` })).json();
    expect(one).toMatchObject({ models, dailyTokenBudget: 5_000 });
    const listed = (await p.request({ method: 'GET', url: '/v1/api-keys?fields=id,models,dailyTokenBudget' }))
      .json()
      .data.find((k: { id: string }) => k.id === body.id);
    expect(listed).toEqual({ id: body.id, models, dailyTokenBudget: 5_000 });

    let principal = await principalOf(body.key);
    expect([...(principal.models ?? [])].sort()).toEqual([...models].sort());
    expect(principal.dailyTokenBudget).toBe(5_000);
    expect(mayUseModel(principal, 'llama3.1:8b')).toBe(true);
    expect(mayUseModel(principal, 'llama3.1:70b')).toBe(false);

    // Another field changed: models and budget stay.
    const renamed = await patch(body.id, { name: 'renamed' });
    expect(renamed.statusCode, renamed.body).toBe(200);
    expect(renamed.json()).toMatchObject({ name: 'renamed', models, dailyTokenBudget: 5_000 });

    // Models are replaced as a whole; the budget changes and then goes.
    const replaced = await patch(body.id, { models: ['mistral'], dailyTokenBudget: 10 });
    expect(replaced.json()).toMatchObject({ models: ['mistral'], dailyTokenBudget: 10 });
    principal = await principalOf(body.key);
    expect(principal.models).toEqual(['mistral']);
    expect(principal.dailyTokenBudget).toBe(10);
    expect(mayUseModel(principal, 'llama3.1:8b')).toBe(false);

    const unlimited = await patch(body.id, { dailyTokenBudget: null });
    expect(unlimited.json()).toMatchObject({ models: ['mistral'], dailyTokenBudget: null });
    expect((await principalOf(body.key)).dailyTokenBudget).toBeNull();

    const anyModel = await patch(body.id, { models: [], dailyTokenBudget: 77 });
    expect(anyModel.json()).toMatchObject({ models: [], dailyTokenBudget: 77 });
    expect((await principalOf(body.key)).models).toBeNull();

    await patch(body.id, { models: ['mistral'] });
    const rotated = await p.request({
      method: 'POST',
      url: `/v1/api-keys/${body.id}/rotate`,
      payload: {},
    });
    expect(rotated.statusCode, rotated.body).toBe(200);
    expect(rotated.json()).toMatchObject({ models: ['mistral'], dailyTokenBudget: 77 });
    expect(await principalOf(rotated.json().key)).toMatchObject({
      models: ['mistral'],
      dailyTokenBudget: 77,
    });
  });

  it('refuses bad model lists and budgets, naming the field', async () => {
    expect(fieldsOf(await create(llmKey({ models: ['has space'] })))).toContain('body.models.0');
    expect(fieldsOf(await create(llmKey({ models: ['ok', 'semi;colon'] })))).toContain('body.models.1');
    expect(fieldsOf(await create(llmKey({ models: [''] })))).toContain('body.models.0');
    expect(fieldsOf(await create(llmKey({ models: ['m'.repeat(101)] })))).toContain('body.models.0');
    expect(await create(llmKey({ models: ['m'.repeat(100)] }))).toHaveProperty('statusCode', 201);
    const many = Array.from({ length: 101 }, (_, i) => `model-${i}`);
    expect(fieldsOf(await create(llmKey({ models: many })))).toContain('body.models');
    expect(await create(llmKey({ models: many.slice(0, 100) }))).toHaveProperty('statusCode', 201);
    expect(fieldsOf(await create(llmKey({ models: ['twice', 'twice'] })))).toContain('body.models');
    expect(fieldsOf(await create(llmKey({ models: 'llama3' })))).toContain('body.models');

    for (const budget of [0, -1, 1.5, 1_000_000_001, '100', null]) {
      expect(fieldsOf(await create(llmKey({ dailyTokenBudget: budget })))).toContain('body.dailyTokenBudget');
    }
    expect(await create(llmKey({ dailyTokenBudget: 1_000_000_000 }))).toHaveProperty('statusCode', 201);

    const { id } = await p.createKey(llmKey({}));
    expect(fieldsOf(await patch(id, { dailyTokenBudget: 0 }))).toContain('body.dailyTokenBudget');
    expect(fieldsOf(await patch(id, { models: ['a b'] }))).toContain('body.models.0');
    expect(fieldsOf(await patch(id, { models: null }))).toContain('body.models');
    // Nothing was changed by the refused requests.
    expect((await p.request({ method: 'GET', url: `/v1/api-keys/${id}` })).json()).toMatchObject({
      models: [],
      dailyTokenBudget: null,
    });
  });

  it('Custom keys may name models in scopes; the principal holds the union with models', async () => {
    const scoped = await create({
      name: 'scoped',
      type: 'development',
      services: ['llm'],
      role: 'Custom',
      scopes: ['llm:read', 'llm:write', 'llm:model:llama3.1:8b'],
    });
    expect(scoped.statusCode, scoped.body).toBe(201);
    expect(scoped.json()).toMatchObject({
      scopes: ['llm:read', 'llm:write', 'llm:model:llama3.1:8b'],
      models: [],
    });
    const onlyScope = await principalOf(scoped.json().key);
    expect(onlyScope.models).toEqual(['llama3.1:8b']);
    expect(mayUseModel(onlyScope, 'llama3.1:8b')).toBe(true);
    expect(mayUseModel(onlyScope, 'llama3.1')).toBe(false);

    const both = await p.createKey({
      name: 'both',
      type: 'development',
      services: ['llm', 'core'],
      role: 'Custom',
      scopes: ['llm:read', 'llm:model:b', 'llm:model:a'],
      models: ['a', 'c'],
    });
    expect([...((await principalOf(both.key)).models ?? [])].sort()).toEqual(['a', 'b', 'c']);

    // Model scopes restrict, they grant nothing: a key of only model scopes is refused.
    const onlyModels = await create({
      name: 'nothing',
      type: 'development',
      services: ['llm'],
      role: 'Custom',
      scopes: ['llm:model:a'],
    });
    expect(fieldsOf(onlyModels)).toContain('scopes');
    // They are for Custom keys that have the llm service.
    expect(
      fieldsOf(
        await create({
          name: 'elsewhere',
          type: 'development',
          services: ['core'],
          role: 'Custom',
          scopes: ['core:read', 'llm:model:a'],
        }),
      ),
    ).toContain('scopes');
    expect(fieldsOf(await create(llmKey({ role: 'Reader', scopes: ['llm:model:a'] })))).toContain('scopes');
    for (const scope of [
      'llm:model:',
      'llm:model:has space',
      `llm:model:${'m'.repeat(101)}`,
      'core:model:a',
    ]) {
      const res = await create({
        name: 'bad scope',
        type: 'development',
        services: ['*'],
        role: 'Custom',
        scopes: ['llm:read', scope],
      });
      expect(fieldsOf(res)).toContain('body.scopes.1');
    }
    // Leaving the Custom role drops its model scopes with the others.
    const left = await patch(scoped.json().id, { role: 'Reader' });
    expect(left.json()).toMatchObject({ role: 'Reader', scopes: [] });
    expect((await principalOf(scoped.json().key)).models).toBeNull();
  });

  it('customer tokens refuse model scopes: a token has its key models', async () => {
    const { key } = await p.createKey(llmKey({ models: ['a'] }));
    const res = await p.request({
      method: 'POST',
      url: '/v1/auth/tokens',
      key,
      payload: { customerId: 'cust_1', scopes: ['llm:read', 'llm:model:a'] },
    });
    expect(fieldsOf(res)).toContain('body.scopes.1');
  });

  it('a caller restricted to models and a budget cannot give more, nor manage wider keys', async () => {
    const limited = await p.createKey({
      name: 'limited admin',
      type: 'development',
      services: ['*'],
      role: 'Admin',
      models: ['a', 'b'],
      dailyTokenBudget: 1_000,
    });
    const within = await create(llmKey({ models: ['a'], dailyTokenBudget: 500 }), limited.key);
    expect(within.statusCode, within.body).toBe(201);
    expect(within.json()).toMatchObject({ models: ['a'], dailyTokenBudget: 500 });

    // Left unsaid, a created key gets the most the caller may give: its models and budget.
    const defaulted = await create(llmKey({}), limited.key);
    expect(defaulted.statusCode, defaulted.body).toBe(201);
    expect(defaulted.json()).toMatchObject({ models: ['a', 'b'], dailyTokenBudget: 1_000 });

    expectExceeds(await create(llmKey({ models: ['a', 'c'] }), limited.key), ['models']);
    expectExceeds(await create(llmKey({ models: [] }), limited.key), ['models']);
    expectExceeds(await create(llmKey({ dailyTokenBudget: 1_001 }), limited.key), ['dailyTokenBudget']);
    expectExceeds(await create(llmKey({ models: ['z'], dailyTokenBudget: 2_000 }), limited.key), [
      'models',
      'dailyTokenBudget',
    ]);

    // Model scopes count: a scope outside the caller's models is refused, one inside is enough.
    const custom = (scope: string) =>
      create(
        { name: 'c', type: 'development', services: ['llm'], role: 'Custom', scopes: ['llm:read', scope] },
        limited.key,
      );
    expectExceeds(await custom('llm:model:c'), ['models']);
    const scopedIn = await custom('llm:model:b');
    expect(scopedIn.statusCode, scopedIn.body).toBe(201);
    expect(scopedIn.json().models).toEqual([]);
    expect((await principalOf(scopedIn.json().key)).models).toEqual(['b']);

    // Changing a key: not beyond the caller, and not removing the limits.
    const id = within.json().id as string;
    expectExceeds(await patch(id, { models: ['a', 'c'] }, limited.key), ['models']);
    expectExceeds(await patch(id, { models: [] }, limited.key), ['models']);
    expectExceeds(await patch(id, { dailyTokenBudget: null }, limited.key), ['dailyTokenBudget']);
    expectExceeds(await patch(id, { dailyTokenBudget: 5_000 }, limited.key), ['dailyTokenBudget']);
    const narrowed = await patch(id, { models: ['b'], dailyTokenBudget: 1_000 }, limited.key);
    expect(narrowed.statusCode, narrowed.body).toBe(200);
    expect(narrowed.json()).toMatchObject({ models: ['b'], dailyTokenBudget: 1_000 });

    // Nor its own limits.
    expectExceeds(await patch(limited.id, { models: ['a', 'b', 'c'] }, limited.key), ['models']);
    expectExceeds(await patch(limited.id, { dailyTokenBudget: null }, limited.key), ['dailyTokenBudget']);

    // A key of any model (or no budget) is wider than the caller: it may not be managed by it.
    const wide = await p.createKey(llmKey({ name: 'wide' }));
    expectExceeds(await patch(wide.id, { name: 'taken over' }, limited.key), ['models', 'dailyTokenBudget']);
    const rotate = await p.request({
      method: 'POST',
      url: `/v1/api-keys/${wide.id}/rotate`,
      key: limited.key,
      payload: {},
    });
    expectExceeds(rotate, ['models', 'dailyTokenBudget']);

    // The unrestricted owner key can lift the limits.
    const lifted = await patch(id, { models: [], dailyTokenBudget: null });
    expect(lifted.json()).toMatchObject({ models: [], dailyTokenBudget: null });
  });
});

describe.each(dialects)('the llm limits of a request principal on %s', (dialect) => {
  let p: TestPlatform;
  beforeAll(async () => {
    p = await createTestPlatform({ dialect, modules: [authModule, healthModule, limitsProbe] });
  });
  afterAll(async () => {
    await p.close();
  });

  it('an API key request carries its models (with model scopes) and budget', async () => {
    const { key } = await p.createKey({
      name: 'probe',
      type: 'development',
      services: ['llm'],
      role: 'Custom',
      scopes: ['llm:read', 'llm:model:b'],
      models: ['a'],
      dailyTokenBudget: 42,
    });
    const res = await p.request({ method: 'GET', url: '/probe/llm-limits', key });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual({ kind: 'api_key', models: ['a', 'b'], dailyTokenBudget: 42 });
    const owner = await p.request({ method: 'GET', url: '/probe/llm-limits' });
    expect(owner.json()).toEqual({ kind: 'api_key', models: null, dailyTokenBudget: null });
  });

  it("a customer token carries its issuing key's models and budget, as they are now", async () => {
    const { key, id } = await p.createKey({
      name: 'issuer',
      type: 'development',
      services: ['llm', 'core'],
      role: 'Writer',
      models: ['a'],
      dailyTokenBudget: 7,
    });
    const minted = await p.request({
      method: 'POST',
      url: '/v1/auth/tokens',
      key,
      payload: { customerId: 'cust_1', scopes: ['llm:read'] },
    });
    expect(minted.statusCode, minted.body).toBe(201);
    const token = minted.json().token as string;
    const res = await p.request({ method: 'GET', url: '/probe/llm-limits', key: token });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual({ kind: 'customer_token', models: ['a'], dailyTokenBudget: 7 });
    // Narrowing the key narrows its tokens at once.
    const narrowed = await p.request({
      method: 'PATCH',
      url: `/v1/api-keys/${id}`,
      payload: { models: ['b'], dailyTokenBudget: 3 },
    });
    expect(narrowed.statusCode, narrowed.body).toBe(200);
    const after = await p.request({ method: 'GET', url: '/probe/llm-limits', key: token });
    expect(after.json()).toEqual({ kind: 'customer_token', models: ['b'], dailyTokenBudget: 3 });
  });
});
