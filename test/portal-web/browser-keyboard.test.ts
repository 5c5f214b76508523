/**
 * Issue 38 items 4 and 6: a node's parameters edited in a form generated from its type's schema, and
 * every page walked with the keyboard only (Tab, Shift+Tab, Enter, Escape, Space; typing in fields):
 * every action reached, focus visible, dialogs keep the focus and give it back. Debian's Chromium on
 * the built bundle; the steps share one owner and run in order.
 */
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { until } from '../helpers/until.js';
import { OPENAI_UPSTREAM_KEY } from '../llm/support.js';
import { type FakeLlmServer, startFakeOpenAi } from '../support/fake-llm/index.js';
import { ownerSignsIn, type PortalBrowser, startPortalBrowser } from './browser-support.js';

const MODEL = 'gpt-4o-mini';
let portal: PortalBrowser;
let openai: FakeLlmServer;
let page: Page;
let workflowId = '';

const formFlow = {
  name: 'form flow',
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
        assignments: {
          assignments: [{ id: 'a', name: 'greeting', value: '={{ "hello" }}', type: 'string' }],
        },
        options: {},
      },
    },
    {
      id: 'n3',
      name: 'Done',
      type: 'n8n-nodes-base.noOp',
      typeVersion: 1,
      position: [440, 0],
      parameters: {},
    },
  ],
  connections: {
    Start: { main: [[{ node: 'Edit Fields', type: 'main', index: 0 }]] },
    'Edit Fields': { main: [[{ node: 'Done', type: 'main', index: 0 }]] },
  },
  settings: {},
};

async function post(url: string, payload: object) {
  const res = await portal.p.request({ method: 'POST', url, payload });
  expect(res.statusCode, res.body).toBeLessThan(300);
  return res.json() as { id: string };
}

beforeAll(async () => {
  openai = await startFakeOpenAi({ apiKey: OPENAI_UPSTREAM_KEY });
  portal = await startPortalBrowser({
    LLM_MODELS: JSON.stringify([{ provider: 'openai', baseUrl: openai.url, name: MODEL, timeoutMs: 5_000 }]),
    OPENAI_BASE_URL: openai.url,
    OPENAI_API_KEY: OPENAI_UPSTREAM_KEY,
  });
  workflowId = (await post('/api/v1/workflows', formFlow)).id;
  await post(`/api/v1/workflows/${workflowId}/run`, {});
  await post('/api/v1/credentials', {
    name: 'kb header',
    type: 'httpHeaderAuth',
    data: { name: 'X-Kb', value: 'kb-secret-value' },
  });
  await post('/api/agents', { name: 'kb agent', model: MODEL });
  page = await portal.newPage(portal.owner);
  await ownerSignsIn(portal, page, 'amber harbor kestrel 58');
}, 90_000);

afterAll(async () => {
  await portal?.close();
  await openai?.close();
}, 30_000);

/** The focused element: a description, where it is, and whether a focus ring is drawn around it. */
interface Focus {
  kb: string | null;
  type: string;
  desc: string;
  inMain: boolean;
  inDialog: boolean;
  ring: boolean;
}

// The in-page parts are sources, run by the browser: this project compiles its tests without the DOM's types.

/** In the page: the focused element described (see Focus). */
const FOCUS_SCRIPT = `(() => {
  const el = document.activeElement;
  if (!el || el === document.body)
    return { kb: null, type: '', desc: 'body', inMain: false, inDialog: false, ring: false };
  const style = getComputedStyle(el);
  const ring =
    (style.outlineStyle !== 'none' && Number.parseFloat(style.outlineWidth) > 0) || style.boxShadow !== 'none';
  const name = el.getAttribute('aria-label') ?? el.textContent?.trim().slice(0, 40) ?? '';
  const type = el.type ?? '';
  return {
    kb: el.dataset.kb ?? null,
    type,
    desc: el.tagName.toLowerCase() + (el.id ? '#' + el.id : '') + (type ? '[' + type + ']' : '') + ' "' + name + '"',
    inMain: el.closest('main') !== null && el.tagName !== 'MAIN',
    inDialog: el.closest('dialog[open]') !== null,
    ring,
  };
})()`;

const focus = (): Promise<Focus> => page.evaluate<Focus>(FOCUS_SCRIPT);

