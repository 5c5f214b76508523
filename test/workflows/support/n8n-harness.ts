import { existsSync, readFileSync } from 'node:fs';
import { basename, dirname, join, resolve, sep } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { Type } from 'typebox';
import { defineNode, NodeRegistry, output } from '../../../src/modules/workflows/engine/node-type.js';
import { ctx, testDeps } from '../../../src/modules/workflows/engine/testing.js';
import type {
  EngineDeps,
  ExecutionOutcome,
  HostAccess,
  Item,
  Json,
  WorkflowDefinition,
} from '../../../src/modules/workflows/engine/types.js';
import { WorkflowEngine } from '../../../src/modules/workflows/engine/workflow-engine.js';
import { allNodeTypes } from '../../../src/modules/workflows/nodes/index.js';

/**
 * Real n8n exports (test/fixtures/n8n/, provenance in SOURCES.md) run through the engine as n8n's own
 * test harness does: start at the trigger, then compare each node named in `pinData` with what it
 * output. In n8n's test workflows `pinData` holds the expected output of those nodes. No test-runner
 * import here: `npm run nodes-report` runs the fixtures with this file too.
 */

export const FIXTURES = join(import.meta.dirname, '../../fixtures/n8n');

export interface N8nExport extends WorkflowDefinition {
  pinData?: Record<string, Array<{ json: Record<string, Json> } | Record<string, Json>>>;
}

/**
 * What n8n's test code adds to a fixture, kept beside it under `<node>/harness/`: `files/` is the test
 * folder its disk-reading nodes read (the confined folder of the platform's file nodes in the run),
 * `paths.json` the absolute paths n8n's test code points at a file of that folder (it sets the node's
 * path to `__dirname/<file>`, or mocks the file system to serve it), and `expected/<fixture>` the node
 * outputs a test that checks in code rather than in pinData expects.
 */
const harnessFiles = new WeakMap<N8nExport, string>();

export function loadFixture(relative: string): N8nExport {
  const raw = JSON.parse(readFileSync(join(FIXTURES, relative), 'utf8')) as Partial<N8nExport>;
  const def = {
    id: 'wf_fixture',
    name: relative,
    connections: {},
    ...raw,
    nodes: raw.nodes ?? [],
  } as N8nExport;
  const harness = join(FIXTURES, dirname(relative), 'harness');
  const expected = join(harness, 'expected', basename(relative));
  if (Object.keys(def.pinData ?? {}).length === 0 && existsSync(expected))
    def.pinData = (JSON.parse(readFileSync(expected, 'utf8')) as { nodeData: N8nExport['pinData'] }).nodeData;
  const files = join(harness, 'files');
  if (existsSync(files)) {
    const paths = join(harness, 'paths.json');
    const named = existsSync(paths)
      ? (JSON.parse(readFileSync(paths, 'utf8')) as Record<string, string>)
      : {};
    // n8n's harness points `C:\Test\<name>` parameters at its test folder, and its test code the
    // absolute paths of paths.json at files of it; the same here, always inside the folder.
    def.nodes = def.nodes.map((node) => ({
      ...node,
      parameters: JSON.parse(JSON.stringify(node.parameters ?? {}), (_key, value: unknown) => {
        if (typeof value !== 'string') return value;
        const name = Object.hasOwn(named, value) ? named[value] : /^C:\\Test\\(.+)$/.exec(value)?.[1];
        return name === undefined ? value : inFolder(files, name);
      }),
    }));
    harnessFiles.set(def, files);
  }
  return def;
}

/** `name` inside `folder`: a harness entry that would leave it is a broken test folder. */
function inFolder(folder: string, name: string): string {
  const path = resolve(folder, name);
  if (!path.startsWith(`${folder}${sep}`)) throw new Error(`harness path ${name} leaves ${folder}`);
  return path;
}

