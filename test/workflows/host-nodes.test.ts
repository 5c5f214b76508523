import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestPlatform } from '../helpers/platform.js';
import { testDialects } from '../helpers/services.js';
import { activate, createWorkflow, workflowPlatform } from './support.js';

/** Webhook → the node under test, answering with its output. */
function flow(path: string, node: Record<string, unknown>) {
  return {
    name: `host ${path}`,
    nodes: [
      {
        id: `${path}-w`,
        name: 'Webhook',
        type: 'n8n-nodes-base.webhook',
        typeVersion: 2,
        position: [0, 0],
        parameters: { httpMethod: 'POST', path, responseMode: 'lastNode', options: {} },
      },
      { id: `${path}-n`, name: 'Host', typeVersion: 1, position: [200, 0], ...node },
    ],
    connections: { Webhook: { main: [[{ node: 'Host', type: 'main', index: 0 }]] } },
    settings: {},
  };
}

const command = { type: 'n8n-nodes-base.executeCommand', parameters: { command: 'echo "hi $HOME"' } };
const ssh = {
  type: 'n8n-nodes-base.ssh',
  parameters: { command: 'uptime' },
  credentials: { sshPassword: { id: 'none', name: 'none' } },
};
const files = {
  type: 'n8n-nodes-base.code',
  typeVersion: 2,
  parameters: {
    jsCode: 'return [{ json: {}, binary: { data: { mimeType: "text/plain", data: "aGk=" } } }];',
  },
};

describe.each(await testDialects())('the host nodes, off by default, on %s', (dialect) => {
  let off: TestPlatform;
  let on: TestPlatform;
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'host-nodes-'));
    off = await workflowPlatform(dialect);
    on = await workflowPlatform(dialect, {
      WORKFLOW_EXECUTE_COMMAND_ENABLED: 'true',
      WORKFLOW_FILES_DIR: dir,
    });
  });
  afterAll(async () => {
    await off.close();
    await on.close();
    await rm(dir, { recursive: true, force: true });
  });

  it.each([
    ['executeCommand', command, 'WORKFLOW_EXECUTE_COMMAND_ENABLED'],
    ['ssh', ssh, 'WORKFLOW_SSH_ENABLED'],
    [
      'readWriteFile',
      { type: 'n8n-nodes-base.readWriteFile', parameters: { fileSelector: 'x' } },
      'WORKFLOW_FILES_DIR',
    ],
  ])('saving a workflow with %s is a 400 naming the setting', async (name, node, setting) => {
    const res = await off.request({
      method: 'POST',
      url: '/api/v1/workflows',
      payload: flow(`off-${name}`, node),
    });
    expect(res.statusCode).toBe(400);
    expect(res.body).toContain(setting);
  });

  it('runs Execute Command when turned on, in the account folder, with a minimal environment', async () => {
    const id = await createWorkflow(on, flow('cmd-on', command));
    await activate(on, id);
    const res = await on.request({ method: 'POST', url: '/webhook/cmd-on', key: null, payload: {} });
    expect(res.statusCode).toBe(200);
    const out = res.json() as { exitCode: number; stdout: string };
    expect(out.exitCode).toBe(0);
    // HOME is the account's own folder under WORKFLOW_FILES_DIR.
    expect(out.stdout.startsWith(`hi ${await realDir(dir)}${path.sep}`)).toBe(true);
  });

  it('writes files into the account subfolder of WORKFLOW_FILES_DIR', async () => {
    const def = flow('files-on', {
      type: 'n8n-nodes-base.readWriteFile',
      parameters: { operation: 'write', fileName: 'out/hi.txt' },
    });
    def.nodes.splice(1, 0, { id: 'files-on-c', name: 'Make', position: [100, 0], ...files } as never);
    def.connections = {
      Webhook: { main: [[{ node: 'Make', type: 'main', index: 0 }]] },
      Make: { main: [[{ node: 'Host', type: 'main', index: 0 }]] },
    } as never;
    const id = await createWorkflow(on, def);
    await activate(on, id);
    const res = await on.request({ method: 'POST', url: '/webhook/files-on', key: null, payload: {} });
    expect(res.statusCode).toBe(200);
    const accounts = await readdir(dir);
    expect(accounts).toHaveLength(1);
    expect(await readFile(path.join(dir, accounts[0] as string, 'out', 'hi.txt'), 'utf8')).toBe('hi');
  });
});

async function realDir(p: string): Promise<string> {
  const { realpath } = await import('node:fs/promises');
  return realpath(p);
}
