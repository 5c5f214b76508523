import { describe, expect, it } from 'vitest';
import type { EngineDeps } from '../../src/modules/workflows/engine/types.js';
import { expectedOutputs, loadFixture, runFixture } from './support/n8n-fixtures.js';

/**
 * n8n's own test workflows for the legacy node versions and the crypto nodes
 * (test/fixtures/n8n/SOURCES-legacy.md), run unmodified: every node named in pinData must output
 * exactly the pinned items. Credentials are those n8n's own tests give (NodeTestHarness credentials).
 */
const CREDENTIALS: Record<string, Record<string, string>> = {
  // n8n's Jwt.node.test.ts: a passphrase credential.
  kDnfvqrCBJvtlX3o: { keyType: 'passphrase', secret: 'baz', algorithm: 'HS256' },
  // n8n's Totp.node.test.ts.
  '1': { label: 'GitHub:john-doe', secret: 'BVDRSBXQB2ZEL5HE' },
};

const deps: Partial<EngineDeps> = {
  credential: async (id: string) => {
    const data = CREDENTIALS[id];
    if (!data) throw new Error(`no credential ${id}`);
    return data;
  },
};

const RUNNABLE = ['if/v1/IF.boolean.json', 'jwt/jwt.workflow.json', 'totp/Totp.workflow.test.json'];

/**
 * Fixtures that cannot pass here, each with its reason; each must fail today, so the list cannot rot:
 * when one starts passing, move it to RUNNABLE.
 */
const FAILING: Array<{ file: string; reason: string }> = [
  {
    file: 'crypto/CryptoTest.workflow.json',
    reason:
      "its Read Binary Files node reads the absolute path /test/binary.data, outside any confined folder (n8n's test mocks the file system for it)",
  },
];

describe('n8n fixtures: legacy versions and crypto nodes', () => {
  it.each(RUNNABLE)('%s gives the pinned output', async (file) => {
    const def = loadFixture(file);
    const { outcome, outputs } = await runFixture(def, deps);
    expect(outcome.state.error).toBeNull();
    for (const [node, items] of Object.entries(expectedOutputs(def))) {
      expect(outputs[node], node).toEqual(items);
    }
  });

  it("CryptoTest's nodes before the disk read match their pins, RSA-MD4 signature included", async () => {
    const def = loadFixture('crypto/CryptoTest.workflow.json');
    const { outcome, outputs } = await runFixture(def, deps);
    // harness/files holds test/binary.data, but the node names it by an absolute path: refused.
    expect(outcome.state.error?.message).toMatch(/Access to '\/test\/binary.data' is not allowed/);
    const expected = expectedOutputs(def);
    const own = [
      'Crypto Hash into Hex',
      'Crypto Hash into MD5',
      'Crypto Hmac data with MD5',
      'Crypto Sign data with RSA-MDA4',
    ];
    for (const node of own) expect(outputs[node], node).toEqual(expected[node]);
  });

  it.each(FAILING)('$file fails today ($reason)', async ({ file }) => {
    const def = loadFixture(file);
    const run = async () => {
      const { outcome, outputs } = await runFixture(def, deps);
      if (outcome.state.error) throw new Error('run failed');
      for (const [node, items] of Object.entries(expectedOutputs(def)))
        if (JSON.stringify(outputs[node]) !== JSON.stringify(items)) throw new Error(`${node} differs`);
    };
    await expect(run()).rejects.toThrow();
  });
});
