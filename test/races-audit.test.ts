/**
 * Race audit: what a client can do with concurrent requests. Every probe fires 2–26 identical or
 * conflicting requests at once (Promise.all over app.inject) and then asserts the platform's rule:
 * every answer a documented 2xx/4xx (never a 500, no 503), the invariant true when read back, and
 * nothing half-written. Probes that touch the database run on SQLite and PostgreSQL; the request
 * quota runs on in-process counters and on Redis.
 *
 * On SQLite (one synchronous connection) a request runs to its end without yielding to another
 * unless it waits on something outside the process (a model call, a worker, the thread pool), so
 * most races show on PostgreSQL only; the probes run on both all the same.
 *
 * A probe that fails here found a race: it is kept failing until the source is fixed (it is the
 * regression test), never weakened.
 */
import type { LightMyRequestResponse } from 'fastify';
import { sql } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { authModule } from '../src/modules/auth/index.js';
import { healthModule } from '../src/modules/health/index.js';
import { validBlend } from './commerce/support.js';
import { otherAccountKey } from './helpers/accounts.js';
import { createTestPlatform, type TestPlatform } from './helpers/platform.js';
import { PG_URL, redisAvailable, testDialects } from './helpers/services.js';
import { until } from './helpers/until.js';
import { type LlmTestbed, startLlmTestbed } from './llm/support.js';
import { tokenOf } from './portal/support.js';
import { echoFlow } from './workflows/support.js';

type Res = LightMyRequestResponse;

/** `n` calls of `f` at once. */
const all = <T>(n: number, f: (i: number) => Promise<T>): Promise<T[]> =>
  Promise.all(Array.from({ length: n }, (_, i) => f(i)));

const countOf = (answers: Res[], status: number) => answers.filter((a) => a.statusCode === status).length;

/** Answers outside the documented statuses, with their bodies (a 500's request id), for the message. */
function outside(answers: Res[], allowed: number[]): string[] {
  return answers
    .filter((a) => !allowed.includes(a.statusCode))
    .map((a) => `${a.statusCode} ${a.body.slice(0, 300)}`);
}

/** Soft: the probe goes on to read the invariant back, so one run shows every way it broke. */
function expectOnly(answers: Res[], allowed: number[], what: string): void {
  expect.soft(outside(answers, allowed), `${what}: answers other than ${allowed.join('/')}`).toEqual([]);
}

function expectCodes(answers: Res[], status: number, code: string, what: string): void {
  const codes = answers
    .filter((a) => a.statusCode === status)
    .map((a) => (a.json() as { code?: string }).code);
  expect
    .soft(
      codes.filter((c) => c !== code),
      `${what}: ${status} answers not ${code}`,
    )
    .toEqual([]);
}

const dialects = await testDialects();

/** 25 requests at once of a Reader key with a daily quota of 10: exactly 10 served, 15 refused. */
async function quotaRace(p: TestPlatform, name: string): Promise<void> {
  const { key } = await p.createKey({
    name,
    type: 'development',
    services: ['core'],
    role: 'Reader',
    dailyQuota: 10,
  });
  const answers = await all(25, () => p.request({ method: 'GET', url: '/v1/usage', key }));
  expectOnly(answers, [200, 429], 'quota');
  expect(countOf(answers, 200)).toBe(10);
  expect(countOf(answers, 429)).toBe(15);
}