/** In the page: marks every enabled, visible control under `sel`; answers their descriptions by mark. */
const MARK_SCRIPT = (sel: string) => `(() => {
  const root = document.querySelector(${JSON.stringify(sel)});
  const found = {};
  if (!root) return found;
  let n = 0;
  for (const el of root.querySelectorAll('a[href], button, input, select, textarea, summary, [tabindex]')) {
    if (el.tabIndex < 0 || el.matches(':disabled') || el.type === 'hidden') continue;
    if (!el.checkVisibility({ checkVisibilityCSS: true }) || el.getClientRects().length === 0) continue;
    // Of a radio group only the checked radio (else the first) is in the tab order; arrows move in it.
    if (el.tagName === 'INPUT' && el.type === 'radio') {
      const group = [...root.querySelectorAll('input[type=radio]')].filter((r) => r.name === el.name);
      if ((group.find((r) => r.checked) ?? group[0]) !== el) continue;
    }
    n++;
    el.dataset.kb = String(n);
    found[String(n)] =
      el.tagName.toLowerCase() + ' "' + (el.getAttribute('aria-label') ?? el.textContent?.trim().slice(0, 40) ?? '') + '"';
  }
  return found;
})()`;

/** Whether an element has the focus (run in the page). */
const isFocused = (el: unknown) =>
  el === (el as { ownerDocument: { activeElement: unknown } }).ownerDocument.activeElement;

/** Marks every enabled, visible control of the scope (`main` or the open dialog). */
const mark = (scope: 'main' | 'dialog[open]'): Promise<Record<string, string>> =>
  page.evaluate<Record<string, string>>(MARK_SCRIPT(scope));

/**
 * Tabs through the page's main part from its start and back with Shift+Tab: each control is reached
 * both ways and shows a focus ring. Focus starts on <main> (where a page change puts it).
 */
async function walkMain(label: string) {
  const all = await mark('main');
  const forward: string[] = [];
  const noRing: string[] = [];
  // A date or time field takes one Tab per part (and its picker button).
  const limit = Object.keys(all).length * 7 + 10;
  let f = await focus();
  for (let i = 0; i < limit; i++) {
    await page.keyboard.press('Tab');
    f = await focus();
    if (!f.inMain) break;
    if (f.kb) forward.push(f.kb);
    if (!f.ring) noRing.push(f.desc);
  }
  expect(f.inMain, `${label}: Tab never left the page's main part`).toBe(false);
  // Back from after the last control to before the first.
  const backward: string[] = [];
  for (let i = 0; i < limit; i++) {
    await page.keyboard.press('Shift+Tab');
    f = await focus();
    if (!f.inMain) {
      if (backward.length > 0) break;
      continue;
    }
    if (f.kb) backward.push(f.kb);
  }
  const missed = Object.keys(all)
    .filter((k) => !forward.includes(k))
    .map((k) => all[k]);
  expect(missed, `${label}: controls Tab never reached`).toEqual([]);
  expect(noRing, `${label}: focus without a visible ring`).toEqual([]);
  expect([...backward].reverse(), `${label}: Shift+Tab's order`).toEqual(forward);
  return forward.length;
}

/** Presses Tab (or Shift+Tab) until the focus is on what `matches` says; fails after `max` presses. */
async function tabTo(matches: (f: Focus) => boolean, what: string, key = 'Tab', max = 250) {
  for (let i = 0; i < max; i++) {
    await page.keyboard.press(key);
    if (matches(await focus())) return;
  }
  throw new Error(`Tab never reached ${what}`);
}

const text = (s: string) => (f: Focus) => f.desc.includes(`"${s}`);

/** Goes to a portal section by its link in the navigation, keyboard only. */
async function goByKeyboard(label: string, heading: string | RegExp) {
  await tabTo(
    (f) => !f.inMain && f.desc.startsWith('a') && f.desc.includes(`"${label}"`),
    `the ${label} link`,
  );
  await page.keyboard.press('Enter');
  await page.getByRole('heading', { name: heading, level: 1 }).waitFor();
  // The page change moves focus to <main> in an effect, which may run after the heading is painted.
  await until(
    () => page.evaluate<boolean>("document.activeElement?.id === 'main'"),
    'the focus on the page after the change',
  );
}

/** The page's reads have answered (an open stream counts as settled after its deadline). */
const settled = () => page.waitForLoadState('networkidle', { timeout: 5_000 }).catch(() => undefined);

/** Opens a link or button of the page, keyboard only. */
async function openByKeyboard(name: string, heading: string | RegExp, key = 'Enter') {
  await tabTo((f) => f.inMain && text(name)(f), name);
  await page.keyboard.press(key);
  await page.getByRole('heading', { name: heading, level: 1 }).waitFor();
  await settled();
}

/**
 * A dialog opened from a button with Enter or Space: focus moves in, Tab and Shift+Tab stay in it and
 * reach all of it, Escape closes it, and focus is back on the button.
 */
