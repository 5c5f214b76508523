import { bearerCheck, type FakeServer, json, startFakeServer } from './fake-server.js';

/**
 * This platform's order intake as the order workflow calls it: `POST /v1/orders` with the storefront
 * payload; answers 201 `{id, status: 'received', externalId, customerId, lineItems, createdAt}`.
 * The same `Idempotency-Key` twice answers the first order again (200).
 */
export async function startFakeOrders(options: { token?: string } = {}): Promise<FakeServer> {
  const byKey = new Map<string, unknown>();
  let n = 0;
  return startFakeServer((req) => {
    const denied = bearerCheck(req, options.token);
    if (denied) return denied;
    if (req.method !== 'POST' || req.path !== '/v1/orders') return json(404, { error: 'not found' });
    const key = req.headers['idempotency-key'];
    if (typeof key === 'string' && byKey.has(key)) return json(200, byKey.get(key));
    const b = (req.body ?? {}) as { id?: unknown; customer?: { id?: unknown }; line_items?: unknown[] };
    n += 1;
    const order = {
      id: `ord_${String(n).padStart(4, '0')}`,
      status: 'received',
      externalId: b.id ?? null,
      customerId: b.customer?.id ?? null,
      lineItems: Array.isArray(b.line_items) ? b.line_items.length : 0,
      createdAt: '2030-01-02T03:04:05.000Z',
    };
    if (typeof key === 'string') byKey.set(key, order);
    return json(201, order);
  });
}

/**
 * User onboarding as the registration workflow calls it: `POST /api/users {userId, email, name,
 * registrationSource, onboarding}`; answers 201 `{id, userId, email, name, status: 'onboarding', createdAt}`.
 */
export async function startFakeUsers(options: { token?: string } = {}): Promise<FakeServer> {
  let n = 0;
  return startFakeServer((req) => {
    const denied = bearerCheck(req, options.token);
    if (denied) return denied;
    if (req.method !== 'POST' || req.path !== '/api/users') return json(404, { error: 'not found' });
    const b = (req.body ?? {}) as Record<string, unknown>;
    n += 1;
    return json(201, {
      id: `usr_${String(n).padStart(4, '0')}`,
      userId: b.userId ?? null,
      email: b.email ?? null,
      name: b.name ?? null,
      status: 'onboarding',
      createdAt: '2030-01-02T03:04:05.000Z',
    });
  });
}

/** Any callback URL: records the call and answers `200 OK` as text (callbacks rarely answer JSON). */
export async function startFakeCallback(): Promise<FakeServer> {
  return startFakeServer(() => ({ status: 200, body: 'OK', text: true }));
}
