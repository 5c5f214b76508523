import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FORM_ATTRIBUTION } from '../../src/modules/workflows/webhooks/form-page.js';
import type { TestPlatform } from '../helpers/platform.js';
import { testDialects } from '../helpers/services.js';
import { activate, createWorkflow, otherAccountKey, settled, workflowPlatform } from './support.js';

const node = (name: string, type: string, typeVersion: number, parameters: Record<string, unknown>) => ({
  id: `n-${name.toLowerCase().replace(/\W+/g, '-')}`,
  name,
  type,
  typeVersion,
  position: [0, 0],
  parameters,
});

/** n8n's multi-page form: Form Trigger → Form page → Form page → Form ending → Set, as n8n exports it. */
function multiPage(path: string) {
  const names = ['On form submission', 'Page 1', 'Page 2', 'Ending', 'Collect'];
  return {
    name: `form pages ${path}`,
    nodes: [
      node(names[0] as string, 'n8n-nodes-base.formTrigger', 2.2, {
        formTitle: 'Start',
        formFields: { values: [{ fieldLabel: 'Name', requiredField: true }] },
        options: { path },
      }),
      node(names[1] as string, 'n8n-nodes-base.form', 1, {
        formFields: {
          values: [
            { fieldLabel: 'Age <years>', fieldType: 'number', requiredField: true },
            {
              fieldLabel: 'Plan',
              fieldType: 'dropdown',
              fieldOptions: { values: [{ option: 'Free' }, { option: 'Pro' }] },
            },
          ],
        },
        options: { formTitle: '=Hello {{ $json.Name }}', buttonLabel: 'Next' },
      }),
      node(names[2] as string, 'n8n-nodes-base.form', 1, {
        formFields: { values: [{ fieldLabel: 'Email', fieldType: 'email', requiredField: true }] },
        options: { formTitle: 'Contact' },
      }),
      node(names[3] as string, 'n8n-nodes-base.form', 1, {
        operation: 'completion',
        completionTitle: 'Thanks!',
        completionMessage: '={{ $json.Email }} & co',
        options: {},
      }),
      node(names[4] as string, 'n8n-nodes-base.set', 3.4, {
        assignments: {
          assignments: [
            {
              id: 'a',
              name: 'name',
              value: "={{ $('On form submission').first().json.Name }}",
              type: 'string',
            },
            { id: 'b', name: 'age', value: "={{ $('Page 1').first().json['Age <years>'] }}", type: 'number' },
            { id: 'c', name: 'email', value: '={{ $json.Email }}', type: 'string' },
          ],
        },
        options: {},
      }),
    ],
    connections: Object.fromEntries(
      names.slice(0, -1).map((n, i) => [n, { main: [[{ node: names[i + 1], type: 'main', index: 0 }]] }]),
    ),
    settings: { executionOrder: 'v1' },
  };
}

