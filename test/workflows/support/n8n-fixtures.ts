import { expect } from 'vitest';
import type { EngineDeps } from '../../../src/modules/workflows/engine/types.js';
import { expectedOutputs, inProcessZone, loadFixture, processZoneOf, runFixture } from './n8n-harness.js';

export {
  expectedOutputs,
  FIXTURES,
  fixturePasses,
  inProcessZone,
  loadFixture,
  type N8nExport,
  PROCESS_ZONES,
  processZoneOf,
  runFixture,
} from './n8n-harness.js';

/**
 * n8n's harness check: the fixture runs without error and every node named in its pinData outputs
 * exactly the pinned items (a fixture with no pinned node fails: it would check nothing). A fixture
 * runs in n8n's test process zone, UTC, or the one it was pinned in (PROCESS_ZONES).
 */
export async function expectPinnedOutputs(relative: string, over: Partial<EngineDeps> = {}): Promise<void> {
  const def = loadFixture(relative);
  const expected = expectedOutputs(def);
  expect(Object.keys(expected).length).toBeGreaterThan(0);
  const { outcome, outputs } = await inProcessZone(processZoneOf(relative), () => runFixture(def, over));
  expect(outcome.state.error).toBeNull();
  expect(outcome.status).toBe('success');
  for (const [node, items] of Object.entries(expected)) expect(outputs[node], node).toEqual(items);
}
