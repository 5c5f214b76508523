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

const RUNNABLE = [
  'if/v1/IF.boolean.json',
  'jwt/jwt.workflow.json',
  'totp/Totp.workflow.test.json',
  // Its Read Binary Files reads /test/binary.data, which n8n's test serves by mocking the file system
  // ("test"); harness/paths.json maps it to harness/files/test/binary.data, the run's confined folder.
  'crypto/CryptoTest.workflow.json',
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

  it("CryptoTest's absolute path itself stays refused: only the harness maps it into the test folder", async () => {
    const def = loadFixture('crypto/CryptoTest.workflow.json');
    const read = def.nodes.find((n) => n.name === 'Read Binary Files');
    if (!read) throw new Error('no Read Binary Files node');
    read.parameters = { fileSelector: '/test/binary.data' };
    const { outcome } = await runFixture(def, deps);
    expect(outcome.state.error?.message).toMatch(/Access to '\/test\/binary.data' is not allowed/);
  });
});