describe.each(await testDialects())("n8n's Form node on %s", (dialect) => {
  let p: TestPlatform;
  let otherKey: string;
  beforeAll(async () => {
    p = await workflowPlatform(dialect);
    await activate(p, await createWorkflow(p, multiPage('pages')));
    otherKey = await otherAccountKey(p);
    const theirs = await createWorkflow(p, multiPage('their-pages'), otherKey);
    const res = await p.request({
      method: 'POST',
      url: `/api/v1/workflows/${theirs}/activate`,
      key: otherKey,
    });
    expect(res.statusCode, res.body).toBe(200);
  });
  afterAll(() => p.close());

  /** Submits the trigger's form, then the execution's first form page (its signed URL, at /form-waiting/). */
  async function start(path: string, key?: string): Promise<{ executionId: string; url: string }> {
    const res = await p.request({
      method: 'POST',
      url: `/form/${path}`,
      key: null,
      payload: { Name: 'Ada' },
    });
    expect(res.statusCode, res.body).toBe(200);
    const list = (
      await p.request({ method: 'GET', url: '/api/v1/executions?limit=1', ...(key ? { key } : {}) })
    ).json() as { data: Array<{ id: string }> };
    const executionId = list.data[0]?.id ?? '';
    const end = Date.now() + 20_000;
    for (;;) {
      const view = (
        await p.request({ method: 'GET', url: `/api/v1/executions/${executionId}`, ...(key ? { key } : {}) })
      ).json() as { status: string; resumeUrl?: string | null };
      if (view.status === 'waiting' && view.resumeUrl) {
        const resume = new URL(view.resumeUrl);
        return {
          executionId,
          url: `${resume.pathname.replace('/webhook-waiting/', '/form-waiting/')}${resume.search}`,
        };
      }
      if (!['new', 'running'].includes(view.status) || Date.now() > end)
        throw new Error(`not waiting at a form: ${JSON.stringify(view)}`);
      await new Promise((r) => setImmediate(r));
    }
  }

  /** GETs a page until the execution has reached it (the pending page reloads itself meanwhile). */
  async function pageAt(url: string): Promise<string> {
    const end = Date.now() + 20_000;
    for (;;) {
      const res = await p.request({ method: 'GET', url, key: null });
      expect(res.statusCode, res.body).toBe(200);
      if (!res.body.includes('http-equiv="refresh"')) return res.body;
      if (Date.now() > end) throw new Error(`page ${url} never came`);
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  it('runs a two-page form end to end over HTTP: pages, submissions, ending, the items as n8n makes them', async () => {
    const { executionId, url } = await start('pages');
    const first = await pageAt(url);
    expect(first).toContain('Hello Ada');
    expect(first).toContain('Age &lt;years&gt;');
    expect(first).not.toContain('<years>');
    expect(first).toContain('>Next</button>');

    const refused = await p.request({
      method: 'POST',
      url,
      key: null,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: 'field-0=old&field-1=Gold',
    });
    expect(refused.statusCode).toBe(400);
    expect(refused.body).toContain('Enter a number');

    const submitted = await p.request({
      method: 'POST',
      url,
      key: null,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: 'field-0=36&field-1=Pro',
    });
    expect(submitted.statusCode, submitted.body).toBe(303);
    const second = String(submitted.headers.location);
    expect(second).toMatch(new RegExp(`^/form-waiting/${executionId}\\?signature=1\\.`));
    expect(await pageAt(second)).toContain('type="email"');

    const bad = await p.request({ method: 'POST', url: second, key: null, payload: { Email: 'nope' } });
    expect(bad.statusCode).toBe(400);
    expect(bad.json()).toMatchObject({ code: 'VALIDATION_ERROR' });
    const json = await p.request({
      method: 'POST',
      url: second,
      key: null,
      payload: { Email: 'ada@example.com' },
    });
    expect(json.statusCode, json.body).toBe(200);
    const { next } = json.json() as { next: string };
    const ending = await pageAt(next);
    expect(ending).toContain('Thanks!');
    expect(ending).toContain('ada@example.com &amp; co');

    const done = await settled(p, executionId, 20_000, ['waiting']);
    expect(done.status).toBe('success');
    const runData = (
      done.data as {
        resultData: { runData: Record<string, Array<{ data: { main: Array<Array<{ json: unknown }>> } }>> };
      }
    ).resultData.runData;
    expect(runData['Page 1']?.[0]?.data.main[0]?.[0]?.json).toMatchObject({
      'Age <years>': 36,
      Plan: 'Pro',
      formMode: 'production',
    });
    expect(runData.Collect?.[0]?.data.main[0]?.[0]?.json).toMatchObject({
      name: 'Ada',
      age: 36,
      email: 'ada@example.com',
    });

    // Every page is spent once the execution went on: resubmitting, reloading the ending, 404.
    for (const again of [url, second])
      expect(
        (await p.request({ method: 'POST', url: again, key: null, payload: { Email: 'x@example.com' } }))
          .statusCode,
      ).toBe(404);
    expect((await p.request({ method: 'GET', url: next, key: null })).statusCode).toBe(404);
  });

  it("sends the trigger page's post on to the first Form page (303), as n8n does", async () => {
    const res = await p.request({
      method: 'POST',
      url: '/form/pages',
      key: null,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: 'field-0=Grace',
    });
    expect(res.statusCode, res.body).toBe(303);
    const location = String(res.headers.location);
    expect(location).toMatch(/^\/form-waiting\/[^?]+\?signature=0\./);
    expect(await pageAt(location)).toContain('Hello Grace');
  });

  it('refuses an unknown execution (404), a missing signature (401), an oversize body (413)', async () => {
    const signed = p.ctx.apis.workflows?.runner.resumeUrl('exe_unknown', 0).split('?')[1];
    const unknown = await p.request({ method: 'GET', url: `/form-waiting/exe_unknown?${signed}`, key: null });
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json()).toMatchObject({ code: 'EXECUTION_NOT_FOUND' });
    expect((await p.request({ method: 'GET', url: '/form-waiting/exe_unknown', key: null })).statusCode).toBe(
      401,
    );

    const { url } = await start('pages');
    const huge = await p.request({
      method: 'POST',
      url,
      key: null,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: `field-0=${'9'.repeat(3 * 1024 * 1024)}`,
    });
    expect(huge.statusCode).toBe(413);
    // The page is still there: nothing was taken.
    expect(await pageAt(url)).toContain('Hello Ada');
  });

  it("keeps another account's form out of reach: its signature opens nothing of ours, its API sees nothing", async () => {
    const ours = await start('pages');
    const theirs = await start('their-pages', otherKey);
    expect(theirs.executionId).not.toBe(ours.executionId);
    const signature = theirs.url.split('?')[1];
    const crossed = await p.request({
      method: 'GET',
      url: `/form-waiting/${ours.executionId}?${signature}`,
      key: null,
    });
    expect(crossed.statusCode).toBe(403);
    const view = await p.request({
      method: 'GET',
      url: `/api/v1/executions/${ours.executionId}`,
      key: otherKey,
    });
    expect(view.statusCode).toBe(404);
    expect(await pageAt(theirs.url)).toContain('Hello Ada');
  });

  it('serves a page whose fields are defined as JSON (defineForm: json), from an expression too', async () => {
    const body = multiPage('json-page');
    const fields = [
      {
        fieldLabel: 'Colour',
        fieldType: 'dropdown',
        fieldOptions: { values: [{ option: 'Red' }, { option: 'Blue' }] },
        requiredField: true,
      },
    ];
    Object.assign(body.nodes[1]?.parameters as object, {
      defineForm: 'json',
      jsonOutput: `={{ ${JSON.stringify(JSON.stringify(fields))} }}`,
      formFields: { values: [] },
    });
    // Page 2 and the Set read fields this test does not ask: the ending goes straight after Page 1.
    body.connections['Page 1'] = { main: [[{ node: 'Ending', type: 'main', index: 0 }]] };
    delete body.connections['Page 2'];
    body.nodes.splice(2, 1);
    await activate(p, await createWorkflow(p, body));
    const { executionId, url } = await start('json-page');
    const page = await pageAt(url);
    expect(page).toContain('Colour');
    expect(page).toContain('>Blue</option>');
    const missing = await p.request({ method: 'POST', url, key: null, payload: {} });
    expect(missing.statusCode).toBe(400);
    const sent = await p.request({ method: 'POST', url, key: null, payload: { Colour: 'Blue' } });
    expect(sent.statusCode, sent.body).toBe(200);
    await pageAt((sent.json() as { next: string }).next);
    const done = await settled(p, executionId, 20_000, ['waiting']);
    expect(done.status).toBe('success');
    const runData = (
      done.data as {
        resultData: { runData: Record<string, Array<{ data: { main: Array<Array<{ json: unknown }>> } }>> };
      }
    ).resultData.runData;
    expect(runData['Page 1']?.[0]?.data.main[0]?.[0]?.json).toMatchObject({ Colour: 'Blue' });
  });

  /** Form Trigger (path) → `between` → a Form ending with `ending` parameters, activated. */
  async function endingFlow(
    path: string,
    ending: Record<string, unknown>,
    between?: ReturnType<typeof node>,
  ) {
    const trigger = node('On form submission', 'n8n-nodes-base.formTrigger', 2.2, {
      formTitle: 'Start',
      formFields: { values: [{ fieldLabel: 'Name', requiredField: true }] },
      options: { path },
    });
    const end = node('Ending', 'n8n-nodes-base.form', 1, { operation: 'completion', options: {}, ...ending });
    const nodes = between ? [trigger, between, end] : [trigger, end];
    const connections = Object.fromEntries(
      nodes
        .slice(0, -1)
        .map((n, i) => [n.name, { main: [[{ node: nodes[i + 1]?.name, type: 'main', index: 0 }]] }]),
    );
    await activate(p, await createWorkflow(p, { name: `ending ${path}`, nodes, connections, settings: {} }));
  }

  it("shows the node's text as the ending (showText), sandboxed: no script, no form, no cookie of the site", async () => {
    await endingFlow('show-text', {
      respondWith: 'showText',
      responseText: '=<h1>Hi {{ $json.Name }}</h1><script>alert(1)</script>',
    });
    const { executionId, url } = await start('show-text');
    const res = await p.request({ method: 'GET', url, key: null });
    expect(res.statusCode).toBe(200);
    expect(res.body).toContain('<h1>Hi Ada</h1>');
    const csp = String(res.headers['content-security-policy']);
    expect(csp).toMatch(/^sandbox;/);
    expect(csp).toContain("default-src 'none'");
    expect(csp).not.toContain('script-src');
    expect((await settled(p, executionId, 20_000, ['waiting'])).status).toBe('success');
  });

  it("returns the input item's file as the ending (returnBinary), a download; without one the node fails", async () => {
    const toFile = node('To File', 'n8n-nodes-base.convertToFile', 1.1, {
      operation: 'toJson',
      options: { fileName: 'answers.json' },
    });
    await endingFlow('return-binary', { respondWith: 'returnBinary' }, toFile);
    const { executionId, url } = await start('return-binary');
    const res = await p.request({ method: 'GET', url, key: null });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.headers['content-disposition']).toBe('attachment; filename="answers.json"');
    expect(res.body).toContain('"Name"');
    expect(res.body).toContain('Ada');
    expect((await settled(p, executionId, 20_000, ['waiting'])).status).toBe('success');

    // No binary on the input: the ending fails the execution, naming the property.
    await endingFlow('no-binary', { respondWith: 'returnBinary', inputDataFieldName: 'file' });
    await p.request({ method: 'POST', url: '/form/no-binary', key: null, payload: { Name: 'Ada' } });
    const list = (await p.request({ method: 'GET', url: '/api/v1/executions?limit=1' })).json() as {
      data: Array<{ id: string }>;
    };
    const failed = await settled(p, list.data[0]?.id ?? '', 20_000, ['new', 'running']);
    expect(failed.status).toBe('error');
    expect(JSON.stringify(failed.data)).toContain("no binary property 'file'");
  });

  /** Form Trigger (`version`, `options`) → one Form page (`pageOptions`), in the zone `timezone`, active. */
  async function zonedFlow(
    path: string,
    version: number,
    options: Record<string, unknown>,
    pageOptions: Record<string, unknown> = {},
  ) {
    const nodes = [
      node('On form submission', 'n8n-nodes-base.formTrigger', version, {
        formTitle: 'Start',
        formFields: { values: [{ fieldLabel: 'Name', requiredField: true }] },
        options: { path, ...options },
      }),
      node('Page', 'n8n-nodes-base.form', 2.3, {
        formFields: { values: [{ fieldLabel: 'Colour' }] },
        options: { formTitle: 'More', ...pageOptions },
      }),
    ];
    const connections = { 'On form submission': { main: [[{ node: 'Page', type: 'main', index: 0 }]] } };
    const settings = { executionOrder: 'v1', timezone: 'Asia/Kolkata' };
    await activate(p, await createWorkflow(p, { name: `zoned ${path}`, nodes, connections, settings }));
  }

  /** Runs a zoned flow through its page; the trigger's and the page's `submittedAt`. */
  async function submittedAts(path: string): Promise<[string, string]> {
    const { executionId, url } = await start(path);
    await pageAt(url);
    const sent = await p.request({ method: 'POST', url, key: null, payload: { Colour: 'Red' } });
    expect(sent.statusCode, sent.body).toBe(200);
    const done = await settled(p, executionId, 20_000, ['waiting']);
    expect(done.status).toBe('success');
    const runData = (
      done.data as {
        resultData: {
          runData: Record<string, Array<{ data: { main: Array<Array<{ json: { submittedAt: string } }>> } }>>;
        };
      }
    ).resultData.runData;
    const at = (name: string) => String(runData[name]?.[0]?.data.main[0]?.[0]?.json.submittedAt);
    return [at('On form submission'), at('Page')];
  }

  it("writes a Form page's submittedAt in the zone its trigger uses, as n8n's Form node does", async () => {
    // Trigger v2.2: the workflow's zone by default, for the trigger and for the page.
    await zonedFlow('zoned-default', 2.2, {});
    for (const at of await submittedAts('zoned-default')) {
      expect(at).toMatch(/\+05:30$/);
      expect(Date.parse(at)).not.toBeNaN();
    }
    // Trigger v2: UTC by default, for both.
    await zonedFlow('utc-default', 2, {});
    for (const at of await submittedAts('utc-default')) expect(at).toMatch(/Z$/);
    // The trigger's option decides either way.
    await zonedFlow('zoned-asked', 2, { useWorkflowTimezone: true });
    for (const at of await submittedAts('zoned-asked')) expect(at).toMatch(/\+05:30$/);
    await zonedFlow('utc-asked', 2.2, { useWorkflowTimezone: false });
    for (const at of await submittedAts('utc-asked')) expect(at).toMatch(/Z$/);
  });

  it("styles a Form page with its customCss, and shows the attribution line as its trigger's option says", async () => {
    await zonedFlow('page-plain', 2.2, {});
    const plain = await pageAt((await start('page-plain')).url);
    expect(plain).toContain(FORM_ATTRIBUTION);
    expect(plain.match(/<style /g)).toHaveLength(1);

    await zonedFlow(
      'page-styled',
      2.2,
      { appendAttribution: false },
      { customCss: ':root{--color-submit-btn-bg:#0a0}</style><script>alert(1)</script>' },
    );
    const styled = await pageAt((await start('page-styled')).url);
    expect(styled).not.toContain(FORM_ATTRIBUTION);
    expect(styled.match(/<style /g)).toHaveLength(2);
    expect(styled).toContain(':root{--color-submit-btn-bg:#0a0}\\3C /style>\\3C script>');
    expect(styled).not.toContain('<script');
  });

  it('refuses at save JSON fields that are not fields, naming them', async () => {
    const body = multiPage('refused');
    Object.assign(body.nodes[1]?.parameters as object, {
      defineForm: 'json',
      jsonOutput: '[{"fieldLabel": 1}]',
    });
    const res = await p.request({ method: 'POST', url: '/api/v1/workflows', payload: body });
    expect(res.statusCode).toBe(400);
    expect(res.body).toContain('jsonOutput');
    expect(res.body).toContain('/0/fieldLabel');
  });
});
