import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closePythonSandbox } from '../../src/modules/workflows/engine/python/run-python.js';
import type { TestPlatform } from '../helpers/platform.js';
import { testDialects } from '../helpers/services.js';
import { activate, createWorkflow, flow, workflowPlatform } from './support.js';

/**
 * An n8n export with a Python Code node (`language: python`, as n8n's Pyodide flavour exports it),
 * imported through the API and run through its webhook, on an instance with the default settings
 * (Python turned on); an instance with WORKFLOW_PYTHON_ENABLED=false refuses it at save.
 */
const pythonFlow = (path: string, pythonCode: string) =>
  flow(`python ${path}`, [
    {
      name: 'Webhook',
      type: 'n8n-nodes-base.webhook',
      parameters: { path, httpMethod: 'POST', responseMode: 'lastNode' },
    },
    {
      name: 'Code',
      type: 'n8n-nodes-base.code',
      parameters: { language: 'python', mode: 'runOnceForAllItems', pythonCode },
    },
  ]);

describe.each(await testDialects())('a Python Code node through the API on %s', (dialect) => {
  let p: TestPlatform;
  let off: TestPlatform;
  beforeAll(async () => {
    p = await workflowPlatform(dialect, { CODE_NODE_TIMEOUT_MS: '20000', WORKFLOW_PYTHON_ENABLED: 'true' });
    off = await workflowPlatform(dialect, { WORKFLOW_PYTHON_ENABLED: 'false' });
  });
  afterAll(async () => {
    await p.close();
    await off.close();
    // The interpreter processes this file started (killed at once: nothing of theirs is kept).
    await closePythonSandbox();
  });

  it('imports and runs n8n Python code', async () => {
    const body = pythonFlow(
      'py-orders',
      [
        'body = _input.first().json.body',
        'total = sum(i["price"] for i in body["items"])',
        'print("total", total)',
        'return [{"json": {"customer": body.name.title(), "total": total}}]',
      ].join('\n'),
    );
    for (const node of body.nodes) (node as { typeVersion?: number }).typeVersion = 2;
    await activate(p, await createWorkflow(p, body));
    const res = await p.request({
      method: 'POST',
      url: '/webhook/py-orders',
      key: null,
      headers: { 'content-type': 'application/json' },
      payload: { name: 'ada lovelace', items: [{ price: 2.5 }, { price: 4 }] },
    });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual({ customer: 'Ada Lovelace', total: 6.5 });
  }, 180_000);

  it('a Python syntax error fails its run with a clear message', async () => {
    const body = pythonFlow('py-broken', 'return {');
    for (const node of body.nodes) (node as { typeVersion?: number }).typeVersion = 2;
    await activate(p, await createWorkflow(p, body));
    const res = await p.request({
      method: 'POST',
      url: '/webhook/py-broken',
      key: null,
      headers: { 'content-type': 'application/json' },
      payload: {},
    });
    expect(res.statusCode, res.body).toBe(422);
    expect(res.body).toMatch(/SyntaxError/);
  }, 180_000);

  it('a forged answer (json.dumps replaced) fails its run with a clear message, not a server error', async () => {
    const body = pythonFlow(
      'py-forged',
      [
        'import json',
        'json.dumps = lambda *a, **k: \'{"ok": true, "items": [{"no": "json"}]}\'',
        'return {}',
      ].join('\n'),
    );
    for (const node of body.nodes) (node as { typeVersion?: number }).typeVersion = 2;
    await activate(p, await createWorkflow(p, body));
    const res = await p.request({
      method: 'POST',
      url: '/webhook/py-forged',
      key: null,
      headers: { 'content-type': 'application/json' },
      payload: {},
    });
    expect(res.statusCode, res.body).toBe(422);
    expect(res.body).toMatch(/answer could not be read: item 0 has no 'json' dictionary/);
  }, 180_000);

  it('WORKFLOW_PYTHON_ENABLED=false: saving a Python Code node is a 400 naming the setting', async () => {
    const res = await off.request({
      method: 'POST',
      url: '/api/v1/workflows',
      payload: pythonFlow('py-off', 'return []'),
    });
    expect(res.statusCode, res.body).toBe(400);
    expect(res.body).toContain('WORKFLOW_PYTHON_ENABLED');
  });
});
