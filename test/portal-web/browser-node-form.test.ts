/**
 * Issue 38: a node's form shows only the parameters that apply (n8n's displayOptions, carried by the
 * schemas), leaves hidden ones out of what it saves, and gives new assignments and conditions an
 * editable UUID id. Debian's Chromium on the built bundle, keyboard where a person would use it.
 */
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ownerSignsIn, type PortalBrowser, startPortalBrowser } from './browser-support.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
let portal: PortalBrowser;
let page: Page;
let workflowId = '';

const flow = {
  name: 'display flow',
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
      name: 'Call',
      type: 'n8n-nodes-base.httpRequest',
      typeVersion: 4.2,
      position: [220, 0],
      parameters: { url: 'http://127.0.0.1:9/hook', options: {} },
    },
    {
      id: 'n3',
      name: 'Fields',
      type: 'n8n-nodes-base.set',
      typeVersion: 3.4,
      position: [440, 0],
      parameters: { assignments: { assignments: [] }, options: {} },
    },
    {
      id: 'n4',
      name: 'Check',
      type: 'n8n-nodes-base.if',
      typeVersion: 2.2,
      position: [660, 0],
      parameters: {
        conditions: {
          options: { caseSensitive: true, leftValue: '', typeValidation: 'strict' },
          conditions: [],
          combinator: 'and',
        },
        options: {},
      },
    },
  ],
  connections: {
    Start: { main: [[{ node: 'Call', type: 'main', index: 0 }]] },
    Call: { main: [[{ node: 'Fields', type: 'main', index: 0 }]] },
    Fields: { main: [[{ node: 'Check', type: 'main', index: 0 }]] },
  },
  settings: {},
};

beforeAll(async () => {
  portal = await startPortalBrowser();
  const created = await portal.p.request({ method: 'POST', url: '/api/v1/workflows', payload: flow });
  expect(created.statusCode, created.body).toBeLessThan(300);
  workflowId = (created.json() as { id: string }).id;
  page = await portal.newPage(portal.owner);
  await ownerSignsIn(portal, page, 'amber harbor kestrel 58');
}, 90_000);

afterAll(async () => {
  await portal?.close();
}, 30_000);

const focusedId = () =>
  page.evaluate('document.activeElement && document.activeElement.id') as Promise<string>;

async function savedParameters(name: string) {
  const res = await portal.p.request({ method: 'GET', url: `/api/v1/workflows/${workflowId}` });
  const nodes = (res.json() as { nodes: Array<{ name: string; parameters: Record<string, unknown> }> }).nodes;
  return nodes.find((n) => n.name === name)?.parameters;
}

async function openForm(node: string) {
  const section = page.getByRole('region', { name: 'Node parameters' });
  await section.getByLabel('Node', { exact: true }).selectOption(node);
  const form = page.getByRole('form', { name: `Parameters of ${node}` });
  await form.waitFor();
  return form;
}

describe('node forms show what applies', () => {
  it("hides HTTP Request's body parameters until a body is sent, follows the content type, and saves only what is shown", async () => {
    await page.goto(`${portal.base}/portal/#/workflows/${workflowId}`);
    await page.getByRole('heading', { name: 'display flow', level: 1 }).waitFor();
    const form = await openForm('Call');
    // The fields come with the node type's schema, after the form itself: wait for one that is always
    // shown, so what is absent below is hidden, not yet to come.
    const sendBody = form.getByLabel('Send body');
    await sendBody.waitFor();
    const contentType = form.getByLabel('Content type', { exact: true });
    expect(await contentType.count()).toBe(0);
    expect(await form.getByLabel('JSON query').count()).toBe(0);
    expect(await form.getByLabel('Specify headers').count()).toBe(0);
    // Lists of name/value rows (pagination's, the body's) each have an "Add parameter" button.
    const rows = form.getByRole('button', { name: 'Add parameter' });
    const before = await rows.count();

    // Keyboard: Space ticks "Send body"; the content type appears and is the next Tab stop.
    await sendBody.focus();
    await page.keyboard.press('Space');
    await contentType.waitFor();
    await page.keyboard.press('Tab');
    expect(await focusedId()).toBe('param-1-contentType');
    // JSON (the default) asks how the body is given; its rows by default.
    expect(await rows.count()).toBe(before + 1);
    await form.getByLabel('Specify body').selectOption({ label: 'json' });
    await form.getByLabel('JSON body').fill('{"a":1}');
    expect(await rows.count()).toBe(before);

    // A raw body: its content type and text, no JSON body, no "Specify body".
    await contentType.selectOption({ label: 'raw' });
    await form.getByLabel('Raw content type').fill('text/plain');
    await form.getByLabel('Body', { exact: true }).fill('hello');
    expect(await form.getByLabel('JSON body').count()).toBe(0);
    expect(await form.getByLabel('Specify body').count()).toBe(0);
    await portal.shot('workflow-node-form-display', page);

    await form.getByRole('button', { name: 'Save Call' }).click();
    await form.getByRole('status').getByText('Saved.').waitFor();
    // The JSON body and the JSON choice were hidden: left out, as n8n's editor does.
    expect(await savedParameters('Call')).toEqual({
      url: 'http://127.0.0.1:9/hook',
      options: {},
      sendBody: true,
      contentType: 'raw',
      rawContentType: 'text/plain',
      body: 'hello',
    });
  }, 60_000);

  it('gives a new assignment a fresh UUID id that can be edited, and a new condition one too', async () => {
    const form = await openForm('Fields');
    // Keyboard: Enter on "Add assignment"; the new entry's id field takes the focus, holding a UUID.
    await form.getByRole('button', { name: 'Add assignment' }).focus();
    await page.keyboard.press('Enter');
    const firstId = form.locator('#param-2-assignments_assignments_0__id');
    await expect.poll(focusedId, { timeout: 5_000 }).toBe('param-2-assignments_assignments_0__id');
    const generated = await firstId.inputValue();
    expect(generated).toMatch(UUID);
    await page.keyboard.press('Tab');
    await page.keyboard.type('greeting');
    await form.getByRole('button', { name: 'Add assignment' }).click();
    const secondId = form.locator('#param-2-assignments_assignments_1__id');
    expect(await secondId.inputValue()).toMatch(UUID);
    expect(await secondId.inputValue()).not.toBe(generated);
    await secondId.fill('my-own-id');
    await form.locator('#param-2-assignments_assignments_1__name').fill('count');
    await form.getByRole('button', { name: 'Save Fields' }).click();
    await form.getByRole('status').getByText('Saved.').waitFor();
    const set = (await savedParameters('Fields')) as { assignments: { assignments: unknown[] } };
    expect(set.assignments.assignments).toEqual([
      { id: generated, name: 'greeting', type: 'string' },
      { id: 'my-own-id', name: 'count', type: 'string' },
    ]);

    const check = await openForm('Check');
    await check.getByRole('button', { name: 'Add condition' }).click();
    const conditionId = check.locator('#param-3-conditions_conditions_0__id');
    expect(await conditionId.inputValue()).toMatch(UUID);
    await check.getByRole('button', { name: 'Save Check' }).click();
    await check.getByRole('status').getByText('Saved.').waitFor();
    const saved = (await savedParameters('Check')) as { conditions: { conditions: Array<{ id: string }> } };
    expect(saved.conditions.conditions[0]?.id).toBe(await conditionId.inputValue());
  }, 60_000);

  it('ran without a Content-Security-Policy refusal', () => {
    expect(portal.cspViolations).toEqual([]);
  });
});
