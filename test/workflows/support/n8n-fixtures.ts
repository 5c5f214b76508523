import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { Type } from 'typebox';
import { expect } from 'vitest';
import { defineNode, NodeRegistry, output } from '../../../src/modules/workflows/engine/node-type.js';
import { ctx, testDeps } from '../../../src/modules/workflows/engine/testing.js';
import type {
  EngineDeps,
  ExecutionOutcome,
  Item,
  Json,
  WorkflowDefinition,
} from '../../../src/modules/workflows/engine/types.js';
import { WorkflowEngine } from '../../../src/modules/workflows/engine/workflow-engine.js';
import { allNodeTypes } from '../../../src/modules/workflows/nodes/index.js';

/**
 * Real n8n exports (test/fixtures/n8n/, provenance in SOURCES.md) run through the engine as n8n's own
 * test harness does: start at the trigger, then compare each node named in `pinData` with what it
 * output. In n8n's test workflows `pinData` holds the expected output of those nodes.
 */

export const FIXTURES = join(import.meta.dirname, '../../fixtures/n8n');

export interface N8nExport extends WorkflowDefinition {
  pinData?: Record<string, Array<{ json: Record<string, Json> } | Record<string, Json>>>;
}

export function loadFixture(relative: string): N8nExport {
  const raw = JSON.parse(readFileSync(join(FIXTURES, relative), 'utf8')) as Partial<N8nExport>;
  return { id: 'wf_fixture', name: relative, connections: {}, ...raw, nodes: raw.nodes ?? [] } as N8nExport;
}

/** pinData entries as items (n8n accepts both `{json}` and bare objects). */
export function expectedOutputs(def: N8nExport): Record<string, Array<Record<string, Json>>> {
  const out: Record<string, Array<Record<string, Json>>> = {};
  for (const [node, items] of Object.entries(def.pinData ?? {})) {
    out[node] = items.map((i) =>
      i !== null && typeof i === 'object' && 'json' in i && typeof i.json === 'object'
        ? (i.json as Record<string, Json>)
        : (i as Record<string, Json>),
    );
  }
  return out;
}

/**
 * n8n's harness-only `n8n-nodes-testing.testData` node (it outputs its `data` parameter as items),
 * which many fixtures use as their data source: registered for the fixture runs only, as n8n's harness
 * does; it is never part of the platform's registry.
 */
const testDataNode = defineNode({
  type: 'n8n-nodes-testing.testData',
  versions: [1],
  schema: Type.Object({ data: Type.Unknown() }, { additionalProperties: false }),
  async execute(ctx) {
    const p = (await ctx.params(0)) as { data: Json };
    const rows = Array.isArray(p.data) ? p.data : [p.data];
    return output(rows.map((json) => ({ json: json as Item['json'] })));
  },
});

const harnessRegistry = new NodeRegistry([...allNodeTypes, testDataNode]);

/** Runs a fixture from its (first) trigger node; returns the outcome and each node's latest output 0. */
export async function runFixture(
  def: N8nExport,
  over: Partial<EngineDeps> = {},
  items: Item[] = [{ json: {} }],
): Promise<{ outcome: ExecutionOutcome; outputs: Record<string, Array<Record<string, Json>>> }> {
  const engine = new WorkflowEngine(testDeps(over), harnessRegistry);
  const problems = engine.validate(def);
  if (problems.length > 0) throw new Error(`fixture does not validate: ${JSON.stringify(problems)}`);
  const [start] = engine.triggerNodes(def);
  if (!start) throw new Error('fixture has no trigger node');
  const outcome = await engine.run(def, { nodeName: start.name, items }, ctx);
  const outputs: Record<string, Array<Record<string, Json>>> = {};
  for (const [name, runs] of Object.entries(outcome.state.runData)) {
    const last = runs[runs.length - 1];
    outputs[name] = (last?.output[0] ?? []).map((i) => i.json);
  }
  return { outcome, outputs };
}

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

/** Whether a fixture runs without error and every pinned node output matches (key order aside). */
export async function fixturePasses(relative: string): Promise<boolean> {
  const def = loadFixture(relative);
  return runFixture(def).then(
    ({ outcome, outputs }) =>
      outcome.state.error === null &&
      Object.entries(expectedOutputs(def)).every(([node, items]) => isDeepStrictEqual(outputs[node], items)),
    () => false,
  );
}
