import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { Browser, BrowserContext, Download, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestPlatform } from '../helpers/platform.js';
import { until } from '../helpers/until.js';
import { alertText, type PortalBrowser, startPortalBrowser } from './browser-support.js';

// The portal as a person uses it: Debian's Chromium on the built bundle, served by a listening
// platform on SQLite. The steps share one owner browser context and run in order.
const OWNER = 'owner@localhost';
const OWNER_PASSWORD = 'amber harbor kestrel 58';
const VIEWER = 'viewer@example.com';
const VIEWER_PASSWORD = 'quiet granite orchard 31';

let portal: PortalBrowser;
let p: TestPlatform;
let base: string;
let buildDir: string;
let browser: Browser;
let owner: BrowserContext;
let page: Page;
let cspViolations: string[];
let newPage: PortalBrowser['newPage'];

/** The created key's id, and its values across the steps. */
const key = { id: '', value: '', rotated: '' };

const shot = (name: string, on: Page = page) => portal.shot(name, on);

/** A call of the API with a key, as a program would make it (not the browser). */
async function callWithKey(value: string, method = 'GET', url = '/api/v1/workflows', body?: unknown) {
  const res = await fetch(`${base}${url}`, {
    method,
    headers: {
      authorization: `Bearer ${value}`,
      ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
    },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  await res.arrayBuffer();
  return res.status;
}

/** A download's text: the browser runs remotely, so the file is copied here first. */
async function downloadedText(file: Download): Promise<string> {
  const to = path.join(buildDir, `download-${Date.now()}`);
  await file.saveAs(to);
  return readFileSync(to, 'utf8');
}

/** Manual trigger → Edit Fields → Stop and Error: every run fails, so it can be retried. */
const failingFlow = {
  name: 'portal failing flow',
  nodes: [
    {
      id: 'n1',
      name: 'Start',
      type: 'n8n-nodes-base.manualTrigger',
      typeVersion: 1,
      position: [0, 0],
      parameters: {},
    },
    {
      id: 'n2',
      name: 'Edit Fields',
      type: 'n8n-nodes-base.set',
      typeVersion: 3.4,
      position: [220, 0],
      parameters: {
        assignments: { assignments: [{ id: 'a', name: 'greeting', value: 'hello', type: 'string' }] },
        includeOtherFields: true,
        options: {},
      },
    },
    {
      id: 'n3',
      name: 'Fail',
      type: 'n8n-nodes-base.stopAndError',
      typeVersion: 1,
      position: [440, 0],
      parameters: { errorMessage: 'portal test failure' },
    },
  ],
  connections: {
    Start: { main: [[{ node: 'Edit Fields', type: 'main', index: 0 }]] },
    'Edit Fields': { main: [[{ node: 'Fail', type: 'main', index: 0 }]] },
  },
};

beforeAll(async () => {
  portal = await startPortalBrowser({ MANUAL_RUN_WAIT_MS: '5000' });
  ({ p, base, buildDir, browser, owner, cspViolations, newPage } = portal);
  page = await newPage(owner);
}, 60_000);

afterAll(async () => {
  await portal?.close();
}, 30_000);

describe('the developer portal in Chromium', () => {
  it('sets the owner password from the setup link, signs out, signs in again', async () => {
    const portal = p.ctx.apis.portal;
    if (!portal) throw new Error('portal module missing');
    const { url } = await portal.members.setupLink(OWNER);
    expect(url.startsWith(`${base}/portal/#/setup?token=`)).toBe(true);
    const served = await page.goto(url);
    expect(served?.headers()['content-security-policy']).toContain("script-src 'self'");
    await page.getByRole('heading', { name: "Set the owner's password" }).waitFor();
    // The server's password rules answer in words.
    await page.getByLabel('New password').fill('password1234');
    await page.getByLabel('Repeat the password').fill('password1234');
    await page.getByRole('button', { name: 'Set password and sign in' }).click();
    expect(await alertText(page)).toMatch(/password/i);
    await page.getByLabel('New password').fill(OWNER_PASSWORD);
    await page.getByLabel('Repeat the password').fill(OWNER_PASSWORD);
    await shot('setup');
    await page.getByRole('button', { name: 'Set password and sign in' }).click();
    await page.getByRole('heading', { name: 'API keys' }).waitFor();

    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    await page.getByLabel('Email').fill(OWNER);
    await page.getByLabel('Password').fill('not the password 99');
    await page.getByRole('button', { name: 'Sign in' }).click();
    expect(await alertText(page)).toContain('Email or password is wrong');
    await page.getByLabel('Password').fill(OWNER_PASSWORD);
    await shot('login');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'API keys' }).waitFor();
    expect(await page.getByText(`${OWNER} (owner)`).count()).toBe(1);
  });

  it('creates a key and shows its value exactly once', async () => {
    // By keyboard: the dialog opens on Enter, Escape closes it and gives focus back to its button.
    const createButton = page.getByRole('button', { name: 'Create key' });
    await createButton.focus();
    await page.keyboard.press('Enter');
    await page.getByRole('dialog', { name: 'Create an API key' }).waitFor();
    expect(await page.locator('dialog input:focus').count()).toBe(1);
    await page.keyboard.press('Escape');
    await page.getByRole('dialog').waitFor({ state: 'detached' });
    expect(await page.locator('button:focus', { hasText: 'Create key' }).count()).toBe(1);

    await createButton.click();
    const dialog = page.getByRole('dialog', { name: 'Create an API key' });
    await dialog.getByLabel('Name', { exact: true }).fill('portal key');
    // Least privilege: no service is ticked until one is chosen, and creating without one is refused in words.
    expect(await dialog.locator('input[type=checkbox]:checked').count()).toBe(0);
    await dialog.getByRole('button', { name: 'Create key' }).click();
    expect(await alertText(page)).toContain('Choose the services the key may call');
    await dialog.getByLabel('All services (*)').check();
    await dialog.getByLabel('development', { exact: true }).check();
    await dialog.getByLabel('Role').selectOption('Writer');
    await dialog.getByLabel('Daily quota (requests per UTC day)').fill('1000');
    await shot('key-create');
    await dialog.getByRole('button', { name: 'Create key' }).click();

    const secret = page.getByRole('dialog', { name: 'Your new API key' });
    key.value = await secret.getByLabel('Key value').inputValue();
    expect(key.value).toMatch(/^DEV_API_/);
    expect(await secret.getByRole('note').textContent()).toContain('only time the key is shown');
    expect(await secret.getByRole('button', { name: 'Copy' }).count()).toBe(1);
    await shot('key-created-once');
    await secret.getByRole('button', { name: /close/ }).click();

    const row = page.locator('tr', { has: page.getByRole('rowheader', { name: 'portal key' }) });
    await row.waitFor();
    key.id = String(await row.getAttribute('data-key-id'));
    // The id has its copy button, named for the key.
    await owner.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: base });
    await row.getByRole('button', { name: 'Copy the id of portal key' }).click();
    await row.getByText('Copied to the clipboard.').waitFor();
    expect(await page.evaluate('navigator.clipboard.readText()')).toBe(key.id);
    expect(await row.textContent()).toContain(key.value.slice(-4));
    expect(await page.content()).not.toContain(key.value);
    await page.reload();
    await row.waitFor();
    expect(await page.content()).not.toContain(key.value);
    await shot('keys');
  });

  it('sorts and filters the keys table', async () => {
    const names = () => page.locator('tbody th[scope=row]').allInnerTexts();
    const byName = page.getByRole('button', { name: 'Name' });
    await byName.click();
    expect(await names()).toEqual(['bootstrap', 'portal key']);
    expect(await page.locator('th[aria-sort]').getAttribute('aria-sort')).toBe('ascending');
    await byName.click();
    expect(await names()).toEqual(['portal key', 'bootstrap']);
    expect(await page.locator('th[aria-sort]').getAttribute('aria-sort')).toBe('descending');
    await page.getByLabel('Filter').fill('DEV_API');
    expect(await names()).toEqual(['portal key']);
    await page.getByLabel('Filter').fill('no such key');
    expect(await names()).toEqual([]);
    await page.getByText('No keys match.').waitFor();
    await page.getByLabel('Filter').fill('');
    expect(await names()).toHaveLength(2);
  });

  it('calls the API with the key and sees usage move on the chart', async () => {
    await page
      .locator('tr', { has: page.getByRole('rowheader', { name: 'portal key' }) })
      .getByRole('link')
      .click();
    await page.getByRole('heading', { name: 'Usage' }).waitFor();
    const chart = page.locator('.chart svg');
    await chart.waitFor();
    expect(await chart.getAttribute('data-total')).toBe('0');

    for (let i = 0; i < 3; i++) expect(await callWithKey(key.value)).toBe(200);
    await page.getByRole('button', { name: 'Refresh' }).click();
    await page.waitForSelector('.chart svg[data-total="3"]');
    expect(await page.locator('[data-remaining]').first().getAttribute('data-remaining')).toBe('997');
    // The request log's figures for the key: per endpoint, per status, latency percentiles.
    const endpoint = page.locator('table.endpoints tr', { hasText: 'GET /api/v1/workflows' });
    await endpoint.waitFor();
    expect(await endpoint.locator('td').first().textContent()).toBe('3');
    expect(await page.locator('table.statuses tr', { hasText: '200' }).locator('td').textContent()).toBe('3');
    expect(await page.locator('[data-requests]').textContent()).toMatch(/p50 \d+ ms, p95 \d+ ms, p99 \d+ ms/);
    // A date range: a past week holds nothing.
    await page.getByLabel('From (UTC day)').fill('2020-01-01');
    await page.getByLabel('To (UTC day)').fill('2020-01-07');
    await page.waitForSelector('.chart svg[data-total="0"]');
    await page.locator('[data-requests="0"]').waitFor();
    await page.getByLabel('From (UTC day)').fill('');
    await page.getByLabel('To (UTC day)').fill('');
    await page.waitForSelector('.chart svg[data-total="3"]');
    await shot('usage');
    const saved = page.waitForEvent('download');
    await page.getByRole('button', { name: 'Export CSV' }).click();
    const csv = await saved;
    expect(csv.suggestedFilename()).toMatch(/^usage-\d{4}-\d{2}-\d{2}-\d{4}-\d{2}-\d{2}\.csv$/);
    const file = path.join(buildDir, 'usage.csv');
    await csv.saveAs(file);
    const text = readFileSync(file, 'utf8');
    expect(text.split('\n')[0]).toBe('day,keyId,service,requests,rejected');
    expect(text).toContain(`,${key.id},workflow,3,0`);
    expect(text).toContain('GET,/api/v1/workflows,3,0,');

    // Refused requests (429) are drawn and counted apart: a key with a quota of 2, called 3 times.
    const small = await p.createKey({
      name: 'tiny quota',
      type: 'development',
      services: ['*'],
      role: 'Reader',
      dailyQuota: 2,
    });
    expect([
      await callWithKey(small.key),
      await callWithKey(small.key),
      await callWithKey(small.key),
    ]).toEqual([200, 200, 429]);
    await page.reload();
    await page.getByLabel('Key').selectOption(small.id);
    await page.waitForSelector('.chart svg[data-total="2"][data-extra="1"]');
    expect(await page.locator('.chart .bar.extra').count()).toBe(1);
    expect(await page.locator('[data-remaining]').first().getAttribute('data-remaining')).toBe('0');
  });

  it("edits the key's role and the API answers 403 where the new role stops", async () => {
    const created = await callWithKey(key.value, 'POST', '/api/v1/workflows', failingFlow);
    expect(created).toBe(201);
    await page.getByRole('link', { name: 'Keys' }).click();
    await page.getByRole('button', { name: 'Edit portal key' }).click();
    const dialog = page.getByRole('dialog', { name: 'Edit key portal key' });
    await dialog.getByLabel('Role').selectOption('Reader');
    await dialog.getByRole('button', { name: 'Save changes' }).click();
    await dialog.waitFor({ state: 'detached' });
    const row = page.locator('tr', { has: page.getByRole('rowheader', { name: 'portal key' }) });
    await row.getByRole('cell', { name: 'Reader', exact: true }).waitFor();
    expect(await callWithKey(key.value, 'POST', '/api/v1/workflows', failingFlow)).toBe(403);
    expect(await callWithKey(key.value)).toBe(200);
  });

  it('rotates the key: a new value shown once, the old one refused', async () => {
    await page.getByRole('button', { name: 'Rotate portal key' }).click();
    const dialog = page.getByRole('dialog', { name: 'Rotate key portal key' });
    await dialog.getByLabel('Grace period for the old value').selectOption('0');
    await dialog.getByRole('button', { name: 'Rotate' }).click();
    const secret = page.getByRole('dialog', { name: /new value/ });
    key.rotated = await secret.getByLabel('Key value').inputValue();
    expect(key.rotated).not.toBe(key.value);
    await secret.getByRole('button', { name: /close/ }).click();
    expect(await page.content()).not.toContain(key.rotated);
    expect(await callWithKey(key.rotated)).toBe(200);
    expect(await callWithKey(key.value)).toBe(401);
  });

  it('revokes the key after a confirmation, and the API answers 401', async () => {
    await page.getByRole('button', { name: 'Revoke portal key' }).click();
    const confirm = page.getByRole('dialog', { name: 'Revoke key portal key?' });
    await shot('key-revoke-confirm');
    await confirm.getByRole('button', { name: 'Revoke key' }).click();
    await confirm.waitFor({ state: 'detached' });
    await page.getByLabel('Status').selectOption('revoked');
    const row = page.locator('tr', { has: page.getByRole('rowheader', { name: 'portal key' }) });
    await row.getByText('revoked', { exact: true }).waitFor();
    expect(await callWithKey(key.rotated)).toBe(401);
  });

  it("shows workflows, a workflow's graph and executions, an execution's items, and retries it", async () => {
    const list = await fetch(`${base}/api/v1/workflows?name=${encodeURIComponent(failingFlow.name)}`, {
      headers: { authorization: `Bearer ${p.adminKey}` },
    });
    const id = ((await list.json()) as { data: Array<{ id: string }> }).data[0]?.id ?? '';
    const run = await fetch(`${base}/api/v1/workflows/${id}/run`, {
      method: 'POST',
      headers: { authorization: `Bearer ${p.adminKey}`, 'content-type': 'application/json' },
      body: '{}',
    });
    expect(run.status).toBe(200);

    await page.getByRole('link', { name: 'Workflows' }).click();
    await page.getByRole('heading', { name: 'Workflows' }).waitFor();
    const toggle = page.getByRole('switch', { name: `Active: ${failingFlow.name}` });
    expect(await toggle.getAttribute('aria-checked')).toBe('false');
    await toggle.click();
    await page.locator('button[role=switch][aria-checked=true]').waitFor();
    const active = async () =>
      (
        (await (
          await fetch(`${base}/api/v1/workflows/${id}`, {
            headers: { authorization: `Bearer ${p.adminKey}` },
          })
        ).json()) as { active: boolean }
      ).active;
    expect(await active()).toBe(true);
    await toggle.click();
    await page.locator('button[role=switch][aria-checked=false]').waitFor();
    expect(await active()).toBe(false);
    await shot('workflows');
    await page.getByRole('link', { name: failingFlow.name }).click();
    await page.getByRole('heading', { name: failingFlow.name }).waitFor();
    expect(await page.locator('.graph g.node').count()).toBe(3);
    expect(await page.locator('.graph path.edge').count()).toBe(2);
    expect(await page.locator('.graph svg').getAttribute('aria-label')).toContain('Start → Edit Fields');
    await shot('workflow');

    await page.locator('table').getByRole('link').first().click();
    await page.getByRole('heading', { name: /^Execution / }).waitFor();
    expect(await alertText(page)).toContain('portal test failure');
    // The failing node is named in the alert and its panel is marked and open.
    expect(await page.getByRole('alert').getByRole('link', { name: 'Fail' }).count()).toBe(1);
    expect(await page.locator('details.node-run.failed > summary').textContent()).toContain('Fail');
    expect(await page.locator('details.node-run.failed').getAttribute('open')).not.toBeNull();
    // Items show as a table first (a column per field), and as JSON on request.
    const editFields = page.locator('details.node-run', { hasText: 'Edit Fields' }).first();
    await editFields.locator('summary').focus();
    expect(await editFields.locator('.items-table th', { hasText: 'greeting' }).count()).toBeGreaterThan(0);
    expect(await editFields.locator('.items-table td', { hasText: 'hello' }).count()).toBeGreaterThan(0);
    await editFields.getByRole('button', { name: 'JSON' }).last().click();
    expect(await page.getByText('"greeting": "hello"').count()).toBeGreaterThan(0);
    await shot('execution');
    const first = page.url();
    await page.getByRole('button', { name: 'Retry execution' }).click();
    await page.waitForURL((u) => u.toString() !== first);
    await page.getByText('Retry of').waitFor();
  });

  it('lists executions across workflows, filters them, and opens one by its id', async () => {
    await page.getByRole('link', { name: 'Executions', exact: true }).click();
    await page.getByRole('heading', { name: 'Executions', exact: true }).waitFor();
    await page.locator('tbody tr[data-status]').first().waitFor();
    const statuses = async () =>
      page
        .locator('tbody tr[data-status]')
        .evaluateAll((rows) => rows.map((r) => r.getAttribute('data-status')));
    expect(await statuses()).toContain('error');
    // The retry the previous step made has ended (it fails like the first run) before the filters ask for it.
    await expect
      .poll(async () => {
        const res = await fetch(`${base}/api/v1/executions?mode=retry&status=error`, {
          headers: { authorization: `Bearer ${p.adminKey}` },
        });
        return ((await res.json()) as { data: unknown[] }).data.length;
      })
      .toBe(1);
    await page.getByLabel('Workflow').selectOption({ label: failingFlow.name });
    await page.getByLabel('Status').selectOption('error');
    await page.getByLabel('Mode').selectOption('retry');
    // Only the retry the previous step made: one error row of mode retry.
    await expect
      .poll(async () => page.locator('tbody tr[data-status]').allTextContents())
      .toEqual([expect.stringContaining('retry')]);
    const id = (await page.locator('tbody tr[data-status] th a').first().textContent()) ?? '';
    expect(id).not.toBe('');
    await shot('executions');
    // A range that ends before anything ran matches nothing.
    await page.getByLabel('To', { exact: true }).fill('2001-01-01T00:00');
    await page.getByText('No executions match.').waitFor();
    // Keyboard only: type the id and press Enter in the search.
    await page.getByLabel('Execution id').fill(id);
    await page.getByLabel('Execution id').press('Enter');
    await page.getByRole('heading', { name: `Execution ${id}` }).waitFor();
    expect(await page.locator('dl.facts').textContent()).toContain('retry');
    // An id of nothing shows the API's refusal in words.
    await page.goto(`${base}/portal/#/executions/exe_does_not_exist`);
    await page
      .getByRole('alert')
      .filter({ hasText: /not found/i })
      .waitFor();
    // Nothing of the execution shown before stays on the page.
    expect(await page.locator('dl.facts').count()).toBe(0);
  });

  it('imports an n8n export, edits its JSON with problems on their lines, tests, exports, duplicates and deletes it', async () => {
    await page.getByRole('link', { name: 'Workflows', exact: true }).click();
    await page.getByRole('link', { name: 'New or import' }).click();
    await page.getByRole('heading', { name: 'New workflow' }).waitFor();
    // An n8n export carries read-only fields (id, active, versionId): they are ignored, not refused.
    const exported = { ...failingFlow, name: 'portal imported flow', id: 'n8nExportId', active: true };
    await page.getByLabel('Upload an n8n export (.json)').setInputFiles({
      name: 'export.json',
      mimeType: 'application/json',
      buffer: Buffer.from(JSON.stringify(exported, null, 2)),
    });
    await expect.poll(() => page.getByLabel('Workflow JSON').inputValue()).toContain('portal imported flow');
    await page.getByRole('button', { name: 'Create workflow' }).click();
    await page.getByRole('heading', { name: 'portal imported flow' }).waitFor();
    const workflowUrl = page.url();
    const id = decodeURIComponent(workflowUrl.split('/').pop() ?? '');
    expect(id).not.toBe('n8nExportId');

    // A node type the platform lacks: the API's problem names the node's path, on the node's line.
    await page.getByRole('button', { name: 'Edit JSON' }).click();
    const editor = page.getByLabel('Workflow JSON');
    const text = await editor.inputValue();
    await editor.fill(text.replace('n8n-nodes-base.stopAndError', 'n8n-nodes-base.noSuchNode'));
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    const problems = page.locator('ul.problems');
    await problems.waitFor();
    expect(await problems.textContent()).toContain('nodes[2].type');
    const lineOfFail = text.split('\n').findIndex((l) => l.includes('"name": "Fail"')) + 1;
    expect(await problems.getByRole('button').first().textContent()).toBe(`line ${lineOfFail}`);
    await shot('workflow-json-problems');
    // Broken JSON: the parser's complaint with its line; nothing is sent.
    await editor.fill('{\n  "name": "x"\n  "nodes": []\n}');
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await expect.poll(async () => (await problems.textContent()) ?? '').toMatch(/line 3.*JSON/s);
    // A valid change saves and shows.
    await editor.fill(text.replace('"portal imported flow"', '"portal edited flow"'));
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await page.getByRole('heading', { name: 'portal edited flow' }).waitFor();

    // Export downloads the workflow's JSON.
    const [file] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('button', { name: 'Export' }).click(),
    ]);
    const body = JSON.parse(await downloadedText(file)) as {
      name: string;
      nodes: unknown[];
    };
    expect(body.name).toBe('portal edited flow');
    expect(body.nodes).toHaveLength(3);

    // Test workflow: a manual run, shown per node on its execution page.
    await page.getByRole('button', { name: 'Test workflow' }).click();
    await page.getByRole('heading', { name: /^Execution / }).waitFor();
    expect(await page.locator('details.node-run.failed > summary').textContent()).toContain('Fail');

    // Duplicate, then delete the copy after confirming.
    await page.goto(workflowUrl);
    await page.getByRole('button', { name: 'Duplicate' }).click();
    await page.getByRole('heading', { name: 'portal edited flow (copy)' }).waitFor();
    const copyId = decodeURIComponent(page.url().split('/').pop() ?? '');
    await page.getByRole('button', { name: 'Delete' }).click();
    await page.getByRole('button', { name: 'Delete workflow' }).click();
    await page.getByRole('heading', { name: 'Workflows', exact: true }).waitFor();
    const gone = await fetch(`${base}/api/v1/workflows/${copyId}`, {
      headers: { authorization: `Bearer ${p.adminKey}` },
    });
    expect(gone.status).toBe(404);
  });

  it('creates a credential from its type’s fields, tests it, never shows its value, shares it with a key, and deletes it', async () => {
    await page.getByRole('link', { name: 'Credentials', exact: true }).click();
    await page.getByRole('heading', { name: 'Credentials', exact: true }).waitFor();
    await page.getByLabel('Name', { exact: true }).fill('portal header');
    await page.getByLabel('Type', { exact: true }).fill('httpHeaderAuth');
    await page.getByRole('button', { name: 'Show fields' }).click();
    await page.getByLabel('value (required)').waitFor();
    expect(await page.getByLabel('value (required)').getAttribute('type')).toBe('password');
    await page.getByLabel('name (required)').fill('X-Portal');
    await page.getByLabel('value (required)').fill('portal-secret-value-1');
    await page.getByRole('button', { name: 'Create credential' }).click();
    const row = page.locator('tr[data-credential="portal header"]');
    await row.waitFor();
    await row.getByRole('button', { name: 'Test portal header' }).click();
    await row
      .getByRole('status')
      .filter({ hasText: /OK|Error|test/i })
      .waitFor();
    await shot('credentials');
    // The secret never comes back: not on the page, not in the API's answer.
    expect(await page.content()).not.toContain('portal-secret-value-1');
    const listed = await fetch(`${base}/api/v1/credentials`, {
      headers: { authorization: `Bearer ${p.adminKey}` },
    });
    const listedText = await listed.text();
    expect(listedText).not.toContain('portal-secret-value-1');
    // An unknown type says so instead of showing fields.
    await page.getByLabel('Type', { exact: true }).fill('noSuchType');
    await page.getByRole('button', { name: 'Show fields' }).click();
    await page
      .getByRole('alert')
      .filter({ hasText: /noSuchType/ })
      .waitFor();
    // Shared with a key: the workflows it saves may use the credential; the dialog shows it ticked after.
    await row.getByRole('button', { name: 'Share portal header' }).click();
    let share = page.getByRole('dialog', { name: 'Share portal header' });
    await share.getByLabel('key bootstrap').check();
    await shot('credential-share');
    await share.getByRole('button', { name: 'Save shares' }).click();
    await share.waitFor({ state: 'detached' });
    const created = (JSON.parse(listedText) as { data: Array<{ id: string; name: string }> }).data.find(
      (c) => c.name === 'portal header',
    );
    const shares = await fetch(`${base}/api/v1/credentials/${created?.id}/share`, {
      headers: { authorization: `Bearer ${p.adminKey}` },
    });
    const sharedWith = ((await shares.json()) as { sharedWith: string[] }).sharedWith;
    expect(sharedWith).toHaveLength(1);
    expect(sharedWith[0]).toMatch(/^key:/);
    await row.getByRole('button', { name: 'Share portal header' }).click();
    share = page.getByRole('dialog', { name: 'Share portal header' });
    expect(await share.getByLabel('key bootstrap').isChecked()).toBe(true);
    await share.getByRole('button', { name: 'Cancel' }).click();
    await share.waitFor({ state: 'detached' });
    await row.getByRole('button', { name: 'Delete portal header' }).click();
    await page.getByRole('button', { name: 'Delete credential' }).click();
    await row.waitFor({ state: 'detached' });
  });

  it('streams a chat answer in the playground from a chat model (embedding models are not offered)', async () => {
    await page.getByRole('link', { name: 'Playground' }).click();
    const target = page.getByLabel('Model or flow');
    await target.locator('option[value="model:builtin/extractive"]').waitFor({ state: 'attached' });
    expect(await target.locator('option[value="model:builtin/hashed-ngrams"]').count()).toBe(0);
    expect(await target.inputValue()).toBe('model:builtin/extractive');
    await page.getByLabel('Message').fill('What is the platform?');
    const streamed = page.waitForResponse((r) => r.url().endsWith('/v1/chat/completions'));
    await page.getByRole('button', { name: 'Send' }).click();
    const response = await streamed;
    expect(response.status()).toBe(200);
    expect(response.headers()['content-type']).toContain('text/event-stream');
    await page.locator('.turn.assistant p').filter({ hasText: /[^…]/ }).waitFor();
    await page.getByRole('button', { name: 'New chat' }).waitFor();
    expect(await page.getByRole('alert').count()).toBe(0);
    await shot('playground');
  });

  it('invites a viewer, who signs in and finds the create button refused', async () => {
    await page.getByRole('link', { name: 'Members' }).click();
    await page.getByRole('heading', { name: 'Members' }).waitFor();
    await page.getByLabel('Email').fill(VIEWER);
    await page.locator('form.row-form').getByLabel('Role').selectOption('viewer');
    await page.getByRole('button', { name: 'Create invite link' }).click();
    const secret = page.getByRole('dialog', { name: `Invitation for ${VIEWER}` });
    const link = await secret.getByLabel('Invite link').inputValue();
    expect(link.startsWith(`${base}/portal/#/invite?token=`)).toBe(true);
    await shot('member-invite');
    await secret.getByRole('button', { name: /close/ }).click();

    const viewer = await browser.newContext({ viewport: { width: 1280, height: 860 } });
    try {
      const vpage = await newPage(viewer);
      await vpage.goto(link);
      await vpage.getByLabel('Your name').fill('Vera Viewer');
      await vpage.getByLabel('New password').fill(VIEWER_PASSWORD);
      await vpage.getByLabel('Repeat the password').fill(VIEWER_PASSWORD);
      await shot('invite-accept', vpage);
      await vpage.getByRole('button', { name: 'Join and sign in' }).click();
      await vpage.getByRole('heading', { name: 'API keys' }).waitFor();
      const create = vpage.getByRole('button', { name: 'Create key' });
      expect(await create.isDisabled()).toBe(true);
      const reason = await vpage.locator(`#${await create.getAttribute('aria-describedby')}`).textContent();
      expect(reason).toContain('Your role (viewer) cannot create or change keys');
      // The list itself needs core:admin: the API's 403 is shown in words.
      expect(await alertText(vpage)).toMatch(/core:admin/);
      await shot('viewer-keys', vpage);
      // The logs are the viewer's to read: the table, and no refusal.
      await vpage.getByRole('link', { name: 'Logs' }).click();
      await vpage.getByRole('heading', { name: 'Request log' }).waitFor();
      await vpage.locator('tbody tr').first().waitFor();
      expect(await vpage.getByRole('alert').count()).toBe(0);
    } finally {
      await viewer.close();
    }
    // A member once they accepted: the owner sees them with their role.
    await page.reload();
    await page.getByRole('rowheader', { name: VIEWER }).waitFor();
    expect(await page.getByRole('combobox', { name: `Role of ${VIEWER}` }).inputValue()).toBe('viewer');
    await shot('members');
  });

  it("changes a member's role, then removes them", async () => {
    const role = page.getByRole('combobox', { name: `Role of ${VIEWER}` });
    await role.selectOption('developer');
    await page.getByRole('button', { name: `Save role of ${VIEWER}` }).click();
    await page
      .getByRole('button', { name: `Save role of ${VIEWER}` })
      .and(page.locator(':disabled'))
      .waitFor();
    await page.reload();
    expect(await page.getByRole('combobox', { name: `Role of ${VIEWER}` }).inputValue()).toBe('developer');
    await page.getByRole('button', { name: `Remove ${VIEWER}` }).click();
    const confirm = page.getByRole('dialog', { name: `Remove ${VIEWER}?` });
    await confirm.getByRole('button', { name: 'Remove member' }).click();
    await page.getByRole('rowheader', { name: VIEWER }).waitFor({ state: 'detached' });
    // Gone for the API too: they can no longer sign in.
    const login = await fetch(`${base}/v1/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: VIEWER, password: VIEWER_PASSWORD }),
    });
    expect(login.status).toBe(401);
  });

  it('finds a request by its id in the request log, and the changes in the audit trail', async () => {
    const traced = await fetch(`${base}/api/v1/workflows?limit=1`, {
      headers: { authorization: `Bearer ${p.adminKey}`, 'x-request-id': 'portal-trace-1' },
    });
    expect(traced.status).toBe(200);
    await page.getByRole('link', { name: 'Logs' }).click();
    await page.getByRole('heading', { name: 'Request log' }).waitFor();
    await page.locator('tbody tr').first().waitFor();
    await page.getByLabel('Request id').fill('portal-trace-1');
    const row = page.locator('tr[data-request-id="portal-trace-1"]');
    await row.waitFor();
    // The search applies: every other row goes.
    await page
      .locator('tbody tr:not([data-request-id="portal-trace-1"])')
      .first()
      .waitFor({ state: 'detached' });
    expect(await page.locator('tbody tr').count()).toBe(1);
    expect(await row.textContent()).toContain('GET /api/v1/workflows');
    expect(await row.textContent()).not.toContain('limit=1');
    expect(await row.getByRole('button', { name: 'Copy portal-trace-1' }).count()).toBe(1);
    // Refused calls only: the revoked key's 401s are not the account's (no principal), its 403 was.
    await page.getByLabel('Request id').fill('');
    await page.getByLabel('Status').selectOption('4xx');
    // The rows of the previous filter stay until the new page arrives: wait for the refused ones.
    const badges = () => page.locator('tbody tr .badge').allInnerTexts();
    await until(async () => {
      const texts = await badges();
      return texts.length > 0 && texts.every((t) => /^4\d\d$/.test(t));
    }, 'only 4xx rows listed');
    for (const text of await badges()) expect(text).toMatch(/^4\d\d$/);
    await shot('request-log');

    // By keyboard: the tab to the audit trail is reachable and follows on Enter.
    await page.getByRole('link', { name: 'Audit trail' }).focus();
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Audit trail' }).waitFor();
    await page.locator('tr[data-action="key.revoked"]').waitFor();
    for (const action of [
      'key.created',
      'key.rotated',
      'key.updated',
      'member.removed',
      'member.role_changed',
    ])
      expect(await page.locator(`tr[data-action="${action}"]`).count(), action).toBeGreaterThan(0);
    await page.getByLabel('Action').selectOption('member.removed');
    await page.locator('tbody tr').first().waitFor();
    await page.locator('tbody tr:not([data-action="member.removed"])').first().waitFor({ state: 'detached' });
    expect(await page.locator('tbody tr').first().textContent()).toContain('member mem_');
    await page.getByLabel('Action').selectOption('');
    await page.locator('tr[data-action="key.created"]').first().waitFor();
    await shot('audit-trail');
    // The dark theme follows the system setting.
    const background = () => page.evaluate('getComputedStyle(document.documentElement).backgroundColor');
    const light = await background();
    await page.emulateMedia({ colorScheme: 'dark' });
    expect(await background()).not.toBe(light);
    expect(await background()).toBe('rgb(13, 17, 23)');
    await shot('audit-trail-dark');
    await page.emulateMedia({ colorScheme: 'light' });
  });

  it('refuses a state change made with the session cookie but without the CSRF token', async () => {
    const cookie = (await owner.cookies(base)).find((c) => c.name === 'platform_session');
    expect(cookie?.httpOnly).toBe(true);
    expect(cookie?.sameSite).toBe('Lax');
    const headers = { cookie: `platform_session=${cookie?.value}`, 'content-type': 'application/json' };
    const body = JSON.stringify({ name: 'csrf', type: 'development', services: ['core'], role: 'Reader' });
    const refused = await fetch(`${base}/v1/api-keys`, { method: 'POST', headers, body });
    expect(refused.status).toBe(403);
    expect(((await refused.json()) as { message: string }).message).toMatch(/CSRF/);
    // The same cookie with its token is accepted: the refusal was the missing header.
    const session = await fetch(`${base}/v1/auth/session`, { headers });
    const { csrfToken } = (await session.json()) as { csrfToken: string };
    const accepted = await fetch(`${base}/v1/api-keys`, {
      method: 'POST',
      headers: { ...headers, 'x-csrf-token': csrfToken },
      body,
    });
    expect(accepted.status).toBe(201);
  });

  it('a session revoked in another browser logs this page out', async () => {
    const other = await browser.newContext({ viewport: { width: 1280, height: 860 } });
    try {
      const opage = await newPage(other);
      await opage.goto(`${base}/portal/#/login`);
      await opage.getByRole('heading', { name: 'Sign in' }).waitFor();
      // Keyboard only: the page starts focused on its content, Tab reaches each field, Enter submits.
      await opage.keyboard.press('Tab');
      await opage.keyboard.type(OWNER);
      await opage.keyboard.press('Tab');
      await opage.keyboard.type(OWNER_PASSWORD);
      await opage.keyboard.press('Enter');
      await opage.getByRole('heading', { name: 'API keys' }).waitFor();
      await opage.getByRole('link', { name: 'Sessions' }).click();
      await opage.getByRole('heading', { name: 'Your sessions' }).waitFor();
      await shot('sessions', opage);
      const revoke = opage.getByRole('button', { name: 'Revoke' });
      expect(await revoke.count()).toBeGreaterThan(0);
      // Every other session of the owner, the first browser's among them; this one's own button is "Sign out".
      while ((await revoke.count()) > 0) {
        const rows = await opage.locator('tbody tr').count();
        await revoke.first().click();
        await opage
          .locator('tbody tr')
          .nth(rows - 1)
          .waitFor({ state: 'detached' });
      }
    } finally {
      await other.close();
    }
    await page.getByRole('link', { name: 'Workflows' }).click();
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    expect(await page.getByRole('status').textContent()).toContain('Your session has ended');
    expect(page.url()).toContain('#/login');
    // Signing in again returns to the page the session ended on.
    await page.getByLabel('Email').fill(OWNER);
    await page.getByLabel('Password').fill(OWNER_PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Workflows' }).waitFor();
  });

  it('ran every page without a Content-Security-Policy refusal', () => {
    expect(cspViolations).toEqual([]);
  });
});
