import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { COUNTRY_CODE_PATTERN, checkAddress } from '../../src/modules/cart/address.js';
import { createTestPlatform, type TestPlatform } from '../helpers/platform.js';

type Schema = Record<string, unknown>;
interface Media {
  schema?: Schema;
  example?: unknown;
}
interface Operation {
  parameters?: Array<{ in: string; name: string; required?: boolean; schema?: Schema }>;
  requestBody?: { content?: Record<string, Media> };
  responses?: Record<string, { content?: Record<string, Media> }>;
}
interface Document {
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, Schema> };
}

const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'options'];
const REF = '#/components/schemas/';

/** A copy with `#/components/schemas/X` as `urn:schema:X` and no `$id`: each compiles on its own. */
function portable(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(portable);
  if (value === null || typeof value !== 'object') return value;
  const out: Schema = {};
  for (const [key, child] of Object.entries(value)) {
    if (key === '$id') continue;
    out[key] =
      key === '$ref' && typeof child === 'string' && child.startsWith(REF)
        ? `urn:schema:${child.slice(REF.length)}`
        : portable(child);
  }
  return out;
}

/**
 * The rules the document states beside the schemas that validate: every list's limit and sort,
 * an example for every JSON body and JSON success (valid against its schema), and rules the
 * services check themselves (money, country codes) shown while the services keep their messages.
 */