async function dialogKeepsFocus(opener: string, key: 'Enter' | ' ') {
  await tabTo((f) => f.inMain && text(opener)(f), opener);
  const before = await focus();
  await page.keyboard.press(key === ' ' ? 'Space' : key);
  await page.locator('dialog[open]').waitFor();
  expect((await focus()).inDialog, `${opener}: focus moved into the dialog`).toBe(true);
  const all = await mark('dialog[open]');
  const reached = new Set<string>();
  const count = Object.keys(all).length;
  for (const step of ['Tab', 'Shift+Tab']) {
    for (let i = 0; i < count * 6 + 4; i++) {
      await page.keyboard.press(step);
      const f = await focus();
      expect(f.inDialog, `${opener}: ${step} left the dialog for ${f.desc}`).toBe(true);
      expect(f.ring, `${opener}: no focus ring on ${f.desc}`).toBe(true);
      if (f.kb) reached.add(f.kb);
    }
  }
  expect(
    Object.keys(all)
      .filter((k) => !reached.has(k))
      .map((k) => all[k]),
    `${opener}: dialog controls not reached`,
  ).toEqual([]);
  await page.keyboard.press('Escape');
  await page.locator('dialog[open]').waitFor({ state: 'detached' });
  expect((await focus()).desc, `${opener}: focus returned`).toBe(before.desc);
}