/** The file nodes' access in a fixture run: on, confined to the fixture's test folder, if it has one. */
function hostOf(def: N8nExport): HostAccess | undefined {
  const filesDir = harnessFiles.get(def);
  if (!filesDir) return undefined;
  return {
    filesDir,
    executeCommand: { enabled: false, timeoutMs: 1_000, maxOutputBytes: 1_024 },
    ssh: { enabled: false, timeoutMs: 1_000, maxOutputBytes: 1_024 },
    tcpTarget: async () => {
      throw new Error('no TCP in fixture runs');
    },
  };
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

/** n8n's `GENERIC_TIMEZONE` default, the zone of its node tests' workflows. */
export const N8N_DEFAULT_ZONE = 'America/New_York';

/** The credentials n8n's node tests give their workflows (NodeTestHarness `credentials`), by id. */
const N8N_TEST_CREDENTIALS: Record<string, Record<string, string>> = {
  // n8n's Jwt.node.test.ts: a passphrase credential.
  kDnfvqrCBJvtlX3o: { keyType: 'passphrase', secret: 'baz', algorithm: 'HS256' },
  // n8n's Totp.node.test.ts.
  '1': { label: 'GitHub:john-doe', secret: 'BVDRSBXQB2ZEL5HE' },
};

async function harnessCredential(id: string): Promise<Record<string, string>> {
  const data = N8N_TEST_CREDENTIALS[id];
  if (!data) throw new Error(`no credential ${id}`);
  return data;
}

/** Runs a fixture from its (first) trigger node; returns the outcome and each node's latest output 0. */
export async function runFixture(
  def: N8nExport,
  over: Partial<EngineDeps> = {},
  items: Item[] = [{ json: {} }],
): Promise<{ outcome: ExecutionOutcome; outputs: Record<string, Array<Record<string, Json>>> }> {
  const host = hostOf(def);
  const engine = new WorkflowEngine(
    testDeps({ credential: harnessCredential, ...(host ? { host } : {}), ...over }),
    harnessRegistry,
  );
  // n8n's harness runs a workflow without a zone of its own in n8n's default instance zone.
  if (typeof def.settings?.timezone !== 'string')
    def = { ...def, settings: { ...def.settings, timezone: N8N_DEFAULT_ZONE } };
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
 * Fixtures whose pins were computed by a run in another process zone than UTC, by file: Date & Time v1
 * reads and writes zoneless dates in the server's zone (the process's `TZ`), as moment's defaults do
 * in n8n, so these run in the zone that produced their pins (1 August + 10 days is
 * `2022-08-10T22:00:00.000Z` in all three, whatever the workflow's own zone).
 */
export const PROCESS_ZONES: Record<string, string> = {
  'date-time/DateTimeFormatCalculate.workflow.json': 'Europe/Berlin',
  'date-time/DateTimeTimezone3.json': 'Europe/Berlin',
  'date-time/DateTimeTimezoneWithConsole.json': 'Europe/Berlin',
};

/** The process zone of n8n's test runs (its CI runs in UTC; its DateTime suite skips itself elsewhere). */
export const N8N_PROCESS_ZONE = 'UTC';

/** The process zone a fixture runs in. */
export const processZoneOf = (relative: string): string => PROCESS_ZONES[relative] ?? N8N_PROCESS_ZONE;

/** Runs `fn` with the process zone set to `zone` (Node rereads `TZ` when it is assigned), then restores it. */
export async function inProcessZone<T>(zone: string, fn: () => Promise<T>): Promise<T> {
  const before = process.env.TZ;
  process.env.TZ = zone;
  try {
    return await fn();
  } finally {
    if (before === undefined) delete process.env.TZ;
    else process.env.TZ = before;
  }
}

/**
 * Whether a fixture runs without error and every pinned node outputs the pinned items (key order and
 * undefined fields aside, as `toEqual` compares).
 */
export async function fixturePasses(
  relative: string,
  over: Partial<EngineDeps> = {},
  zone = processZoneOf(relative),
): Promise<boolean> {
  const def = loadFixture(relative);
  return inProcessZone(zone, () => runFixture(def, over)).then(
    ({ outcome, outputs }) =>
      outcome.state.error === null &&
      Object.entries(expectedOutputs(def)).every(([node, items]) =>
        isDeepStrictEqual(
          outputs[node] === undefined ? undefined : JSON.parse(JSON.stringify(outputs[node])),
          items,
        ),
      ),
    () => false,
  );
}
