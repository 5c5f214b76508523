/**
 * Issue 38 item 5: knowledge, flows and agents managed in the portal, in Debian's Chromium on the built
 * bundle. The models are a fake OpenAI upstream (its answers echo the question; a script makes it call
 * a tool), the knowledge base runs on the built-in embedder. Steps share one owner and run in order.
 */
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { toolCallsThenText } from '../agents/support.js';
import { OPENAI_UPSTREAM_KEY } from '../llm/support.js';
import { type FakeLlmServer, startFakeOpenAi } from '../support/fake-llm/index.js';
import { alertText, ownerSignsIn, type PortalBrowser, startPortalBrowser } from './browser-support.js';

const MODEL = 'gpt-4o-mini';
let portal: PortalBrowser;
let openai: FakeLlmServer;
let page: Page;

beforeAll(async () => {
  openai = await startFakeOpenAi({ apiKey: OPENAI_UPSTREAM_KEY });
  portal = await startPortalBrowser({
    LLM_MODELS: JSON.stringify([
      {
        provider: 'openai',
        baseUrl: openai.url,
        name: MODEL,
        timeoutMs: 5_000,
        pricing: { inputPerMillion: 0.15, outputPerMillion: 0.6 },
      },
    ]),
    OPENAI_BASE_URL: openai.url,
    OPENAI_API_KEY: OPENAI_UPSTREAM_KEY,
  });
  page = await portal.newPage(portal.owner);
  await ownerSignsIn(portal, page, 'amber harbor kestrel 58');
}, 60_000);

afterAll(async () => {
  await portal?.close();
  await openai?.close();
}, 30_000);

const go = async (label: string, heading: string) => {
  await page
    .getByRole('navigation', { name: 'Portal' })
    .getByRole('link', { name: label, exact: true })
    .click();
  await page.getByRole('heading', { name: heading, level: 1 }).waitFor();
};

