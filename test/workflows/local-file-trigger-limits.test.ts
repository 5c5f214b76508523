import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_TRIGGERS_PER_ACCOUNT } from '../../src/modules/workflows/nodes/n8n/local-file-trigger/trigger-slots.js';
import type { TestPlatform } from '../helpers/platform.js';
import { testDialects } from '../helpers/services.js';
import { activate, createWorkflow, workflowPlatform } from './support.js';

/** A workflow of Local File Triggers (one per folder named), each into a No Operation node. */
function watching(name: string, folders: string[]) {
  return {
    name,
    nodes: [
      ...folders.map((folder, i) => ({
        id: `${name}-t${i}`,
        name: `Watch ${folder}`,
        type: 'n8n-nodes-base.localFileTrigger',
        typeVersion: 1,
        position: [0, i * 200],
        parameters: { triggerOn: 'folder', path: folder, events: ['add'] },
      })),
      { id: `${name}-n`, name: 'Done', type: 'n8n-nodes-base.noOp', typeVersion: 1, position: [200, 0] },
    ],
    connections: Object.fromEntries(
      folders.map((folder) => [`Watch ${folder}`, { main: [[{ node: 'Done', type: 'main', index: 0 }]] }]),
    ),
    settings: {},
  };
}

const LIMIT = `an account may have at most ${MAX_TRIGGERS_PER_ACCOUNT} active n8n-nodes-base.localFileTrigger nodes; deactivate one first`;

describe.each(await testDialects())(
  'Local File Triggers per account (security review M2) on %s',
  (dialect) => {
    let p: TestPlatform;
    let dir: string;
    beforeAll(async () => {
      dir = await mkdtemp(path.join(tmpdir(), 'lft-limits-'));
      p = await workflowPlatform(dialect, { WORKFLOW_FILES_DIR: dir });
    });
    afterAll(async () => {
      await p?.close();
      await rm(dir, { recursive: true, force: true });
    });

    it(`refuses to activate a ${MAX_TRIGGERS_PER_ACCOUNT + 1}th with a 400 naming the bound, at activation and at a save`, async () => {
      const ids: string[] = [];
      for (let i = 0; i < MAX_TRIGGERS_PER_ACCOUNT; i++) {
        ids.push(await createWorkflow(p, watching(`w${i}`, [`in${i}`])));
        await activate(p, ids[i] as string);
      }
      const extra = await createWorkflow(p, watching('extra', ['more']));
      const refused = await p.request({ method: 'POST', url: `/api/v1/workflows/${extra}/activate` });
      expect(refused.statusCode).toBe(400);
      expect(refused.json()).toMatchObject({
        code: 'VALIDATION_ERROR',
        details: { problems: [{ path: 'nodes[0]', message: LIMIT }] },
      });
      const shown = (await p.request({ method: 'GET', url: `/api/v1/workflows/${extra}` })).json() as {
        active: boolean;
      };
      expect(shown.active).toBe(false);

      // Saving an active workflow with a second trigger is the same activation past the bound.
      const grown = await p.request({
        method: 'PUT',
        url: `/api/v1/workflows/${ids[0]}`,
        payload: watching('w0', ['in0', 'in0b']),
      });
      expect(grown.statusCode).toBe(400);
      expect(grown.body).toContain(LIMIT);

      // Deactivating one frees its place.
      const off = await p.request({ method: 'POST', url: `/api/v1/workflows/${ids[1]}/deactivate` });
      expect(off.statusCode).toBe(200);
      await activate(p, extra);
    });
  },
);
