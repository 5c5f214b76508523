/** Issue 5: add-to-cart and get-cart throughput, and a contention run that must not oversell. */
const VARIANT = { productId: 'prod_candle_classic', variantId: 'var_candle_8oz' };

async function call(baseUrl, key, method, path, body) {
  const res = await fetch(`${baseUrl}${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body ? { 'content-type': 'application/json' } : {}) },
    ...(body ? { body: JSON.stringify(body) } : {}),
  });
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
  return res.json();
}

async function customers(baseUrl, key, prefix, count) {
  const tokens = [];
  for (let i = 0; i < count; i++) {
    const { token } = await call(baseUrl, key, 'POST', '/v1/auth/tokens', {
      customerId: `${prefix}_${i}`,
      scopes: ['commerce:read', 'commerce:write'],
      ttlSeconds: 3600,
    }).catch(() =>
      call(baseUrl, key, 'POST', '/v1/auth/tokens', {
        customerId: `${prefix}_${i}`,
        scopes: ['commerce:read', 'commerce:write'],
      }),
    );
    tokens.push(token);
  }
  return tokens;
}

let turn = 0;

export default [
  {
    name: 'POST /api/cart/items (add to cart, SQLite)',
    async setup({ baseUrl, key }) {
      await call(baseUrl, key, 'PUT', `/v1/inventory/${VARIANT.variantId}`, { onHand: 1_000_000_000 });
      // Many customers, two lines each (wrapped or not), so no line reaches its 99 units.
      const tokens = await customers(baseUrl, key, 'bench_add', 600);
      return {
        method: 'POST',
        path: '/api/cart/items',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${tokens[0]}` },
        body: JSON.stringify({ ...VARIANT, quantity: 1 }),
        setupRequest: (req) => {
          const i = turn++;
          return {
            ...req,
            headers: { ...req.headers, authorization: `Bearer ${tokens[i % tokens.length]}` },
            body: JSON.stringify({ ...VARIANT, quantity: 1, customizations: { giftWrapped: i % 2 === 0 } }),
          };
        },
      };
    },
  },
  {
    name: 'GET /api/cart (3 lines, SQLite)',
    async setup({ baseUrl, key }) {
      const [token] = await customers(baseUrl, key, 'bench_get', 1);
      for (const variantId of ['var_candle_4oz', 'var_candle_8oz', 'var_candle_14oz']) {
        await call(baseUrl, token, 'POST', '/api/cart/items', {
          productId: VARIANT.productId,
          variantId,
          quantity: 1,
        });
      }
      return { method: 'GET', path: '/api/cart', headers: { authorization: `Bearer ${token}` } };
    },
  },
];

/** Many buyers check out the last few units at once; the platform must not sell more than it has. */
export async function report({ baseUrl, key }) {
  const buyers = 200;
  const units = 20;
  const variantId = 'var_candle_22oz';
  await call(baseUrl, key, 'PUT', `/v1/inventory/${variantId}`, { onHand: 1_000 });
  const tokens = await customers(baseUrl, key, 'bench_buyer', buyers);
  for (const token of tokens) {
    await call(baseUrl, token, 'POST', '/api/cart/items', {
      productId: 'prod_candle_triple_wick',
      variantId,
      quantity: 1,
    });
  }
  await call(baseUrl, key, 'PUT', `/v1/inventory/${variantId}`, { onHand: units });
  const started = performance.now();
  const statuses = await Promise.all(
    tokens.map((token) =>
      fetch(`${baseUrl}/api/cart/checkout`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}` },
      }).then((r) => r.status),
    ),
  );
  const ms = performance.now() - started;
  const level = await call(baseUrl, key, 'GET', `/v1/inventory/${variantId}`);
  const won = statuses.filter((s) => s === 200).length;
  const refused = statuses.filter((s) => s === 409).length;
  const oversold = Math.max(0, won - units, level.reserved - level.onHand);
  return [
    `contention: ${buyers} buyers, ${units} units, concurrent checkouts in ${Math.round(ms)} ms: ` +
      `${won} reserved, ${refused} refused (409), ${statuses.length - won - refused} other; oversold: ${oversold}`,
  ];
}