describe.each(dialects)('race audit on %s', (dialect) => {
  let bed: LlmTestbed;
  let p: TestPlatform;

  beforeAll(async () => {
    // Renewals of one cart's reservation: a burst of checkouts of one cart stays under the bound, so
    // only the race (not CHECKOUT_MAX_RENEWALS' documented 409) decides their answers.
    bed = await startLlmTestbed(dialect, { CHECKOUT_MAX_RENEWALS: '100' });
    p = bed.p;
  });
  afterAll(() => bed?.close());

  // ---------------------------------------------------------------------------------------------
  // Helpers on the running platform.

  const rowCount = async (table: string, column: string, value: string): Promise<number> => {
    const { rows } = await sql<{ n: number | string }>`select count(*) as n from ${sql.table(table)}
      where ${sql.ref(column)} = ${value}`.execute(p.ctx.db);
    return Number(rows[0]?.n ?? 0);
  };

  const customerToken = async (customerId: string): Promise<string> => {
    const res = await p.request({
      method: 'POST',
      url: '/v1/auth/tokens',
      payload: { customerId, scopes: ['commerce:read', 'commerce:write'] },
    });
    expect(res.statusCode, res.body).toBe(201);
    return (res.json() as { token: string }).token;
  };

  const setStock = async (variantId: string, onHand: number) => {
    const res = await p.request({ method: 'PUT', url: `/v1/inventory/${variantId}`, payload: { onHand } });
    expect(res.statusCode, res.body).toBe(200);
  };

  const level = async (variantId: string) =>
    (await p.request({ method: 'GET', url: `/v1/inventory/${variantId}` })).json() as {
      onHand: number;
      reserved: number;
      available: number;
    };

  const addItem = (key: string, line: { productId: string; variantId: string }, quantity = 1) =>
    p.request({ method: 'POST', url: '/api/cart/items', key, payload: { ...line, quantity } });

  const checkout = (key: string) =>
    p.request({ method: 'POST', url: '/api/cart/checkout', key, payload: {} });

  const cartOf = async (key: string) =>
    (await p.request({ method: 'GET', url: '/api/cart', key })).json() as {
      checkoutId: string | null;
      items: Array<{ variantId: string; quantity: number }>;
    };

  const intake = (
    id: string,
    line: { productId: string; variantId: string; quantity: number },
    checkoutId?: string,
  ) =>
    p.request({
      method: 'POST',
      url: '/v1/orders',
      payload: {
        id,
        customer: { id: `cust-${id}` },
        ...(checkoutId ? { checkout_id: checkoutId } : {}),
        line_items: [
          { product_id: line.productId, variant_id: line.variantId, quantity: line.quantity, price: '10.00' },
        ],
      },
    });

  /** Whether a key value authenticates (a core read with it). */
  const works = async (key: string): Promise<boolean> => {
    const res = await p.request({ method: 'GET', url: '/v1/usage', key });
    if (res.statusCode !== 200 && res.statusCode !== 401)
      throw new Error(`key check answered ${res.statusCode} ${res.body}`);
    return res.statusCode === 200;
  };

  const createAgent = async (name: string): Promise<string> => {
    const res = await p.request({
      method: 'POST',
      url: '/api/agents',
      payload: { name, model: 'llama3.2', instructions: 'You are terse.' },
    });
    expect(res.statusCode, res.body).toBe(201);
    return (res.json() as { id: string }).id;
  };

  // ---------------------------------------------------------------------------------------------
  // Commerce: stock, single-use codes, carts checked out twice, cart lines.

  it('stock: 8 storefront orders and 6 cart checkouts race for the last 5 units → 5 win, stock never below 0', async () => {
    const line = { productId: 'prod_eau_de_parfum', variantId: 'var_edp_30ml' };
    await setStock(line.variantId, 100);
    const shoppers = await all(6, (i) => customerToken(`stock-shopper-${i}`));
    for (const key of shoppers) expect((await addItem(key, line)).statusCode).toBe(200);
    await setStock(line.variantId, 5);

    const answers = await Promise.all([
      ...Array.from({ length: 8 }, (_, i) => intake(`stock-order-${i}`, { ...line, quantity: 1 })),
      ...shoppers.map((key) => checkout(key)),
    ]);
    const orders = answers.slice(0, 8);
    const checkouts = answers.slice(8);
    expectOnly(orders, [201, 409], 'orders');
    expectOnly(checkouts, [200, 409], 'checkouts');
    expectCodes(answers, 409, 'OUT_OF_STOCK', 'refusals');
    const ordered = countOf(orders, 201);
    const reserved = countOf(checkouts, 200);
    expect(ordered + reserved, 'units sold or held').toBe(5);
    expect(await level(line.variantId)).toMatchObject({ onHand: 5 - ordered, reserved, available: 0 });
    // Only the answered orders were stored, each with its line.
    let stored = 0;
    for (let i = 0; i < 8; i++) stored += await rowCount('orders', 'storefront_id', `stock-order-${i}`);
    expect(stored).toBe(ordered);
  });

  it('single-use discount code: 6 orders of carts holding it at once → one order, used once', async () => {
    const line = { productId: 'prod_candle_classic', variantId: 'var_candle_4oz' };
    await setStock(line.variantId, 100);
    const code = `ONCE_${dialect.toUpperCase()}`;
    const created = await p.request({
      method: 'POST',
      url: '/v1/discounts',
      payload: { code, type: 'percentage', value: 10, usageLimit: 1 },
    });
    expect(created.statusCode, created.body).toBe(201);
    const checkouts: string[] = [];
    for (let i = 0; i < 6; i++) {
      const key = await customerToken(`once-${i}`);
      expect((await addItem(key, line)).statusCode).toBe(200);
      const applied = await p.request({ method: 'POST', url: '/api/cart/discounts', key, payload: { code } });
      expect(applied.statusCode, applied.body).toBe(200);
      const held = await checkout(key);
      expect(held.statusCode, held.body).toBe(200);
      checkouts.push((held.json() as { checkoutId: string }).checkoutId);
    }
    const before = await level(line.variantId);
    const answers = await Promise.all(
      checkouts.map((checkoutId, i) => intake(`once-order-${i}`, { ...line, quantity: 1 }, checkoutId)),
    );
    expectOnly(answers, [201, 422], 'orders');
    expectCodes(answers, 422, 'INVALID_DISCOUNT_CODE', 'refused orders');
    expect(countOf(answers, 201)).toBe(1);
    const codes = (await p.request({ method: 'GET', url: '/v1/discounts?limit=250' })).json() as {
      data: Array<{ code: string; usedCount: number }>;
    };
    expect(codes.data.find((d) => d.code === code)?.usedCount).toBe(1);
    let stored = 0;
    for (let i = 0; i < 6; i++) stored += await rowCount('orders', 'storefront_id', `once-order-${i}`);
    expect(stored).toBe(1);
    // One unit left the shelf (its hold with it); the refused orders' holds are as they were.
    expect(await level(line.variantId)).toMatchObject({
      onHand: before.onHand - 1,
      reserved: before.reserved - 1,
    });
  });

  it('a cart checked out 8 times at once holds one reservation; its order delivered 10 times at once is one order', async () => {
    const line = { productId: 'prod_candle_triple_wick', variantId: 'var_candle_22oz' };
    await setStock(line.variantId, 50);
    const key = await customerToken('twice-buyer');
    expect((await addItem(key, line, 2)).statusCode).toBe(200);

    const checkouts = await all(8, () => checkout(key));
    expectOnly(checkouts, [200], 'checkouts of one cart');
    const cart = await cartOf(key);
    expect(cart.checkoutId).not.toBeNull();
    expect(await level(line.variantId)).toMatchObject({ onHand: 50, reserved: 2 });
    const holds = await p.ctx.db
      .selectFrom('reservations')
      .select(['checkout_id', 'quantity'])
      .where('variant_id', '=', line.variantId)
      .execute();
    expect(holds).toEqual([{ checkout_id: cart.checkoutId, quantity: 2 }]);

    const orders = await all(10, () =>
      intake('twice-order', { ...line, quantity: 2 }, cart.checkoutId as string),
    );
    expectOnly(orders, [200, 201], 'deliveries of one order');
    expect(countOf(orders, 201)).toBe(1);
    expect(
      new Set(orders.filter((o) => o.statusCode < 300).map((o) => (o.json() as { id: string }).id)).size,
    ).toBe(1);
    expect(await rowCount('orders', 'storefront_id', 'twice-order')).toBe(1);
    expect(await level(line.variantId)).toMatchObject({ onHand: 48, reserved: 0 });
    const after = await cartOf(key);
    expect(after.items).toEqual([]);
    expect(after.checkoutId).toBeNull();
  });

  it('cart lines: 12 adds of one unit at once → no 500, every accepted unit counted, the per-variant cap held', async () => {
    const line = { productId: 'prod_candle_beeswax_pillar', variantId: 'var_pillar_3x4' };
    await setStock(line.variantId, 1000);
    // A new line added 12 times at once (CART_MAX_RESERVED_PER_VARIANT: 10).
    const fresh = await customerToken('lines-fresh');
    const adds = await all(12, () => addItem(fresh, line));
    expectOnly(adds, [200, 422], 'adds of a new line');
    expectCodes(adds, 422, 'UNPROCESSABLE', 'adds past the cap');
    const lines = (await cartOf(fresh)).items.filter((i) => i.variantId === line.variantId);
    expect.soft(lines.length, 'one line per variant').toBe(1);
    const units = lines.reduce((a, l) => a + l.quantity, 0);
    expect.soft(units, 'units in the cart = adds answered 200').toBe(countOf(adds, 200));
    expect.soft(units).toBeLessThanOrEqual(10);

    // A line that exists, added to 6 times at once: 1 + 6 units.
    const held = await customerToken('lines-held');
    expect((await addItem(held, line)).statusCode).toBe(200);
    const more = await all(6, () => addItem(held, line));
    expectOnly(more, [200], 'adds to an existing line');
    const quantity = (await cartOf(held)).items
      .filter((i) => i.variantId === line.variantId)
      .reduce((a, l) => a + l.quantity, 0);
    expect(quantity, 'no add lost').toBe(1 + countOf(more, 200));
  });

  // ---------------------------------------------------------------------------------------------
  // Budgets and quotas.

  it('daily request quota: 25 requests of a key with 10 left at once → exactly 10 served, 15 × 429', async () => {
    await quotaRace(p, 'quota-race');
  });

  it('daily token budget: 16 model calls at once hold their max_tokens — together they overshoot by at most one call (docs/llm.md)', async () => {
    const budget = 40;
    const { key } = await p.createKey({
      name: 'budget-race',
      type: 'development',
      services: ['llm'],
      role: 'Writer',
      dailyTokenBudget: budget,
    });
    const call = (content: string) =>
      p.request({
        method: 'POST',
        url: '/api/chat',
        key,
        payload: {
          model: 'llama3.2',
          stream: false,
          options: { num_predict: 8 },
          messages: [{ role: 'user', content }],
        },
      });
    const tokensOf = (a: Res) => {
      const body = a.json() as { prompt_eval_count?: number; eval_count?: number };
      return (body.prompt_eval_count ?? 0) + (body.eval_count ?? 0);
    };
    const answers = await all(16, (i) => call(`call ${i} one two three`));
    expectOnly(answers, [200, 429], 'model calls');
    const spent = answers.filter((a) => a.statusCode === 200).map(tokensOf);
    expect(spent.length).toBeGreaterThan(0);
    // Before holds, all 16 ran (176 tokens of 20). Now each holds ~13 tokens from admission.
    expect(spent.length, 'calls admitted at once').toBeLessThan(6);
    // Then one call after another until the budget refuses: the day's total passes the budget by
    // less than one call's tokens, as calls made one by one always could.
    for (let i = 0; i < 10; i++) {
      const next = await call(`after ${i}`);
      if (next.statusCode === 429) break;
      expect(next.statusCode).toBe(200);
      spent.push(tokensOf(next));
    }
    const total = spent.reduce((a, b) => a + b, 0);
    expect(total, 'tokens spent by the burst and the calls after it').toBeGreaterThanOrEqual(budget);
    expect(total).toBeLessThan(budget + Math.max(...spent));
  });

  // ---------------------------------------------------------------------------------------------
  // Unique names: one 201, the rest a clear 409, one row.

  const uniqueRace = async (
    what: string,
    create: () => Promise<Res>,
    code: string,
    stored: () => Promise<number>,
  ) => {
    const answers = await all(10, create);
    expectOnly(answers, [201, 409], what);
    expectCodes(answers, 409, code, what);
    expect.soft(countOf(answers, 201), `${what}: created`).toBe(1);
    expect(await stored(), `${what}: rows`).toBe(1);
  };

  it('unique names: credentials, tags, variables, discount codes, blends and memory labels created 10 times at once', async () => {
    await uniqueRace(
      'credential',
      () =>
        p.request({
          method: 'POST',
          url: '/api/v1/credentials',
          payload: { name: 'race-cred', type: 'httpHeaderAuth', data: { name: 'X-Token', value: 'v' } },
        }),
      'CONFLICT',
      () => rowCount('credentials', 'name', 'race-cred'),
    );
    await uniqueRace(
      'tag',
      () => p.request({ method: 'POST', url: '/api/v1/tags', payload: { name: 'race-tag' } }),
      'CONFLICT',
      () => rowCount('workflow_tags', 'name', 'race-tag'),
    );
    await uniqueRace(
      'variable',
      () => p.request({ method: 'POST', url: '/api/v1/variables', payload: { key: 'race_var', value: 'v' } }),
      'CONFLICT',
      () => rowCount('workflow_variables', 'key', 'race_var'),
    );
    await uniqueRace(
      'discount code',
      () =>
        p.request({
          method: 'POST',
          url: '/v1/discounts',
          payload: { code: 'RACE_NAME', type: 'percentage', value: 5 },
        }),
      'CONFLICT',
      () => rowCount('discount_codes', 'code_key', 'RACE_NAME'),
    );
    const shopper = await customerToken('blend-racer');
    await uniqueRace(
      'blend',
      () =>
        p.request({
          method: 'POST',
          url: '/api/custom-blends',
          key: shopper,
          payload: validBlend('Race blend'),
        }),
      'NAME_TAKEN',
      async () =>
        (
          (await p.request({ method: 'GET', url: '/api/custom-blends', key: shopper })).json() as {
            blends: Array<{ name: string }>;
          }
        ).blends.filter((b) => b.name === 'Race blend').length,
    );
    const agentId = await createAgent('label racer');
    await uniqueRace(
      'memory block label',
      () =>
        p.request({
          method: 'POST',
          url: `/api/agents/${agentId}/memory/blocks`,
          payload: { label: 'race_label', value: 'x' },
        }),
      'NAME_TAKEN',
      () => rowCount('agent_memory_blocks', 'label', 'race_label'),
    );
  });

  it('memory blocks: 26 new labels at once on an agent → at most the documented 20 blocks', async () => {
    const agentId = await createAgent('cap racer');
    const answers = await all(26, (i) =>
      p.request({
        method: 'POST',
        url: `/api/agents/${agentId}/memory/blocks`,
        payload: { label: `cap_${i}`, value: 'x' },
      }),
    );
    expectOnly(answers, [201, 409], 'block creations');
    const blocks = await rowCount('agent_memory_blocks', 'agent_id', agentId);
    expect(blocks, 'blocks stored').toBeLessThanOrEqual(20);
    expect(countOf(answers, 201), 'created answers = blocks stored').toBe(blocks);
  });

  // ---------------------------------------------------------------------------------------------
  // Per-owner caps: counted, then inserted. 12 creates at once with 3 places left → exactly 3 made,
  // 9 clear 409s, the cap exact. (Filled straight into the database: 1,000 creates would be slow.)

  const capRace = async (
    what: string,
    cap: number,
    create: (i: number) => Promise<Res>,
    made: number,
    stored: () => Promise<number>,
  ) => {
    expect(await stored(), `${what}: filled to 3 under the cap`).toBe(cap - 3);
    const answers = await all(12, create);
    expectOnly(answers, [made, 409], what);
    expectCodes(answers, 409, 'CONFLICT', what);
    expect.soft(countOf(answers, made), `${what}: created`).toBe(3);
    expect(await stored(), `${what}: stored`).toBe(cap);
  };

  /** Inserts `rows` 250 at a time (one statement's parameters stay well under both dialects' bounds). */
  const inBatches = async <T>(rows: T[], insert: (batch: T[]) => Promise<unknown>) => {
    for (let i = 0; i < rows.length; i += 250) await insert(rows.slice(i, i + 250));
  };

  it('blends of one customer: 12 creates at once with 3 left under the 1,000 → 3 made, 9 × 409', async () => {
    const shopper = await customerToken('cap-racer');
    const create = (name: string) =>
      p.request({ method: 'POST', url: '/api/custom-blends', key: shopper, payload: validBlend(name) });
    const seed = await create('Cap seed');
    expect(seed.statusCode, seed.body).toBe(201);
    const { db } = p.ctx;
    const row = await db
      .selectFrom('blends')
      .selectAll()
      .where('id', '=', (seed.json() as { id: string }).id)
      .executeTakeFirstOrThrow();
    const rows = Array.from({ length: 996 }, (_, i) => ({
      ...row,
      id: `blend_cap_${i}`,
      name: `Cap ${i}`,
      name_key: `cap ${i}`,
    }));
    await inBatches(rows, (batch) => db.insertInto('blends').values(batch).execute());
    await capRace(
      'blends',
      1_000,
      (i) => create(`Cap race ${i}`),
      201,
      () => rowCount('blends', 'owner', row.owner),
    );
  });

  it('flows of one account: 12 creates at once with 3 left under the 1,000 → 3 made, 9 × 409', async () => {
    // An account of its own: the cap counts every flow of the account.
    const key = await otherAccountKey(p);
    const create = (name: string) =>
      p.request({
        method: 'POST',
        url: '/api/v1/chatflows',
        key,
        payload: { name, kind: 'llm', model: 'llama3.2' },
      });
    const seed = await create('cap seed');
    expect(seed.statusCode, seed.body).toBe(201);
    const { db } = p.ctx;
    const row = await db
      .selectFrom('flows')
      .selectAll()
      .where('id', '=', (seed.json() as { id: string }).id)
      .executeTakeFirstOrThrow();
    const rows = Array.from({ length: 996 }, (_, i) => ({ ...row, id: `flow_cap_${i}` }));
    await inBatches(rows, (batch) => db.insertInto('flows').values(batch).execute());
    await capRace(
      'flows',
      1_000,
      (i) => create(`cap race ${i}`),
      201,
      () => rowCount('flows', 'account_id', row.account_id),
    );
  });

  it('Flowise records of one kind: 12 tools made at once with 3 left under the 10,000 → 3 made, 9 × 409', async () => {
    const key = await otherAccountKey(p);
    const create = (name: string) =>
      p.request({ method: 'POST', url: '/api/v1/tools', key, payload: { name, description: 'race' } });
    const seed = await create('cap seed');
    expect(seed.statusCode, seed.body).toBe(200);
    const { db } = p.ctx;
    const row = await db
      .selectFrom('flowise_objects')
      .selectAll()
      .where('id', '=', (seed.json() as { id: string }).id)
      .executeTakeFirstOrThrow();
    const rows = Array.from({ length: 9_996 }, (_, i) => ({ ...row, id: `tool-cap-${i}` }));
    await inBatches(rows, (batch) => db.insertInto('flowise_objects').values(batch).execute());
    const stored = async () => {
      const counted = await db
        .selectFrom('flowise_objects')
        .select((eb) => eb.fn.countAll<string | number>().as('n'))
        .where('account_id', '=', row.account_id)
        .where('kind', '=', 'tool')
        .executeTakeFirstOrThrow();
      return Number(counted.n);
    };
    await capRace('Flowise tools', 10_000, (i) => create(`cap race ${i}`), 200, stored);
  });

  it('pending OAuth2 consents of one account: 12 asked for at once with 3 left under the 100 → 3 links, 9 × 429', async () => {
    const key = await otherAccountKey(p);
    const made = await p.request({
      method: 'POST',
      url: '/api/v1/credentials',
      key,
      payload: {
        name: 'consent cap',
        type: 'oAuth2Api',
        data: {
          grantType: 'pkce',
          authUrl: 'https://auth.example.com/authorize',
          accessTokenUrl: 'https://auth.example.com/token',
          clientId: 'client',
          clientSecret: 'secret',
          scope: 'read',
          authentication: 'header',
        },
      },
    });
    expect(made.statusCode, made.body).toBe(201);
    const credentialId = (made.json() as { id: string }).id;
    const ask = () =>
      p.request({ method: 'POST', url: `/api/v1/credentials/${credentialId}/oauth2/authorize`, key });
    const first = await ask();
    expect(first.statusCode, first.body).toBe(200);
    const { db } = p.ctx;
    const row = await db
      .selectFrom('credential_oauth_states')
      .selectAll()
      .where('credential_id', '=', credentialId)
      .executeTakeFirstOrThrow();
    const rows = Array.from({ length: 96 }, (_, i) => ({
      ...row,
      id: `consent-cap-${i}`,
      ticket_hash: null,
    }));
    await db.insertInto('credential_oauth_states').values(rows).execute();
    const pending = async () =>
      Number(
        (
          await db
            .selectFrom('credential_oauth_states')
            .select((eb) => eb.fn.countAll<string | number>().as('n'))
            .where('account_id', '=', row.account_id)
            .executeTakeFirstOrThrow()
        ).n,
      );
    expect(await pending()).toBe(97);
    const answers = await all(12, ask);
    expectOnly(answers, [200, 429], 'consents');
    expect.soft(countOf(answers, 200), 'consent links made').toBe(3);
    expect(await pending(), 'pending consents').toBe(100);
  });

  it('loaders of one document store: 12 upserts at once lose none, and with 3 places left under the 200 → 3 made, 9 × 409', async () => {
    const makeStore = async (name: string): Promise<string> => {
      const res = await p.request({ method: 'POST', url: '/api/v1/document-store/store', payload: { name } });
      expect(res.statusCode, res.body).toBe(200);
      return (res.json() as { id: string }).id;
    };
    const upsert = (storeId: string, i: number) =>
      p.request({
        method: 'POST',
        url: `/api/v1/document-store/upsert/${storeId}`,
        payload: {
          loader: {
            name: 'plainText',
            config: { text: `Loader ${i} of the race: otters hold hands, ${i} times.` },
          },
        },
      });
    const loaders = async (storeId: string) =>
      (
        (await p.request({ method: 'GET', url: `/api/v1/document-store/store/${storeId}` })).json() as {
          loaders: Array<{ id: string; documentIds: string[] }>;
        }
      ).loaders;

    // Room for all: each upsert reads the store's loader list, adds its own and writes the list back.
    const roomy = await makeStore('race-roomy');
    const answers = await all(12, (i) => upsert(roomy, i));
    expectOnly(answers, [200], 'upserts with room');
    const kept = new Set((await loaders(roomy)).map((l) => l.id));
    const lost = answers
      .filter((a) => a.statusCode === 200)
      .map((a) => (a.json() as { docId: string }).docId)
      .filter((id) => !kept.has(id));
    expect.soft(lost, 'loaders answered 200 but not in the store').toEqual([]);
    expect(kept.size, 'loaders stored').toBe(countOf(answers, 200));

    // 197 loaders already: 3 places left.
    const full = await makeStore('race-full');
    const { db } = p.ctx;
    const seeded = Array.from({ length: 197 }, (_, i) => ({
      id: `seeded-${i}`,
      loaderId: 'plainText',
      loaderName: 'plainText',
      status: 'SYNC',
      totalChunks: 0,
      totalChars: 0,
      source: 'seed',
      documentIds: [],
    }));
    await db
      .updateTable('flowise_objects')
      .set({ body: JSON.stringify({ name: 'race-full', description: '', loaders: seeded }) })
      .where('id', '=', full)
      .execute();
    await capRace(
      'loaders',
      200,
      (i) => upsert(full, 100 + i),
      200,
      async () => (await loaders(full)).length,
    );
    // The refused upserts leave no documents behind in the store's topic.
    const referenced = (await loaders(full)).flatMap((l) => l.documentIds);
    expect(referenced).toHaveLength(3);
    expect(await rowCount('documents', 'topic', `docstore:${full}`), "documents in the store's topic").toBe(
      3,
    );

    // A store deleted while upserts race into it: whichever lands first, no document is left behind.
    const doomed = await makeStore('race-doomed');
    // Ten loaders: the old delete dropped their documents between its read and the delete, time enough for upserts to land.
    for (let i = 0; i < 10; i++) expect((await upsert(doomed, i)).statusCode).toBe(200);
    const [gone, ...late] = await Promise.all([
      p.request({ method: 'DELETE', url: `/api/v1/document-store/store/${doomed}` }),
      ...Array.from({ length: 6 }, (_, i) => upsert(doomed, 200 + i)),
    ]);
    expect(gone?.statusCode, gone?.body).toBe(200);
    expectOnly(late, [200, 404], 'upserts racing the delete');
    expect(await rowCount('documents', 'topic', `docstore:${doomed}`), 'documents of the deleted store').toBe(
      0,
    );

    // Two chunks of one document edited at once: each loads the document again with its edit; the
    // second finds the document replaced and is refused, leaving no document the loader does not name.
    const edited = await makeStore('race-edits');
    const long = Array.from({ length: 40 }, (_, i) => `Sentence ${i} tells of otters and rivers.`).join(' ');
    const made = await p.request({
      method: 'POST',
      url: `/api/v1/document-store/upsert/${edited}`,
      payload: {
        loader: { name: 'plainText', config: { text: long } },
        splitter: { config: { chunkSize: 200 } },
      },
    });
    expect(made.statusCode, made.body).toBe(200);
    const loaderId = (made.json() as { docId: string }).docId;
    const page = (
      await p.request({ method: 'GET', url: `/api/v1/document-store/chunks/${edited}/${loaderId}/1` })
    ).json() as { chunks: Array<{ id: string }> };
    expect(page.chunks.length).toBeGreaterThan(2);
    const edits = await Promise.all(
      [0, 2].map((i) =>
        p.request({
          method: 'PUT',
          url: `/api/v1/document-store/chunks/${edited}/${loaderId}/${page.chunks[i]?.id}`,
          payload: { pageContent: `Edit ${i}.` },
        }),
      ),
    );
    expectOnly(edits, [200, 404], 'edits at once');
    expect(countOf(edits, 200)).toBeGreaterThan(0);
    const named = (await loaders(edited)).flatMap((l) => l.documentIds);
    expect(await rowCount('documents', 'topic', `docstore:${edited}`), 'documents of the store').toBe(
      named.length,
    );
    const after = await p.request({
      method: 'GET',
      url: `/api/v1/document-store/chunks/${edited}/${loaderId}/1`,
    });
    expect(after.statusCode, after.body).toBe(200);
  });

  // ---------------------------------------------------------------------------------------------
  // API keys: rotation.

  const readerKey = (name: string) =>
    p.createKey({ name, type: 'development', services: ['core'], role: 'Reader' });

  const rotate = (id: string, gracePeriodSeconds = 0) =>
    p.request({ method: 'POST', url: `/v1/api-keys/${id}/rotate`, payload: { gracePeriodSeconds } });

  it('a key rotated 10 times at once leaves exactly one valid new key (and its row whole)', async () => {
    const { key: old, id } = await readerKey('rotate-race');
    const answers = await all(10, () => rotate(id));
    expectOnly(answers, [200, 409], 'rotations');
    const issued = answers.filter((a) => a.statusCode === 200).map((a) => (a.json() as { key: string }).key);
    const valid: string[] = [];
    for (const k of issued) if (await works(k)) valid.push(k);
    expect(valid, 'valid new keys').toHaveLength(1);
    expect(await works(old), 'the old value').toBe(false);
    const row = await p.ctx.db
      .selectFrom('api_keys')
      .selectAll()
      .where('id', '=', id)
      .executeTakeFirstOrThrow();
    expect(row.hash).toMatch(/\S/);
    expect(row.last4).toBe(valid[0]?.slice(-4));
    expect(row.revoked_at).toBeNull();
  });

  it('a key rotated 4 times at once with a grace period ends as some order of the rotations would leave it', async () => {
    // One after the other, the last value is current and the one before it in its grace period; the
    // original value (rotated away first) is dead. Every answered value was a real rotation.
    const { key: old, id } = await readerKey('rotate-grace-race');
    const answers = await all(4, () => rotate(id, 3600));
    expectOnly(answers, [200, 409], 'rotations');
    const issued = answers.filter((a) => a.statusCode === 200).map((a) => (a.json() as { key: string }).key);
    expect(issued.length).toBeGreaterThanOrEqual(1);
    const valid: string[] = [];
    for (const k of issued) if (await works(k)) valid.push(k);
    // The rotations that answered 200, in some order: the last is current, the one before it (the
    // original value when only one went through) in its grace period, every other value dead.
    expect.soft(await works(old), 'the original value').toBe(issued.length === 1);
    expect(valid, 'issued values still valid').toHaveLength(Math.min(issued.length, 2));
  });

  it('a key revoked while it is rotated and changed at once stays revoked', async () => {
    const { key: old, id } = await readerKey('revoke-race');
    const answers = await Promise.all([
      p.request({ method: 'DELETE', url: `/v1/api-keys/${id}` }),
      ...Array.from({ length: 4 }, () => rotate(id)),
      ...Array.from({ length: 3 }, (_, i) =>
        p.request({ method: 'PATCH', url: `/v1/api-keys/${id}`, payload: { name: `renamed-${i}` } }),
      ),
    ]);
    expectOnly(answers.slice(0, 1), [204], 'revocation');
    expectOnly(answers.slice(1), [200, 409], 'rotations and changes');
    const view = (await p.request({ method: 'GET', url: `/v1/api-keys/${id}` })).json() as { status: string };
    expect.soft(view.status, 'status after the race').toBe('revoked');
    const live: string[] = [];
    for (const k of [
      old,
      ...answers
        .slice(1, 5)
        .filter((a) => a.statusCode === 200)
        .map((a) => (a.json() as { key: string }).key),
    ])
      if (await works(k)) live.push(k.slice(-4));
    expect(live, 'values that still authenticate after the revocation').toEqual([]);
  });

  // ---------------------------------------------------------------------------------------------
  // Workflows: idempotency keys, activation.

  const webhook = (path: string, payload: object, headers: Record<string, string> = {}) =>
    p.app.inject({ method: 'POST', url: `/webhook/${path}`, payload, headers });

  const createWorkflow = async (body: unknown): Promise<string> => {
    const res = await p.request({ method: 'POST', url: '/api/v1/workflows', payload: body as object });
    expect(res.statusCode, res.body).toBe(201);
    return (res.json() as { id: string }).id;
  };

  it('idempotency key: 12 webhook calls with one Idempotency-Key at once → one execution, one answer', async () => {
    const id = await createWorkflow(
      echoFlow('race-idem', { options: { dedupeKey: '={{ $json.headers["idempotency-key"] }}' } }),
    );
    const activated = await p.request({ method: 'POST', url: `/api/v1/workflows/${id}/activate` });
    expect(activated.statusCode, activated.body).toBe(200);
    const answers = await all(12, (i) =>
      webhook('race-idem', { message: `m${i}` }, { 'idempotency-key': 'idem-1' }),
    );
    expectOnly(answers, [200], 'deliveries');
    expect(new Set(answers.map((a) => a.body)).size, 'distinct answers').toBe(1);
    const executions = (
      await p.request({ method: 'GET', url: `/api/v1/executions?workflowId=${id}&limit=250` })
    ).json() as { data: unknown[] };
    expect(executions.data).toHaveLength(1);
  });

  it('a workflow activated and deactivated at once (3 rounds of 12) ends consistent: active ⇔ its webhook answers', async () => {
    const id = await createWorkflow(echoFlow('race-toggle'));
    for (let round = 0; round < 3; round++) {
      const on = await p.request({ method: 'POST', url: `/api/v1/workflows/${id}/activate` });
      expect(on.statusCode, on.body).toBe(200);
      const answers = await all(12, (i) =>
        p.request({
          method: 'POST',
          url: `/api/v1/workflows/${id}/${i % 2 === 0 ? 'deactivate' : 'activate'}`,
        }),
      );
      // Both are documented idempotent: a repeat answers 200, whoever else toggles meanwhile.
      expectOnly(answers, [200], `round ${round}: activations and deactivations`);
      const active = (
        (await p.request({ method: 'GET', url: `/api/v1/workflows/${id}` })).json() as { active: boolean }
      ).active;
      const hooks = await rowCount('webhooks', 'workflow_id', id);
      expect(
        hooks,
        `round ${round}: webhook rows of a workflow that is ${active ? 'active' : 'inactive'}`,
      ).toBe(active ? 1 : 0);
      const called = await webhook('race-toggle', { message: 'x' });
      expect(called.statusCode, `round ${round}: its webhook while ${active ? 'active' : 'inactive'}`).toBe(
        active ? 200 : 404,
      );
    }
  });

  // ---------------------------------------------------------------------------------------------
  // Credentials: shared and transferred at once.

  it('a credential shared 6 times at once (overlapping lists, then disjoint ones) holds one of the lists asked for', async () => {
    const keys = await all(6, (i) =>
      p.createKey({ name: `share-${i}`, type: 'development', services: ['workflow'], role: 'Writer' }),
    );
    const common = await p.createKey({
      name: 'share-common',
      type: 'development',
      services: ['workflow'],
      role: 'Writer',
    });
    const race = async (name: string, lists: string[][]) => {
      const created = await p.request({
        method: 'POST',
        url: '/api/v1/credentials',
        payload: { name, type: 'httpHeaderAuth', data: { name: 'X-Token', value: 'v' } },
      });
      expect(created.statusCode, created.body).toBe(201);
      const credId = (created.json() as { id: string }).id;
      const answers = await Promise.all(
        lists.map((shareWithIds) =>
          p.request({ method: 'PUT', url: `/api/v1/credentials/${credId}/share`, payload: { shareWithIds } }),
        ),
      );
      expectOnly(answers, [200], `${name}: shares`);
      const shown = (
        await p.request({ method: 'GET', url: `/api/v1/credentials/${credId}/share` })
      ).json() as {
        sharedWith: string[];
      };
      expect
        .soft(
          lists.map((l) => JSON.stringify([...l].sort())),
          `${name}: the shares stored`,
        )
        .toContain(JSON.stringify([...shown.sharedWith].sort()));
    };
    await race(
      'race-shared-overlapping',
      keys.map((k) => [`key:${k.id}`, `key:${common.id}`]),
    );
    await race(
      'race-shared-disjoint',
      keys.map((k) => [`key:${k.id}`]),
    );
  });

  it('a credential transferred and shared at once has one owner, not among its own shares', async () => {
    const keys = await all(3, (i) =>
      p.createKey({ name: `transfer-${i}`, type: 'development', services: ['workflow'], role: 'Writer' }),
    );
    const [a, b] = keys.map((k) => `key:${k.id}`) as [string, string, string];
    const created = await p.request({
      method: 'POST',
      url: '/api/v1/credentials',
      payload: { name: 'race-transfer', type: 'httpHeaderAuth', data: { name: 'X-Token', value: 'v' } },
    });
    expect(created.statusCode, created.body).toBe(201);
    const credId = (created.json() as { id: string }).id;
    const everyone = keys.map((k) => `key:${k.id}`);
    const answers = await all(8, (i) =>
      i % 2 === 0
        ? p.request({
            method: 'PUT',
            url: `/api/v1/credentials/${credId}/transfer`,
            payload: { destinationProjectId: i % 4 === 0 ? a : b },
          })
        : p.request({
            method: 'PUT',
            url: `/api/v1/credentials/${credId}/share`,
            payload: { shareWithIds: everyone },
          }),
    );
    expectOnly(answers, [200], 'transfers and shares');
    const shown = (await p.request({ method: 'GET', url: `/api/v1/credentials/${credId}/share` })).json() as {
      owner: string;
      sharedWith: string[];
    };
    expect([a, b]).toContain(shown.owner);
    expect(shown.sharedWith, `shares of a credential owned by ${shown.owner}`).not.toContain(shown.owner);
  });

  // ---------------------------------------------------------------------------------------------
  // Portal: a member invited twice.

  const invite = (email: string) =>
    p.request({ method: 'POST', url: '/v1/members/invites', payload: { email, role: 'viewer' } });
  const accept = (token: string) =>
    p.request({
      method: 'POST',
      url: '/v1/auth/invites/accept',
      key: null,
      payload: { token, name: 'Racer', password: 'copper meadow signal 92' },
    });

  it('a member invited 5 times at once, every link accepted at once → one member, clear refusals', async () => {
    const email = `race-invite-${dialect}@example.com`;
    const invites = await all(5, () => invite(email));
    expectOnly(invites, [201, 409], 'invites');
    const tokens = invites
      .filter((i) => i.statusCode === 201)
      .map((i) => tokenOf((i.json() as { inviteUrl: string }).inviteUrl));
    expect(tokens.length).toBeGreaterThan(0);
    const accepted = await Promise.all(tokens.map(accept));
    expectOnly(accepted, [200, 400, 409], 'accepts');
    expect(countOf(accepted, 200)).toBe(1);
    expect(await rowCount('members', 'email', email)).toBe(1);

    // One link accepted 5 times at once: one member.
    const other = `race-link-${dialect}@example.com`;
    const one = await invite(other);
    expect(one.statusCode, one.body).toBe(201);
    const token = tokenOf((one.json() as { inviteUrl: string }).inviteUrl);
    const again = await all(5, () => accept(token));
    expectOnly(again, [200, 400, 409], 'accepts of one link');
    expect(countOf(again, 200)).toBe(1);
    expect(await rowCount('members', 'email', other)).toBe(1);
  });

  // ---------------------------------------------------------------------------------------------
  // Documents: loaded and processed twice.

  it('a document loaded 8 times and processed 3 × 8 times at once → one document, its chunks whole', async () => {
    const topic = 'race-docs';
    const content = `# Herons\n\n${'The grey heron waits in the shallows for fish and frogs. '.repeat(40)}\n\n## Nests\n\n${'Herons nest in colonies high in the trees. '.repeat(40)}`;
    const loads = await all(8, () =>
      p.request({
        method: 'POST',
        url: '/api/documents/load',
        payload: { source: 'markdown', content, topic },
      }),
    );
    expectOnly(loads, [200, 201], 'loads');
    expect(countOf(loads, 201)).toBe(1);
    const ids = new Set(loads.filter((l) => l.statusCode < 300).map((l) => (l.json() as { id: string }).id));
    expect(ids.size).toBe(1);
    const docId = [...ids][0] as string;
    expect(await rowCount('documents', 'topic', topic)).toBe(1);

    for (let round = 0; round < 3; round++) {
      const answers = await all(8, () =>
        p.request({
          method: 'POST',
          url: `/api/documents/${docId}/process`,
          payload: { chunkSize: 200, chunkOverlap: 20 },
        }),
      );
      expectOnly(answers, [202], `round ${round}: processing requests`);
    }
    const doc = await until(async () => {
      const d = (await p.request({ method: 'GET', url: `/api/documents/${docId}` })).json() as {
        status: string;
        processing: boolean;
        chunkCount: number;
      };
      return !d.processing && (d.status === 'indexed' || d.status === 'failed') ? d : undefined;
    }, 'the document processed');
    expect(doc.status).toBe('indexed');
    const chunks = (await p.request({ method: 'GET', url: `/api/documents/${docId}/chunks` })).json() as {
      data: Array<{ chunkId: string; index: number }>;
    };
    expect(chunks.data.map((c) => c.index)).toEqual(Array.from({ length: doc.chunkCount }, (_, i) => i));
    expect(await rowCount('chunks', 'document_id', docId)).toBe(doc.chunkCount);
    const found = (
      await p.request({
        method: 'POST',
        url: '/api/knowledge/query',
        payload: { query: 'heron nests', topics: [topic], topK: 50 },
      })
    ).json() as { results: Array<{ chunkId: string }> };
    const current = new Set(chunks.data.map((c) => c.chunkId));
    expect(found.results.length).toBeGreaterThan(0);
    expect(found.results.filter((r) => !current.has(r.chunkId))).toEqual([]);
    expect(new Set(found.results.map((r) => r.chunkId)).size).toBe(found.results.length);
  });

  // ---------------------------------------------------------------------------------------------
  // Agents: one conversation written at once.

  type Turn = {
    conversationId: string;
    messages: Array<{ id: string; role: string; content: string }>;
  };
  type Message = { id: string; role: string; content: string };

  const sendTo = (agentId: string, content: string, conversationId?: string) =>
    p.request({
      method: 'POST',
      url: `/api/agents/${agentId}/messages`,
      payload: { content, ...(conversationId ? { conversationId } : {}) },
    });

  const transcript = async (conversationId: string, limit = 200): Promise<Message[]> => {
    const out: Message[] = [];
    let cursor: string | null = null;
    do {
      // Bounded: a cursor that does not move on fails the probe instead of paging forever.
      if (out.length > 1000) throw new Error(`paging ${conversationId} did not end`);
      const res = await p.request({
        method: 'GET',
        url: `/api/conversations/${conversationId}?limit=${limit}${cursor ? `&cursor=${cursor}` : ''}`,
      });
      expect(res.statusCode, res.body).toBe(200);
      const page = (res.json() as { messages: { data: Message[]; nextCursor: string | null } }).messages;
      out.push(...page.data);
      cursor = page.nextCursor;
    } while (cursor);
    return out;
  };

  it('a conversation sent 10 messages at once keeps all 20 new messages, in order, each answer after its question', async () => {
    const agentId = await createAgent('busy talker');
    const first = await sendTo(agentId, 'opening');
    expect(first.statusCode, first.body).toBe(200);
    const conversationId = (first.json() as Turn).conversationId;
    const answers = await all(10, (i) => sendTo(agentId, `question ${i}`, conversationId));
    expectOnly(answers, [200], 'turns');
    const messages = await transcript(conversationId);
    expect(messages).toHaveLength(2 + 2 * countOf(answers, 200));
    const ids = messages.map((m) => m.id);
    expect(ids, 'oldest first').toEqual([...ids].sort());
    expect(new Set(ids).size).toBe(ids.length);
    const at = new Map(ids.map((id, i) => [id, i]));
    for (const turn of answers.filter((a) => a.statusCode === 200).map((a) => a.json() as Turn)) {
      const [user, assistant] = turn.messages;
      expect(user && at.has(user.id), 'the question stored').toBe(true);
      expect(assistant && at.has(assistant.id), 'the answer stored').toBe(true);
      expect(at.get(assistant?.id ?? '') as number).toBeGreaterThan(at.get(user?.id ?? '') as number);
      expect(messages[at.get(assistant?.id ?? '') as number]?.content).toBe(`Echo: ${user?.content}`);
    }
    // Paged 3 at a time: the same messages, none twice, none skipped.
    expect((await transcript(conversationId, 3)).map((m) => m.id)).toEqual(ids);
  });

  it('a conversation reset while turns start: no answer is left without its question', async () => {
    const agentId = await createAgent('reset racer');
    const first = await sendTo(agentId, 'opening');
    expect(first.statusCode, first.body).toBe(200);
    const conversationId = (first.json() as Turn).conversationId;
    const reset = () => p.request({ method: 'DELETE', url: `/api/conversations/${conversationId}/messages` });
    const resets: Res[] = [];
    let turns: Res[];
    if (dialect === 'postgres') {
      // The turns are held where they have written their question but not yet their run (another
      // connection holds a lock that delays inserts into agent_runs, as a slow insert would), and
      // the resets come then, while they are held. Nothing else is timed: the lock only widens the
      // window. (The turn writes both in one transaction on the locked conversation, so the resets
      // wait for it too; before, the question was committed alone and a reset could delete it.)
      const { rows } = await sql<{ s: string }>`select current_schema() as s`.execute(p.ctx.db);
      const side = new pg.Client({ connectionString: PG_URL });
      await side.connect();
      const waiting = async () =>
        Number(
          (await side.query('select count(*)::int as n from pg_locks where not granted')).rows[0]?.n ?? 0,
        );
      try {
        await side.query('begin');
        await side.query(`lock table "${rows[0]?.s}".agent_runs in share mode`);
        const sending = all(2, (i) => sendTo(agentId, `reset question ${i}`, conversationId));
        await until(async () => (await waiting()) >= 1, 'a turn held at its run');
        const resetting = all(2, reset);
        await until(async () => (await waiting()) >= 2, 'a reset held behind the turn');
        await side.query('commit');
        turns = await sending;
        resets.push(...(await resetting));
      } finally {
        await side.end();
      }
    } else {
      // Resets one after the other in two loops while 8 turns run (bounded; a turn of the event loop
      // between resets, which on SQLite answer without one and would starve the turns).
      let sending = true;
      const resetting = async () => {
        for (let n = 0; sending && n < 200; n++) {
          resets.push(await reset());
          await new Promise((resolve) => setImmediate(resolve));
        }
      };
      const loops = [resetting(), resetting()];
      turns = await all(8, (i) => sendTo(agentId, `reset question ${i}`, conversationId));
      sending = false;
      await Promise.all(loops);
    }
    expectOnly(turns, [200], 'turns');
    expectOnly(resets, [200, 409], 'resets');
    const present = new Set((await transcript(conversationId)).map((m) => m.id));
    const orphans = turns
      .filter((t) => t.statusCode === 200)
      .map((t) => (t.json() as Turn).messages)
      .filter(([user, assistant]) => present.has(assistant?.id ?? '') && !present.has(user?.id ?? ''))
      .map(([, assistant]) => assistant?.content);
    expect(orphans, 'answers kept whose question was deleted').toEqual([]);
  });
});

// -------------------------------------------------------------------------------------------------
// The request quota on Redis counters (what several processes share).

describe.runIf(await redisAvailable())('race audit: daily request quota on Redis', () => {
  let p: TestPlatform;
  beforeAll(async () => {
    p = await createTestPlatform({ dialect: 'sqlite', redis: true, modules: [authModule, healthModule] });
  });
  afterAll(() => p?.close());

  it('25 requests of a key with a quota of 10 at once → exactly 10 served, 15 × 429', async () => {
    await quotaRace(p, 'quota-race-redis');
  });
});
