import { expect } from 'vitest';
import type { EngineDeps } from '../../../src/modules/workflows/engine/types.js';
import { expectedOutputs, loadFixture, runFixture } from './n8n-harness.js';

export {
  expectedOutputs,
  FIXTURES,
  fixturePasses,
  loadFixture,
  type N8nExport,
  runFixture,
} from './n8n-harness.js';

/**
 * n8n's harness check: the fixture runs without error and every node named in its pinData outputs
 * exactly the pinned items (a fixture with no pinned node fails: it would check nothing).
 */
export async function expectPinnedOutputs(relative: string, over: Partial<EngineDeps> = {}): Promise<void> {
  const def = loadFixture(relative);
  const expected = expectedOutputs(def);
  expect(Object.keys(expected).length).toBeGreaterThan(0);
  const { outcome, outputs } = await runFixture(def, over);
  expect(outcome.state.error).toBeNull();
  expect(outcome.status).toBe('success');
  for (const [node, items] of Object.entries(expected)) expect(outputs[node], node).toEqual(items);
}