describe('knowledge, flows and agents in the portal', () => {
  it('adds a document to a topic, watches it processed, reads its chunks and tries a query with scores', async () => {
    await go('Knowledge', 'Knowledge');
    await page.getByText('No topics yet: add a document.').waitFor();
    const form = page.getByRole('form', { name: 'Add a document' });
    await form.getByLabel('Topic').fill('handbook');
    await form.getByLabel('Title').fill('Refund policy');
    await form
      .getByLabel('Content')
      .fill(
        'Refunds are paid within 14 days of the return.\n\nShipping is free above 50 euros. Parcels leave the warehouse every weekday.',
      );
    await form.getByRole('button', { name: 'Add and process' }).click();
    await form
      .getByRole('status')
      .getByText(/Refund policy is loaded/)
      .waitFor();
    // The row moves from "processing" to indexed without a reload (the page reads it again).
    const row = page.locator('tr[data-document="Refund policy"]');
    await row.getByRole('cell', { name: 'indexed', exact: true }).waitFor({ timeout: 20_000 });
    const topicRow = page.getByRole('table', { name: 'Topics' }).getByRole('row', { name: /handbook/ });
    await topicRow.waitFor();
    expect(await topicRow.textContent()).toContain('1');

    // A kind that needs an address refuses a bad one in the API's words.
    await form.getByLabel('Kind').selectOption('url');
    await form.getByLabel('Address', { exact: true }).fill('http://127.0.0.1:9/private');
    await form.getByRole('button', { name: 'Add and process' }).click();
    expect(await alertText(page)).not.toBe('');
    await form.getByLabel('Kind').selectOption('text');

    const query = page.getByRole('form', { name: 'Try a query' });
    await query.getByLabel('Query').fill('when are refunds paid');
    await query.getByLabel('In topic').selectOption('handbook');
    await query.getByRole('button', { name: 'Search' }).click();
    await query
      .getByRole('status')
      .getByText(/results in/)
      .waitFor();
    const first = query.locator('ol.hits li').first();
    expect(await first.textContent()).toContain('14 days');
    expect(await first.locator('.score').textContent()).toMatch(/score \d\.\d{4}/);
    await portal.shot('knowledge', page);

    await row.getByRole('link', { name: 'Refund policy' }).click();
    await page.getByRole('heading', { name: 'Refund policy', level: 1 }).waitFor();
    const chunks = page.getByRole('list', { name: 'Chunks' });
    await chunks.waitFor();
    expect(await chunks.textContent()).toContain('Refunds are paid within 14 days');
    await portal.shot('knowledge-document', page);
  });

  it('creates a flow, asks it a question, edits its JSON (a syntax error in words) and deletes it', async () => {
    await go('Flows', 'Flows');
    const form = page.getByRole('form', { name: 'New flow' });
    await form.getByLabel('Name', { exact: true }).fill('portal helper');
    await form.locator('select[name=model]').selectOption(MODEL);
    await form.getByLabel('System prompt').fill('Answer briefly.');
    await form.getByRole('button', { name: 'Create flow' }).click();
    await page.getByRole('heading', { name: 'portal helper', level: 1 }).waitFor();

    const ask = page.getByRole('form', { name: 'Try it' });
    await ask.getByLabel('Question').fill('hello flow');
    await ask.getByRole('button', { name: 'Ask' }).click();
    await ask.getByRole('status').getByText('Echo: hello flow').waitFor();
    await portal.shot('flow', page);

    const definition = page.getByLabel('Flow JSON');
    const text = await definition.inputValue();
    expect(JSON.parse(text)).toMatchObject({ name: 'portal helper', kind: 'llm', model: MODEL });
    await definition.fill('{ "name": ');
    await page.getByRole('button', { name: 'Save definition' }).click();
    expect(await alertText(page)).toContain('not JSON');
    await definition.fill(text.replace('"portal helper"', '"portal helper v2"'));
    await page.getByRole('button', { name: 'Save definition' }).click();
    await page.getByRole('heading', { name: 'portal helper v2', level: 1 }).waitFor();
    // A value the API refuses is named in its words.
    await definition.fill(JSON.stringify({ ...JSON.parse(text), topK: 1000 }));
    await page.getByRole('button', { name: 'Save definition' }).click();
    expect(await alertText(page)).toMatch(/topK/);

    await go('Flows', 'Flows');
    await page
      .getByRole('table', { name: 'Flows' })
      .getByRole('link', { name: 'portal helper v2' })
      .waitFor();
    await portal.shot('flows', page);
    await page.getByRole('link', { name: 'portal helper v2' }).click();
    await page.getByRole('button', { name: 'Delete flow' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Delete flow' }).click();
    await page.getByText('No flows yet.').waitFor();
  });

  it('creates an agent on the knowledge topic, chats with it and sees its retrieval step, edits memory', async () => {
    await go('Agents', 'Agents');
    const form = page.getByRole('form', { name: 'New agent' });
    await form.getByLabel('Name').fill('support agent');
    await form.locator('select[name=model]').selectOption(MODEL);
    await form.getByLabel('Knowledge topics (comma-separated)').fill('handbook');
    await form.getByLabel('Instructions').fill('Answer from the handbook.');
    await form.getByRole('button', { name: 'Create agent' }).click();
    await page.getByRole('heading', { name: 'support agent', level: 1 }).waitFor();

    const chat = page.getByRole('region', { name: 'Chat' });
    await chat.getByLabel('Message').fill('when are refunds paid');
    await chat.getByRole('button', { name: 'Send' }).click();
    await chat.getByText('Echo: when are refunds paid').waitFor();
    // The model was given the handbook passage, and the turn shows its retrieval step.
    expect(JSON.stringify(openai.requests.at(-1)?.body)).toContain('14 days');
    await chat.getByText(/\d+ steps?/).click();
    expect(await chat.locator('.steps').first().textContent()).toContain('retrieval');

    const memory = page.getByRole('region', { name: 'Memory blocks' });
    await memory.getByLabel('New block label').fill('persona');
    await memory.getByRole('button', { name: 'Add block' }).click();
    const block = memory.getByLabel(/^persona/);
    await block.fill('A patient support agent.');
    await memory.getByRole('button', { name: 'Save the persona block' }).click();
    await memory.getByText('persona (24 of').waitFor();

    const settings = page.getByRole('form', { name: 'Settings' });
    await settings.getByLabel('Instructions').fill('Answer from the handbook, in one sentence.');
    await settings.getByRole('button', { name: 'Save settings' }).click();
    await settings.getByRole('status').getByText('Saved.').waitFor();
    await portal.shot('agent', page);
    const saved = await portal.p.request({ method: 'GET', url: '/api/agents' });
    expect(saved.json().data[0]).toMatchObject({
      instructions: 'Answer from the handbook, in one sentence.',
      knowledgeTopics: ['handbook'],
    });
  });

  it('asks for approval of a tool call in the chat; approved, the turn completes', async () => {
    const created = await portal.p.request({
      method: 'POST',
      url: '/api/agents',
      payload: {
        name: 'careful agent',
        model: MODEL,
        tools: ['user_profile'],
        requiresApproval: ['user_profile'],
      },
    });
    expect(created.statusCode, created.body).toBe(201);
    await go('Agents', 'Agents');
    await page.getByRole('link', { name: 'careful agent' }).click();
    await page.getByRole('heading', { name: 'careful agent', level: 1 }).waitFor();
    toolCallsThenText(openai, { name: 'user_profile', arguments: {} });
    const chat = page.getByRole('region', { name: 'Chat' });
    await chat.getByLabel('Message').fill('who am I');
    await chat.getByRole('button', { name: 'Send' }).click();
    const waiting = page.getByRole('region', { name: 'Waiting for approval' });
    await waiting.waitFor();
    await portal.shot('agent-approval', page);
    // Keyboard only: the approve button is reached and pressed without the mouse.
    await waiting.getByRole('button', { name: 'Approve user_profile' }).focus();
    await page.keyboard.press('Enter');
    await waiting.waitFor({ state: 'detached' });
    const answer = chat.locator('li.assistant').filter({ hasText: 'user_profile' });
    await answer.waitFor();
    expect(await answer.textContent()).toMatch(/careful agent:\s*Echo: who am I/);
  });

  it('lists the model calls with tokens, first token and cost, and prices tokens per model on Usage', async () => {
    await go('Logs', 'Request log');
    await page.getByRole('navigation', { name: 'Logs' }).getByRole('link', { name: 'Model calls' }).click();
    await page.getByRole('heading', { name: 'Model calls', level: 1 }).waitFor();
    const calls = page.getByRole('table', { name: 'Model calls' });
    const first = calls.locator('tbody tr').first();
    await first.waitFor();
    expect(await first.textContent()).toMatch(/gpt-4o-mini.*success.*ms.*\$0\.0000\d+/);
    await page.getByLabel('Status').selectOption('error');
    await page.getByText('No model calls match.').waitFor();
    await portal.shot('model-calls', page);

    // Usage counts tokens per key: a program's call with the owner's key.
    const called = await portal.p.request({
      method: 'POST',
      url: '/v1/chat/completions',
      payload: { model: MODEL, messages: [{ role: 'user', content: 'a priced call' }] },
    });
    expect(called.statusCode, called.body).toBe(200);
    await go('Usage', 'Usage');
    const perModel = page.locator('table', { has: page.getByRole('columnheader', { name: 'Cost (USD)' }) });
    const row = perModel.getByRole('row', { name: /gpt-4o-mini/ });
    await row.waitFor();
    expect(await row.textContent()).toMatch(/\$0\.0000\d+/);
  });

  it('listens for a test webhook on a workflow and opens the run when the call comes', async () => {
    const created = await portal.p.request({
      method: 'POST',
      url: '/api/v1/workflows',
      payload: {
        name: 'portal hook',
        nodes: [
          {
            id: 'w',
            webhookId: 'portal-hook',
            name: 'Webhook',
            type: 'n8n-nodes-base.webhook',
            typeVersion: 2,
            position: [0, 0],
            parameters: { httpMethod: 'POST', path: 'portal-hook', responseMode: 'lastNode', options: {} },
          },
          {
            id: 's',
            name: 'Edit Fields',
            type: 'n8n-nodes-base.set',
            typeVersion: 3.4,
            position: [200, 0],
            parameters: {
              assignments: {
                assignments: [{ id: 'a', name: 'mode', value: '={{ $execution.mode }}', type: 'string' }],
              },
              options: {},
            },
          },
        ],
        connections: { Webhook: { main: [[{ node: 'Edit Fields', type: 'main', index: 0 }]] } },
        settings: {},
      },
    });
    expect(created.statusCode, created.body).toBe(201);
    const id = (created.json() as { id: string }).id;
    await page.goto(`${portal.base}/portal/#/workflows/${id}`);
    await page.getByRole('heading', { name: 'portal hook', level: 1 }).waitFor();
    await page.getByRole('button', { name: 'Listen for test webhook' }).click();
    const waiting = page.getByRole('status').filter({ hasText: 'Waiting for one call' });
    await waiting.waitFor();
    const shown = (await waiting.locator('code').first().textContent()) ?? '';
    expect(shown).toBe(`POST ${portal.base}/webhook-test/portal-hook`);
    const res = await fetch(`${portal.base}/webhook-test/portal-hook`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"hello":"portal"}',
    });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ mode: 'test' });
    // The page opens the run by itself, its nodes listed.
    await page.getByRole('heading', { name: /^Execution exe_/, level: 1 }).waitFor({ timeout: 15_000 });
    await page.locator('summary', { hasText: 'Edit Fields: 1 run' }).waitFor();
    expect(page.url()).toContain('#/executions/exe_');
  });

  it('ran every page without a Content-Security-Policy refusal', () => {
    expect(portal.cspViolations).toEqual([]);
  });
});
