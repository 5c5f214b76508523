import { describe, expect, it } from 'vitest';
import type { EngineDeps } from '../../src/modules/workflows/engine/types.js';
import { type N8nExport, runFixture } from './support/n8n-fixtures.js';

/** A manual trigger → one node workflow. */
function flow(
  type: string,
  parameters: Record<string, unknown>,
  extra: Record<string, unknown> = {},
): N8nExport {
  return {
    id: 'wf_legacy',
    name: 'legacy',
    nodes: [
      { name: 'Start', type: 'n8n-nodes-base.start', typeVersion: 1, parameters: {}, position: [0, 0] },
      { name: 'Node', type, typeVersion: 1, parameters, position: [200, 0], ...extra },
    ],
    connections: { Start: { main: [[{ node: 'Node', type: 'main', index: 0 }]] } },
  } as unknown as N8nExport;
}

const jwtDeps: Partial<EngineDeps> = {
  credential: async () => ({ keyType: 'passphrase', secret: 'a shared secret', algorithm: 'HS256' }),
};
const jwtCredential = { credentials: { jwtAuth: { id: 'c1', name: 'jwt' } } };

// header {"alg":"none","typ":"JWT"}, payload {"sub":"admin"}, no signature.
const UNSIGNED = 'eyJhbGciOiJub25lIiwidHlwIjoiSldUIn0.eyJzdWIiOiJhZG1pbiJ9.';

describe('legacy and crypto nodes: bad input is a node error', () => {
  it.each(['verify', 'decode'])('JWT %s refuses an alg none token', async (operation) => {
    const { outcome } = await runFixture(
      flow('n8n-nodes-base.jwt', { operation, token: UNSIGNED }, jwtCredential),
      jwtDeps,
    );
    expect(outcome.state.error?.message).toMatch(/unsigned \(alg 'none'\)/);
  });

  it('JWT verify refuses a token signed with another secret', async () => {
    const forged =
      'eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiJhZG1pbiJ9.X9J1sQ0mQnYb0mCqy1ZKq7n3b8u4bqg2gk3y3QJ7o3E';
    const { outcome } = await runFixture(
      flow('n8n-nodes-base.jwt', { operation: 'verify', token: forged }, jwtCredential),
      jwtDeps,
    );
    expect(outcome.state.error?.message).toBe("The JWT token can't be verified");
  });

  it('Crypto sign with a key that is not a key fails the node, naming the key', async () => {
    const { outcome } = await runFixture(
      flow('n8n-nodes-base.crypto', {
        action: 'sign',
        value: 'x',
        algorithm: 'RSA-SHA256',
        privateKey: 'not a key',
      }),
    );
    expect(outcome.state.error?.message).toMatch(/Could not sign with the private key/);
  });

  it('Crypto generate refuses a huge length', async () => {
    const { outcome } = await runFixture(
      flow('n8n-nodes-base.crypto', { action: 'generate', encodingType: 'hex', stringLength: 10_000_000 }),
    );
    expect(outcome.state.error?.message).toMatch(/too long/);
  });

  it('a Function that never ends is stopped by the sandbox bound', async () => {
    const started = Date.now();
    const { outcome } = await runFixture(
      flow('n8n-nodes-base.function', { functionCode: 'while (true) {}' }),
    );
    expect(outcome.state.error).not.toBeNull();
    expect(Date.now() - started).toBeLessThan(30_000);
  });
});

describe('legacy and crypto nodes: what they compute', () => {
  it('Function gets items and returns new ones; Function Item gets the JSON of its item', async () => {
    const fn = await runFixture(
      flow('n8n-nodes-base.function', {
        functionCode: 'return [{ json: { n: items.length } }, { json: { n: 2, first: $item(0).$json } }];',
      }),
    );
    expect(fn.outcome.state.error).toBeNull();
    expect(fn.outputs.Node).toEqual([{ n: 1 }, { n: 2, first: {} }]);
    const each = await runFixture(
      flow('n8n-nodes-base.functionItem', { functionCode: 'item.added = 1; return item;' }),
      {},
      [{ json: { a: 1 } }, { json: { a: 2 } }],
    );
    expect(each.outcome.state.error).toBeNull();
    expect(each.outputs.Node).toEqual([
      { a: 1, added: 1 },
      { a: 2, added: 1 },
    ]);
  });

  it('Function reads the first item as `$json` (n8n gives its sandbox the first item’s data)', async () => {
    const fn = await runFixture(
      flow('n8n-nodes-base.function', {
        functionCode:
          'return [{ json: { first: $json.a, count: items.length, keys: Object.keys($binary) } }];',
      }),
      {},
      [{ json: { a: 'x' } }, { json: { a: 'y' } }],
    );
    expect(fn.outcome.state.error).toBeNull();
    expect(fn.outputs.Node).toEqual([{ first: 'x', count: 2, keys: [] }]);
  });

  it('Crypto v1 hashes and hmacs as n8n (the pinned values of n8n’s CryptoTest)', async () => {
    const hash = await runFixture(flow('n8n-nodes-base.crypto', { value: 'test' }));
    expect(hash.outputs.Node).toEqual([{ data: '098f6bcd4621d373cade4e832627b4f6' }]);
    const hmac = await runFixture(
      flow('n8n-nodes-base.crypto', {
        action: 'hmac',
        type: 'SHA256',
        value: 'test',
        secret: 'key',
        encoding: 'hex',
        dataPropertyName: 'a.b',
      }),
    );
    expect(hmac.outputs.Node).toEqual([
      { a: { b: '02afb56304902c656fcb737cdd03de6205bb6d401da2812efd9b2d36a08af159' } },
    ]);
  });
});
