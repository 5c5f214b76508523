import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { ctx, jsonOf, testDeps, workflow } from '../../../engine/testing.js';
import type { HostAccess } from '../../../engine/types.js';
import { WorkflowEngine } from '../../../engine/workflow-engine.js';
import { defaultNodeRegistry } from '../../index.js';
import { EXECUTE_COMMAND_OFF } from './index.js';

const host = (enabled: boolean, timeoutMs = 5_000, maxOutputBytes = 64 * 1024): HostAccess => ({
  filesDir: null,
  executeCommand: { enabled, timeoutMs, maxOutputBytes },
  ssh: { enabled: false, timeoutMs, maxOutputBytes },
  tcpTarget: async () => {
    throw new Error('no TCP here');
  },
});

async function run(parameters: Record<string, unknown>, access: HostAccess, items = [{ json: {} }]) {
  const engine = new WorkflowEngine(testDeps({ host: access }), defaultNodeRegistry);
  const def = workflow(
    [
      { name: 'T', type: 'n8n-nodes-base.manualTrigger', typeVersion: 1 },
      { name: 'X', type: 'n8n-nodes-base.executeCommand', typeVersion: 1, parameters },
    ],
    [['T', 'X']],
  );
  const started = Date.now();
  const out = await engine.run(def, { nodeName: 'T', items }, ctx);
  return { def, engine, error: out.state.error, json: jsonOf(out.state, 'X'), ms: Date.now() - started };
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

describe('n8n-nodes-base.executeCommand', () => {
  it('runs a command once and outputs exitCode, stderr and stdout (trimmed), as n8n does', async () => {
    const { error, json } = await run({ command: 'echo hello; echo oops 1>&2' }, host(true), [
      { json: {} },
      { json: {} },
    ]);
    expect(error).toBeNull();
    expect(json).toEqual([{ exitCode: 0, stderr: 'oops', stdout: 'hello' }]);
  });

  it('runs per item when executeOnce is off, with expressions', async () => {
    const { json } = await run({ executeOnce: false, command: '=echo {{ $json.n }}' }, host(true), [
      { json: { n: 1 } },
      { json: { n: 2 } },
    ]);
    expect(json.map((j) => j.stdout)).toEqual(['1', '2']);
  });

  it('fails the node on a non-zero exit, naming the command', async () => {
    const { error } = await run({ command: 'echo bad 1>&2; exit 3' }, host(true));
    expect(error?.message).toBe('Command failed: echo bad 1>&2; exit 3\nbad');
  });

  it('does not hand the server environment to the command', async () => {
    process.env.RWF_SECRET_PROBE = 'leak';
    const { json } = await run({ command: 'echo "[$RWF_SECRET_PROBE]"' }, host(true));
    delete process.env.RWF_SECRET_PROBE;
    expect(json).toEqual([{ exitCode: 0, stderr: '', stdout: '[]' }]);
  });

  it('kills the whole process group past its time limit, children included', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'xc-'));
    const pidFile = path.join(dir, 'child.pid');
    const { error, json, ms } = await run(
      { command: `sleep 30 & echo $! > ${pidFile}; wait` },
      host(true, 800),
    );
    expect(error?.message).toBe('The command ran longer than 800 ms and was stopped');
    expect(ms).toBeLessThan(10_000);
    expect(json).toEqual([]);
    const child = Number(await readFile(pidFile, 'utf8'));
    expect(child).toBeGreaterThan(0);
    await vi.waitFor(() => expect(alive(child)).toBe(false), { timeout: 3_000 });
    await rm(dir, { recursive: true, force: true });
  });

  it('stops a command whose output passes the bound', async () => {
    const { error, ms } = await run({ command: 'yes' }, host(true, 20_000, 4_096));
    expect(error?.message).toBe("The command's output passed 4096 bytes; it was stopped");
    expect(ms).toBeLessThan(10_000);
  });

  it('is off unless WORKFLOW_EXECUTE_COMMAND_ENABLED: refused at save and failing at run, naming the setting', async () => {
    const { error, def, engine } = await run({ command: 'echo hi' }, host(false));
    expect(error?.message).toBe(EXECUTE_COMMAND_OFF);
    expect(EXECUTE_COMMAND_OFF).toContain('WORKFLOW_EXECUTE_COMMAND_ENABLED');
    expect(engine.validate(def)).toEqual([{ path: 'nodes[1].parameters', message: EXECUTE_COMMAND_OFF }]);
    const bare = new WorkflowEngine(testDeps(), defaultNodeRegistry);
    expect(bare.validate(def)).toEqual([{ path: 'nodes[1].parameters', message: EXECUTE_COMMAND_OFF }]);
  });
});
