import { execFile } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { generateKey } from '../../../src/modules/auth/key-format.js';
import { echoFlow, flow } from '../support.js';
import { baseEnv, cleanup, tempDir } from './processes.js';

const MAIN = path.resolve('src/main.ts');

type Run = { code: number; stdout: string; stderr: string };
type FileRun = Run & { file: string };

/** `platform …` as a process; never rejects, the exit code is part of the answer. */
function platform(dataDir: string, args: string[], env: Record<string, string> = {}): Promise<Run> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['--import', 'tsx', MAIN, ...args],
      {
        env: {
          ...process.env,
          ...baseEnv(dataDir),
          LOG_LEVEL: 'silent',
          // A known key: no first-start banner mixed into the JSON output.
          PLATFORM_BOOTSTRAP_KEY: generateKey('production'),
          ...env,
        },
      },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : -1) : 0;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

function writeJson(file: string, value: unknown): string {
  writeFileSync(file, typeof value === 'string' ? value : JSON.stringify(value, null, 2));
  return file;
}

afterAll(cleanup);

describe('platform workflows import / export', () => {
  // One batch of processes (each start costs seconds): the failure cases side by side.
  let failures:
    | Promise<{ unknownId: Run; noNodes: FileRun; broken: FileRun; unknownNode: FileRun; worker: Run }>
    | undefined;
  const failureRuns = () => {
    failures ??= (async () => {
      const defs = tempDir('platform-defs-');
      const files = {
        noNodes: writeJson(path.join(defs, 'no-nodes.json'), { id: 'wf_bad', name: 'bad', connections: {} }),
        broken: writeJson(path.join(defs, 'broken.json'), '{"name": "x", nodes: []}'),
        unknownNode: writeJson(
          path.join(defs, 'unknown-node.json'),
          flow('unknown node', [{ name: 'Mystery', type: 'noSuchNode' }]),
        ),
      };
      const [unknownId, noNodes, broken, unknownNode, worker] = await Promise.all([
        platform(tempDir(), ['workflows', 'export', 'wf_nope']),
        platform(tempDir(), ['workflows', 'import', files.noNodes]),
        platform(tempDir(), ['workflows', 'import', files.broken]),
        platform(tempDir(), ['workflows', 'import', files.unknownNode]),
        platform(tempDir(), ['worker']),
      ]);
      return {
        unknownId,
        noNodes: { ...noNodes, file: files.noNodes },
        broken: { ...broken, file: files.broken },
        unknownNode: { ...unknownNode, file: files.unknownNode },
        worker,
      };
    })();
    return failures;
  };

  it('imports a file and a folder (same id replaced), exports one definition and all', async () => {
    const dataDir = tempDir();
    const defs = tempDir('platform-defs-');
    const first = writeJson(path.join(defs, 'single.json'), { id: 'wf_cli_one', ...echoFlow('cli-one') });

    const single = await platform(dataDir, ['workflows', 'import', first]);
    expect(single).toMatchObject({ code: 0, stderr: '' });
    expect(single.stdout.trim()).toBe(`created: wf_cli_one echo cli-one (${first})`);

    const folder = path.join(defs, 'folder');
    mkdirSync(folder);
    const renamed = { id: 'wf_cli_one', ...echoFlow('cli-one'), name: 'one, renamed' };
    const a = writeJson(path.join(folder, 'a.json'), renamed);
    const b = writeJson(path.join(folder, 'b.json'), { id: 'wf_cli_two', ...echoFlow('cli-two') });
    writeFileSync(path.join(folder, 'notes.txt'), 'not a definition');
    const many = await platform(dataDir, ['workflows', 'import', folder]);
    expect(many.code).toBe(0);
    expect(many.stdout.trim().split('\n')).toEqual([
      `replaced: wf_cli_one one, renamed (${a})`,
      `created: wf_cli_two echo cli-two (${b})`,
    ]);

    // Both read the same file at once.
    const [one, all] = await Promise.all([
      platform(dataDir, ['workflows', 'export', 'wf_cli_one']),
      platform(dataDir, ['workflows', 'export', '--all']),
    ]);
    expect(one.code).toBe(0);
    const exported = JSON.parse(one.stdout);
    expect(exported).toMatchObject({ id: 'wf_cli_one', name: 'one, renamed', active: false });
    expect(exported.nodes.map((n: { name: string; type: string }) => [n.name, n.type])).toEqual([
      // Imported with the short names, stored (and exported) in n8n's dialect.
      ['Webhook', 'n8n-nodes-platform.webhook'],
      ['Set', 'n8n-nodes-base.set'],
    ]);
    expect(exported.nodes[0].parameters).toMatchObject({ path: 'cli-one', responseMode: 'lastNode' });
    expect(exported.connections).toEqual(renamed.connections);

    expect(all.code).toBe(0);
    const list = JSON.parse(all.stdout) as Array<{ id: string; name: string }>;
    expect(Array.isArray(list)).toBe(true);
    expect(list.map((w) => w.id).sort()).toEqual(['wf_cli_one', 'wf_cli_two']);
    // What export prints is a definition import takes back.
    expect(list.find((w) => w.id === 'wf_cli_one')).toEqual(exported);
  }, 60_000);

  it('fails with a non-zero exit and a message: unknown id, invalid files, worker without Redis', async () => {
    const { unknownId, noNodes, broken, unknownNode, worker } = await failureRuns();

    expect(unknownId.code).toBe(1);
    expect(unknownId.stdout).toBe('');
    expect(unknownId.stderr.trim()).toBe("WORKFLOW_NOT_FOUND: Workflow 'wf_nope' was not found");

    // Fails the schema: the file and the missing field are named.
    expect(noNodes.code).toBe(1);
    expect(noNodes.stdout).toBe('');
    expect(noNodes.stderr.trim()).toBe(
      `VALIDATION_ERROR: ${noNodes.file}: not a workflow definition\n  /: must have required properties nodes`,
    );

    expect(broken.code).toBe(1);
    expect(broken.stderr).toMatch(/JSON/);
    expect(unknownNode.code).toBe(1);
    expect(unknownNode.stderr).toContain('VALIDATION_ERROR');

    expect(worker.code).toBe(2);
    expect(worker.stdout).toMatch(/platform worker needs REDIS_URL/);
  }, 60_000);

  it('names the file and the problem for any invalid definition', async () => {
    const { broken, unknownNode } = await failureRuns();
    expect(broken.stderr).toContain(broken.file);
    expect(unknownNode.stderr).toContain(unknownNode.file);
    expect(unknownNode.stderr).toMatch(/noSuchNode/);
  });
});