describe('OpenAPI document: list rules, examples and documented-only rules', () => {
  let p: TestPlatform;
  let doc: Document;
  const operations: Array<{ name: string; op: Operation }> = [];
  beforeAll(async () => {
    p = await createTestPlatform({ dialect: 'sqlite' });
    const res = await p.request({ method: 'GET', url: '/openapi.json', key: null });
    expect(res.statusCode).toBe(200);
    doc = res.json();
    for (const [path, item] of Object.entries(doc.paths))
      for (const [method, op] of Object.entries(item))
        if (METHODS.includes(method)) operations.push({ name: `${method} ${path}`, op });
  });
  afterAll(async () => {
    await p.close();
  });

  const query = (op: Operation, name: string) =>
    (op.parameters ?? []).find((param) => param.in === 'query' && param.name === name);

  /** A list: it takes `limit`, or answers a page (`data` array and `nextCursor`). */
  function isList(op: Operation): boolean {
    const page = op.responses?.['200']?.content?.['application/json']?.schema;
    const properties = (page?.properties ?? {}) as Schema;
    return query(op, 'limit') !== undefined || ('data' in properties && 'nextCursor' in properties);
  }

  it('documents a maximum limit and the sortable fields of every list', () => {
    const lists = operations.filter(({ op }) => isList(op));
    const missing: string[] = [];
    for (const { name, op } of lists) {
      const limit = query(op, 'limit')?.schema;
      // OpenAI's own lists (files, batches) order by `order` (asc|desc), as OpenAI names it.
      const sort = (query(op, 'sort') ?? query(op, 'order'))?.schema;
      if (typeof limit?.maximum !== 'number') missing.push(`${name}: limit without a maximum`);
      if (!Array.isArray(sort?.enum) || sort.enum.length === 0) missing.push(`${name}: sort without an enum`);
    }
    // keys, products, workflows, executions, credentials, discounts, orders, llm requests,
    // documents, agents, conversations, a conversation's and an agent's messages, flow messages.
    expect(lists.length).toBeGreaterThanOrEqual(14);
    expect(missing).toEqual([]);
  });

  it('documents the parameters a list route takes beyond the list rules (conversationId, required)', () => {
    const messages = doc.paths['/api/agents/{agentId}/messages']?.get;
    expect(messages && query(messages, 'conversationId')).toMatchObject({ required: true });
    expect(messages && query(messages, 'fields')).toBeUndefined();
    expect(messages && query(messages, 'role')?.schema?.enum).toEqual(['user', 'assistant', 'tool']);
  });

  it('gives every JSON request body and JSON 2xx response an example its schema accepts', () => {
    const ajv = new Ajv2020({ strict: false, allErrors: true });
    addFormats.default(ajv);
    for (const [name, schema] of Object.entries(doc.components.schemas))
      ajv.addSchema(portable(schema) as Schema, `urn:schema:${name}`);
    const missing: string[] = [];
    const invalid: string[] = [];
    let checked = 0;
    for (const { name, op } of operations) {
      const media: Array<[string, Media | undefined]> = [
        ['request body', op.requestBody?.content?.['application/json']],
        ...Object.entries(op.responses ?? {})
          .filter(([status]) => status.startsWith('2'))
          .map(([status, response]): [string, Media | undefined] => [
            status,
            response.content?.['application/json'],
          ]),
      ];
      for (const [what, json] of media) {
        if (!json?.schema) continue;
        checked++;
        if (!('example' in json)) {
          missing.push(`${name} ${what}`);
          continue;
        }
        const validate = ajv.compile(portable(json.schema) as Schema);
        if (!validate(json.example))
          invalid.push(
            `${name} ${what}: ${ajv.errorsText(validate.errors)} in ${JSON.stringify(json.example)}`,
          );
      }
    }
    expect(checked).toBeGreaterThan(100);
    expect(missing).toEqual([]);
    expect(invalid).toEqual([]);
  });

  /** The JSON schema of a property of an operation's request body. */
  function bodyProperty(path: string, method: string, ...names: string[]): Schema | undefined {
    let node = doc.paths[path]?.[method]?.requestBody?.content?.['application/json']?.schema;
    for (const name of names) {
      const items = node?.items as Schema | undefined;
      node = name === '[]' ? items : (node?.properties as Record<string, Schema> | undefined)?.[name];
    }
    return node;
  }

  it('documents the ttlSeconds maximum this server is configured with', () => {
    expect(bodyProperty('/v1/auth/tokens', 'post', 'ttlSeconds')).toMatchObject({
      minimum: 60,
      maximum: 86_400,
    });
  });

  it('shows money amounts to the cent and country codes as the rules the services check', () => {
    expect(bodyProperty('/v1/discounts', 'post', 'value')?.multipleOf).toBe(0.01);
    expect(bodyProperty('/v1/discounts', 'post', 'minSubtotal')?.multipleOf).toBe(0.01);
    const price = bodyProperty('/v1/orders', 'post', 'line_items', '[]', 'price');
    expect(price?.anyOf).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ type: 'number', multipleOf: 0.01, maximum: 999_999_999.99 }),
        expect.objectContaining({ type: 'string', pattern: '^\\d{1,9}(\\.\\d{1,2})?$' }),
      ]),
    );
    const country = bodyProperty('/api/cart/shipping-estimates', 'post', 'address', 'country');
    const pattern = new RegExp(String(country?.pattern), 'u');
    for (const code of ['DE', 'us', 'Gb']) expect(pattern.test(code), code).toBe(true);
    for (const code of ['ZZ', 'XX', 'D', 'DEU']) expect(pattern.test(code), code).toBe(false);
    expect(JSON.stringify(doc)).not.toContain('x-documented');
  });

  it('documents exactly the country codes the address check accepts, in any case', () => {
    const pattern = new RegExp(COUNTRY_CODE_PATTERN, 'u');
    const letters = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ';
    const wrong: string[] = [];
    for (const a of letters)
      for (const b of letters)
        for (const code of [`${a}${b}`, `${a}${b}`.toLowerCase(), `${a}${b.toLowerCase()}`]) {
          const accepted = !checkAddress({ country: code, postalCode: '1' }).some(
            (problem) => problem.field === 'address.country',
          );
          if (pattern.test(code) !== accepted) wrong.push(code);
        }
    expect(wrong).toEqual([]);
  });

  it('keeps the services’ own 400s for what the document alone states', async () => {
    const discount = await p.request({
      method: 'POST',
      url: '/v1/discounts',
      payload: { code: 'CENTS', type: 'fixed_amount', value: 0.285 },
    });
    expect(discount.statusCode).toBe(400);
    expect(discount.json()).toMatchObject({
      message: 'Invalid discount code',
      details: { fields: [{ field: 'value', message: 'must be an amount above 0 with at most 2 decimals' }] },
    });

    const shipping = await p.request({
      method: 'POST',
      url: '/api/cart/shipping-estimates',
      payload: { address: { postalCode: '10115', country: 'ZZ' } },
    });
    expect(shipping.statusCode).toBe(400);
    expect(shipping.json()).toMatchObject({
      message: 'Invalid address',
      details: {
        fields: [{ field: 'address.country', message: 'must be an ISO 3166-1 alpha-2 country code' }],
      },
    });

    const order = await p.request({
      method: 'POST',
      url: '/v1/orders',
      payload: {
        id: 'cents-1',
        customer: {},
        line_items: [
          { product_id: 'prod_candle_classic', variant_id: 'var_candle_8oz', quantity: 1, price: 0.285 },
        ],
      },
    });
    expect(order.statusCode).toBe(400);
    expect(order.json()).toMatchObject({ message: 'Invalid order lines' });

    const messages = await p.request({ method: 'GET', url: '/api/agents/agent_x/messages' });
    expect(messages.statusCode).toBe(400);
    expect(messages.json()).toMatchObject({
      message: 'conversationId is required',
      details: { fields: [{ field: 'conversationId', message: 'is required' }] },
    });
  });

  it('refuses what a newly documented list rule refuses, with the list helper’s messages', async () => {
    const cases: Array<[string, string, string]> = [
      ['/v1/orders?limit=101', 'limit', 'must be at most 100'],
      ['/api/v1/credentials?sort=type', 'sort', "cannot sort by 'type'; allowed: id, name, createdAt"],
      ['/api/conversations?fields=title', 'fields', 'unknown fields: title'],
      ['/v1/llm/requests?status=done', 'status', 'must be one of: success, error, canceled'],
    ];
    for (const [url, field, message] of cases) {
      const res = await p.request({ method: 'GET', url });
      expect(res.statusCode, url).toBe(400);
      expect(res.json(), url).toMatchObject({
        message: 'Invalid list parameters',
        details: { fields: [{ field, message }] },
      });
    }
  });
});
