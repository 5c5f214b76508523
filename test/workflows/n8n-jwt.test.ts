import { generateKeyPairSync } from 'node:crypto';
import { decodeJwt, decodeProtectedHeader, jwtVerify, SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestPlatform } from '../helpers/platform.js';
import { testDialects } from '../helpers/services.js';
import {
  activate,
  createCredential,
  createWorkflow,
  n8nNode,
  otherAccountKey,
  workflowPlatform,
} from './support.js';

const SECRET = 'a shared secret long enough for HS256';
const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
const PRIVATE_PEM = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
const PUBLIC_PEM = publicKey.export({ type: 'spki', format: 'pem' }).toString();

const node = (
  name: string,
  type: string,
  typeVersion: number,
  parameters: Record<string, unknown>,
  credentials?: Record<string, unknown>,
) => n8nNode(name, type, typeVersion, parameters, credentials ? { credentials } : {});

describe.each(await testDialects())("n8n's JWT credential on %s", (dialect) => {
  let p: TestPlatform;
  let hs = '';
  let rs = '';
  beforeAll(async () => {
    p = await workflowPlatform(dialect);
    hs = await createCredential(p, 'jwt hs', 'jwtAuth', {
      keyType: 'passphrase',
      secret: SECRET,
      algorithm: 'HS256',
    });
    rs = await createCredential(p, 'jwt rs', 'jwtAuth', {
      keyType: 'pemKey',
      privateKey: PRIVATE_PEM,
      publicKey: PUBLIC_PEM,
      algorithm: 'RS256',
    });
  });
  afterAll(() => p.close());

  it('refuses jwtAuth data that cannot sign or verify, naming each field', async () => {
    for (const [data, field] of [
      [{ keyType: 'passphrase', algorithm: 'HS256' }, 'data.secret'],
      [{ keyType: 'passphrase', secret: 's', algorithm: 'RS256' }, 'data.algorithm'],
      [{ keyType: 'pemKey', algorithm: 'RS256' }, 'data.privateKey'],
      [{ keyType: 'magic', secret: 's' }, 'data.keyType'],
      [{ secret: 's', extra: 'x' }, 'data.extra'],
    ] as const) {
      const res = await p.request({
        method: 'POST',
        url: '/api/v1/credentials',
        payload: { name: 'bad jwt', type: 'jwtAuth', data },
      });
      expect(res.statusCode, JSON.stringify(data)).toBe(400);
      expect(JSON.stringify(res.json().details.fields)).toContain(field);
    }
    const schema = await p.request({ method: 'GET', url: '/api/v1/credentials/schema/jwtAuth' });
    expect(schema.statusCode).toBe(200);
    expect(Object.keys(schema.json().properties).sort()).toEqual([
      'algorithm',
      'keyType',
      'privateKey',
      'publicKey',
      'secret',
    ]);
  });

  it('Respond to Webhook answers a signed token (HS256 and RS256), as n8n does', async () => {
    for (const [path, id, key] of [
      ['jwt-hs', () => hs, () => new TextEncoder().encode(SECRET)],
      ['jwt-rs', () => rs, () => publicKey],
    ] as const) {
      const wf = await createWorkflow(p, {
        name: `respond ${path}`,
        nodes: [
          node('Webhook', 'webhook', 2, {
            httpMethod: 'POST',
            path,
            responseMode: 'responseNode',
            options: {},
          }),
          node(
            'Respond',
            'respondToWebhook',
            1.1,
            {
              respondWith: 'jwt',
              payload: '={{ JSON.stringify({ sub: $json.body.user, role: "reader" }) }}',
              options: {},
            },
            { jwtAuth: { id: id(), name: 'jwt' } },
          ),
        ],
        connections: { Webhook: { main: [[{ node: 'Respond', type: 'main', index: 0 }]] } },
      });
      await activate(p, wf);
      const res = await p.request({
        method: 'POST',
        url: `/webhook/${path}`,
        key: null,
        payload: { user: 'ada' },
      });
      expect(res.statusCode, res.body).toBe(200);
      const { token } = res.json() as { token: string };
      const { payload } = await jwtVerify(token, key());
      expect(payload).toMatchObject({ sub: 'ada', role: 'reader' });
      expect(typeof payload.iat).toBe('number');
      expect(decodeProtectedHeader(token)).toEqual({
        alg: path === 'jwt-hs' ? 'HS256' : 'RS256',
        typ: 'JWT',
      });
    }
  });

  it('refuses a jwt answer without a jwtAuth credential, and a credential of another account', async () => {
    const respond = (credentials?: Record<string, unknown>) =>
      node(
        'Respond',
        'respondToWebhook',
        1.1,
        { respondWith: 'jwt', payload: '{}', options: {} },
        credentials,
      );
    const bare = await createWorkflow(p, {
      name: 'jwt without credential',
      nodes: [
        node('Webhook', 'webhook', 2, {
          httpMethod: 'POST',
          path: 'jwt-bare',
          responseMode: 'responseNode',
          options: {},
        }),
        respond(),
      ],
      connections: { Webhook: { main: [[{ node: 'Respond', type: 'main', index: 0 }]] } },
    });
    await activate(p, bare);
    const res = await p.request({ method: 'POST', url: '/webhook/jwt-bare', key: null, payload: {} });
    expect(res.statusCode).toBe(422);
    expect(res.json().message).toContain('"jwtAuth"');

    // Another account sees none of this account's credentials: a workflow referring to one saves (as an
    // n8n import without its credentials does) but cannot be activated.
    const other = await otherAccountKey(p);
    const foreign = await p.request({
      method: 'POST',
      url: '/api/v1/workflows',
      key: other,
      payload: {
        name: 'borrowed jwt',
        nodes: [
          node('Webhook', 'webhook', 2, {
            httpMethod: 'POST',
            path: 'jwt-foreign',
            responseMode: 'responseNode',
            options: {},
          }),
          respond({ jwtAuth: { id: hs, name: 'jwt hs' } }),
        ],
        connections: { Webhook: { main: [[{ node: 'Respond', type: 'main', index: 0 }]] } },
      },
    });
    expect(foreign.statusCode).toBe(201);
    const activated = await p.request({
      method: 'POST',
      url: `/api/v1/workflows/${foreign.json().id}/activate`,
      key: other,
    });
    expect(activated.statusCode).toBe(400);
    expect(JSON.stringify(activated.json())).toContain('credentials.jwtAuth');
    expect(JSON.stringify(activated.json())).toContain('does not exist');
  });

  it('a Webhook with jwtAuth lets only tokens its credential signed in, and hands on their claims', async () => {
    const wf = await createWorkflow(p, {
      name: 'jwt guarded',
      nodes: [
        node(
          'Webhook',
          'webhook',
          2,
          {
            httpMethod: 'POST',
            path: 'jwt-guarded',
            authentication: 'jwtAuth',
            responseMode: 'lastNode',
            options: {},
          },
          { jwtAuth: { id: rs, name: 'jwt rs' } },
        ),
      ],
      connections: {},
    });
    await activate(p, wf);
    const call = (authorization?: string) =>
      p.request({
        method: 'POST',
        url: '/webhook/jwt-guarded',
        key: null,
        payload: { n: 1 },
        headers: authorization ? { authorization } : {},
      });
    const good = await new SignJWT({ sub: 'svc', scope: 'orders' })
      .setProtectedHeader({ alg: 'RS256' })
      .sign(privateKey);
    const ok = await call(`Bearer ${good}`);
    expect(ok.statusCode, ok.body).toBe(200);
    expect(ok.json().jwtPayload).toMatchObject({ sub: 'svc', scope: 'orders' });
    expect(ok.json().headers.authorization).toBeUndefined();

    expect((await call()).statusCode).toBe(401);
    const otherKey = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey;
    const forged = await new SignJWT({ sub: 'svc' }).setProtectedHeader({ alg: 'RS256' }).sign(otherKey);
    expect((await call(`Bearer ${forged}`)).statusCode).toBe(403);
    // Another algorithm (even with the right secret material) and an expired token are refused too.
    const hsToken = await new SignJWT({ sub: 'svc' })
      .setProtectedHeader({ alg: 'HS256' })
      .sign(new TextEncoder().encode(SECRET));
    expect((await call(`Bearer ${hsToken}`)).statusCode).toBe(403);
    const expired = await new SignJWT({ sub: 'svc' })
      .setProtectedHeader({ alg: 'RS256' })
      .setExpirationTime(Math.floor(Date.now() / 1000) - 60)
      .sign(privateKey);
    expect((await call(`Bearer ${expired}`)).statusCode).toBe(403);
    expect(decodeJwt(good).sub).toBe('svc');
  });
});