describe('node parameters in forms, and the keyboard on every page', () => {
  it("edits a node's parameters in the form built from its schema; the API's problems show at their fields", async () => {
    await page.goto(`${portal.base}/portal/#/workflows/${workflowId}`);
    await page.getByRole('heading', { name: 'form flow', level: 1 }).waitFor();
    const section = page.getByRole('region', { name: 'Node parameters' });
    await section.getByText('This node has no parameters.').waitFor();
    await section.getByLabel('Node', { exact: true }).selectOption('Edit Fields');
    const form = page.getByRole('form', { name: 'Parameters of Edit Fields' });
    await form.waitFor();
    // Enums as selects with their default, numbers with the default shown, the fixedCollection as entries.
    expect(await form.getByLabel('Mode', { exact: true }).inputValue()).toBe('0');
    expect(await form.locator('#param-1-mode option:checked').textContent()).toBe('manual (default)');
    // The count applies to duplicated items only (n8n's displayOptions): shown once that is ticked.
    expect(await form.getByLabel('Duplicate count').count()).toBe(0);
    await form.getByLabel('Duplicate item').check();
    expect(await form.getByLabel('Duplicate count').getAttribute('placeholder')).toBe('0');
    const assignments = form.getByRole('group', { name: 'Assignments' }).last();
    expect(await assignments.getByLabel('Name').first().inputValue()).toBe('greeting');
    // The expression stays text.
    expect(await assignments.getByLabel('Value').first().inputValue()).toBe('={{ "hello" }}');

    // A new entry takes the focus; its value is JSON (a number), its type chosen from the list.
    await assignments.getByRole('button', { name: 'Add assignment' }).click();
    const first = form.locator('#param-1-assignments_assignments_1__id');
    await expect.poll(() => first.evaluate(isFocused), { timeout: 5_000 }).toBe(true);
    await page.keyboard.press('Tab');
    await page.keyboard.type('count');
    await form.locator('#param-1-assignments_assignments_1__value').fill('{bad');
    await form.getByText(/Not JSON/).waitFor();
    await form.locator('#param-1-assignments_assignments_1__value').fill('3');
    await form.locator('#param-1-assignments_assignments_1__type').selectOption('number');
    await form.getByLabel('Dot notation').selectOption('false');

    // The server refuses a negative count: its message is shown at the field, which takes the focus.
    await form.getByLabel('Duplicate count').fill('-1');
    await form.getByRole('button', { name: 'Save Edit Fields' }).click();
    const count = form.getByLabel('Duplicate count');
    await expect.poll(() => count.getAttribute('aria-invalid'), { timeout: 8_000 }).toBe('true');
    expect(await form.locator('#param-1-duplicateCount-problem').textContent()).toContain('>= 0');
    expect(await count.evaluate(isFocused)).toBe(true);
    expect(await form.getByRole('alert').textContent()).toContain('duplicateCount: must be >= 0');
    await portal.shot('workflow-node-form-problem', page);

    await count.fill('');
    await form.getByRole('button', { name: 'Save Edit Fields' }).click();
    await form.getByRole('status').getByText('Saved.').waitFor();
    await portal.shot('workflow-node-form', page);
    const saved = await portal.p.request({ method: 'GET', url: `/api/v1/workflows/${workflowId}` });
    const set = (
      saved.json() as { nodes: Array<{ name: string; parameters: Record<string, unknown> }> }
    ).nodes.find((n) => n.name === 'Edit Fields');
    // Only what was set is written: the cleared count takes its default again; the new entry has a UUID.
    expect(set?.parameters).toEqual({
      assignments: {
        assignments: [
          { id: 'a', name: 'greeting', value: '={{ "hello" }}', type: 'string' },
          { id: expect.stringMatching(/^[0-9a-f-]{36}$/), name: 'count', value: 3, type: 'number' },
        ],
      },
      duplicateItem: true,
      options: { dotNotation: false },
    });
  }, 60_000);

  it('walks every page with Tab and Shift+Tab: every control reached, each with a visible focus ring', async () => {
    await page.goto(`${portal.base}/portal/#/keys`);
    await page.getByRole('heading', { name: 'API keys', level: 1 }).waitFor();
    await page.locator('main table').first().waitFor();
    const counts: Record<string, number> = {};
    const visit = async (label: string, heading: string | RegExp, ready?: () => Promise<unknown>) => {
      await goByKeyboard(label, heading);
      await ready?.();
      await settled();
      counts[label] = await walkMain(label);
    };
    counts.Keys = await walkMain('Keys');
    await visit('Usage', 'Usage');
    await visit('Workflows', 'Workflows', () => page.getByRole('link', { name: 'form flow' }).waitFor());
    await openByKeyboard('form flow', 'form flow');
    await page.getByRole('form', { name: /^Parameters of/ }).waitFor();
    counts.Workflow = await walkMain('Workflow');
    await visit('Executions', 'Executions', () => page.locator('main tbody tr').first().waitFor());
    await openByKeyboard('exe_', /^Execution exe_/);
    await page.locator('main details').first().waitFor();
    counts.Execution = await walkMain('Execution');
    await visit('Credentials', 'Credentials', () =>
      page.locator('tr[data-credential="kb header"]').waitFor(),
    );
    await visit('Knowledge', 'Knowledge');
    await visit('Flows', 'Flows');
    await visit('Agents', 'Agents', () => page.getByRole('link', { name: 'kb agent' }).waitFor());
    await openByKeyboard('kb agent', 'kb agent');
    counts.Agent = await walkMain('Agent chat');
    await visit('Logs', 'Request log', () => page.locator('main tbody tr').first().waitFor());
    await openByKeyboard('Model calls', 'Model calls');
    counts['Model calls'] = await walkMain('Model calls');
    await openByKeyboard('Audit trail', 'Audit trail');
    await page.locator('main tbody tr').first().waitFor();
    counts['Audit trail'] = await walkMain('Audit trail');
    await visit('Playground', 'Playground', () =>
      page.locator('main select option').first().waitFor({ state: 'attached' }),
    );
    await visit('Members', 'Members', () => page.locator('main tbody tr').first().waitFor());
    await visit('Sessions', 'Your sessions', () => page.locator('main tbody tr').first().waitFor());
    for (const [label, n] of Object.entries(counts)) expect(n, label).toBeGreaterThan(0);
  }, 300_000);

  it('opens dialogs with Enter or Space, keeps the focus in them, closes them with Escape and gives the focus back', async () => {
    await goByKeyboard('Keys', 'API keys');
    await dialogKeepsFocus('Create key', 'Enter');
    // Space works as Enter; a checkbox in the dialog is ticked with Space.
    await tabTo((f) => f.inMain && text('Create key')(f), 'Create key');
    await page.keyboard.press('Space');
    const dialog = page.locator('dialog[open]');
    await dialog.waitFor();
    await tabTo((f) => f.inDialog && f.type === 'checkbox', 'a checkbox of the dialog');
    const box = dialog.locator('input[type=checkbox]:focus');
    const was = await box.isChecked();
    await page.keyboard.press('Space');
    expect(await box.isChecked()).toBe(!was);
    await page.keyboard.press('Escape');
    await dialog.waitFor({ state: 'detached' });

    await goByKeyboard('Credentials', 'Credentials');
    await page.locator('tr[data-credential="kb header"]').waitFor();
    await dialogKeepsFocus('Share kb header', 'Enter');
    await dialogKeepsFocus('Delete kb header', ' ');

    await goByKeyboard('Workflows', 'Workflows');
    await openByKeyboard('form flow', 'form flow');
    await dialogKeepsFocus('Delete', 'Enter');
  }, 180_000);

  it('ran every page without a Content-Security-Policy refusal', () => {
    expect(portal.cspViolations).toEqual([]);
  });
});
