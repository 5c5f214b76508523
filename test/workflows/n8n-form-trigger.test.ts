import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FORM_ATTRIBUTION } from '../../src/modules/workflows/webhooks/form-page.js';
import type { TestPlatform } from '../helpers/platform.js';
import { testDialects } from '../helpers/services.js';
import { activate, createWorkflow, settled, workflowPlatform } from './support.js';

/** n8n's Form Trigger as n8n exports it (v2.2), followed by a Set node reading the submitted fields. */
function formExport(path: string, extra: Record<string, unknown> = {}) {
  return {
    name: `form ${path}`,
    nodes: [
      {
        id: 'f0000000-0000-4000-8000-000000000001',
        name: 'On form submission',
        type: 'n8n-nodes-base.formTrigger',
        typeVersion: 2.2,
        position: [0, 0],
        webhookId: 'f0000000-0000-4000-8000-00000000abcd',
        parameters: {
          formTitle: 'Contact <us>',
          formDescription: 'We answer "soon" & gladly',
          formFields: {
            values: [
              { fieldLabel: 'Name', requiredField: true, placeholder: 'Ada' },
              { fieldLabel: 'Age', fieldType: 'number' },
              { fieldLabel: 'Email', fieldType: 'email', requiredField: true },
              {
                fieldLabel: 'Topics',
                fieldType: 'checkbox',
                fieldOptions: { values: [{ option: 'Sales' }, { option: 'Support' }] },
              },
              {
                fieldLabel: 'Plan',
                fieldType: 'dropdown',
                fieldOptions: { values: [{ option: 'Free' }, { option: 'Pro' }] },
              },
              { fieldLabel: 'Source', fieldType: 'hiddenField', fieldName: 'source', fieldValue: 'site' },
            ],
          },
          options: { path, buttonLabel: 'Send' },
          ...extra,
        },
      },
      {
        id: 'f0000000-0000-4000-8000-000000000002',
        name: 'Edit Fields',
        type: 'n8n-nodes-base.set',
        typeVersion: 3.4,
        position: [200, 0],
        parameters: {
          assignments: {
            assignments: [{ id: 'a', name: 'greeting', value: '=Hello {{ $json.Name }}', type: 'string' }],
          },
          includeOtherFields: true,
          options: {},
        },
      },
    ],
    connections: {
      'On form submission': { main: [[{ node: 'Edit Fields', type: 'main', index: 0 }]] },
    },
    settings: { executionOrder: 'v1' },
  };
}

/** n8n's editor starts customCss from its variables; this one also tries to end its style element. */
const STYLED_CSS = ':root{--color-submit-btn-bg:#0a0}</style><script>alert(1)</script><img src=x>';

const form = (fields: Record<string, string | string[]>) => {
  const body = new URLSearchParams();
  for (const [k, v] of Object.entries(fields)) for (const one of [v].flat()) body.append(k, one);
  return body.toString();
};

describe.each(await testDialects())("n8n's Form Trigger on %s", (dialect) => {
  let p: TestPlatform;
  let lastNodeId: string;
  beforeAll(async () => {
    p = await workflowPlatform(dialect);
    await activate(p, await createWorkflow(p, formExport('contact')));
    lastNodeId = await createWorkflow(p, formExport('contact-last', { responseMode: 'lastNode' }));
    await activate(p, lastNodeId);
    await activate(
      p,
      await createWorkflow(
        p,
        formExport('styled', {
          options: { path: 'styled', customCss: STYLED_CSS, appendAttribution: false, ignoreBots: true },
        }),
      ),
    );
  });
  afterAll(() => p.close());

  const post = (url: string, payload: string, type = 'application/x-www-form-urlencoded') =>
    p.request({ method: 'POST', url, key: null, headers: { 'content-type': type }, payload });

  it('serves the page at /form/{path}, every text escaped, no script, styles by nonce only', async () => {
    const res = await p.request({ method: 'GET', url: '/form/contact', key: null });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toContain('text/html');
    const csp = String(res.headers['content-security-policy']);
    expect(csp).toContain("default-src 'none'");
    expect(csp).toMatch(/style-src 'nonce-[A-Za-z0-9+/=]+'/);
    expect(res.body).toContain('Contact &lt;us&gt;');
    expect(res.body).toContain('We answer &quot;soon&quot; &amp; gladly');
    expect(res.body).not.toContain('<us>');
    expect(res.body).not.toContain('<script');
    expect(res.body).toContain('name="field-0"');
    expect(res.body).toContain('type="email"');
    expect(res.body).toContain('>Send</button>');
  });

  it('starts the workflow with the submission as n8n makes it, and shows the submitted page', async () => {
    const res = await post(
      '/form/contact',
      form({
        'field-0': 'Ada',
        'field-1': '36',
        'field-2': 'ada@example.com',
        'field-3': ['Sales', 'Support'],
      }),
    );
    expect(res.statusCode, res.body).toBe(200);
    expect(res.body).toContain('Form Submitted');
    const list = (await p.request({ method: 'GET', url: '/api/v1/executions?limit=1' })).json() as {
      data: Array<{ id: string }>;
    };
    await settled(p, list.data[0]?.id ?? '');
    const full = (
      await p.request({ method: 'GET', url: `/api/v1/executions/${list.data[0]?.id}?includeData=true` })
    ).json() as { data: { resultData: { runData: Record<string, Array<{ data: { main: unknown[][] } }>> } } };
    const item = (
      full.data.resultData.runData['Edit Fields']?.[0]?.data.main[0]?.[0] as
        | { json: Record<string, unknown> }
        | undefined
    )?.json;
    expect(item).toMatchObject({
      Name: 'Ada',
      Age: 36,
      Email: 'ada@example.com',
      Topics: ['Sales', 'Support'],
      Plan: null, // not in the post at all: null, as n8n
      source: 'site',
      formMode: 'production',
      greeting: 'Hello Ada',
    });
    expect(Date.parse(String(item?.submittedAt))).not.toBeNaN();
  });

  it('answers a refused submission with the page again, each problem next to its field (400)', async () => {
    const res = await post(
      '/form/contact',
      form({ 'field-1': 'many', 'field-2': 'nope', 'field-4': 'Gold' }),
    );
    expect(res.statusCode).toBe(400);
    expect(res.headers['content-type']).toContain('text/html');
    expect(res.body).toContain('This field is required');
    expect(res.body).toContain('Enter a number');
    expect(res.body).toContain('Enter a valid email address');
    expect(res.body).toContain('Choose one of the options');
    // The values given are kept, escaped.
    const xss = await post('/form/contact', form({ 'field-0': '"><script>x</script>', 'field-2': 'bad' }));
    expect(xss.statusCode).toBe(400);
    expect(xss.body).not.toContain('<script>');
    expect(xss.body).toContain('&quot;&gt;&lt;script&gt;');
  });

  it('takes a JSON object keyed by label and answers JSON; refuses other bodies and oversized ones', async () => {
    const ok = await post(
      '/form/contact-last',
      JSON.stringify({ Name: 'Bo', Email: 'bo@example.com' }),
      'application/json',
    );
    expect(ok.statusCode, ok.body).toBe(200);
    expect(ok.json()).toMatchObject({ Name: 'Bo', greeting: 'Hello Bo', formMode: 'production' });
    const bad = await post('/form/contact-last', JSON.stringify({ Email: 'x' }), 'application/json');
    expect(bad.statusCode).toBe(400);
    expect(JSON.stringify(bad.json())).toContain('This field is required');
    expect((await post('/form/contact', 'plain', 'text/plain')).statusCode).toBe(415);
    const huge = await post('/form/contact', form({ 'field-0': 'x'.repeat(300_000) }));
    expect(huge.statusCode).toBe(413);
  });

  it('keeps forms and webhooks apart, and serves /form-test/ for one submission after listen', async () => {
    expect((await p.request({ method: 'GET', url: '/webhook/contact', key: null })).statusCode).toBe(404);
    expect((await p.request({ method: 'GET', url: '/form/nothing-here', key: null })).statusCode).toBe(404);
    const id = await createWorkflow(p, formExport('contact-test'));
    expect((await p.request({ method: 'GET', url: '/form-test/contact-test', key: null })).statusCode).toBe(
      404,
    );
    expect(
      (await p.request({ method: 'POST', url: `/api/v1/workflows/${id}/listen` })).statusCode,
    ).toBeLessThan(300);
    expect((await p.request({ method: 'GET', url: '/form-test/contact-test', key: null })).statusCode).toBe(
      200,
    );
    const res = await post('/form-test/contact-test', form({ 'field-0': 'T', 'field-2': 't@example.com' }));
    expect(res.statusCode, res.body).toBe(200);
    expect(
      (await post('/form-test/contact-test', form({ 'field-0': 'T', 'field-2': 't@example.com' })))
        .statusCode,
    ).toBe(404);
  });

  it("applies customCss after the page's style, by its nonce and inert; without it, none", async () => {
    const plain = await p.request({ method: 'GET', url: '/form/contact', key: null });
    expect(plain.body.match(/<style /g)).toHaveLength(1);
    const res = await p.request({ method: 'GET', url: '/form/styled', key: null });
    expect(res.statusCode).toBe(200);
    const csp = String(res.headers['content-security-policy']);
    expect(csp).not.toContain('unsafe-inline');
    const nonce = /style-src 'nonce-([^']+)'/.exec(csp)?.[1];
    const styles = [...res.body.matchAll(/<style nonce="([^"]+)">/g)].map((m) => m[1]);
    expect(styles).toEqual([nonce, nonce]);
    expect(res.body).toContain(':root{--color-submit-btn-bg:#0a0}');
    // The payload cannot end the style element: no script, no image, only the page's own markup.
    expect(res.body).not.toContain('<script');
    expect(res.body).not.toContain('<img');
    expect(res.body).toContain('\\3C /style>\\3C script>');
  });

  it('shows the attribution line by default, not with appendAttribution false', async () => {
    const shown = await p.request({ method: 'GET', url: '/form/contact', key: null });
    expect(shown.body).toContain(`<p class="attribution">${FORM_ATTRIBUTION}</p>`);
    const hidden = await p.request({ method: 'GET', url: '/form/styled', key: null });
    expect(hidden.statusCode).toBe(200);
    expect(hidden.body).not.toContain(FORM_ATTRIBUTION);
    // The submitted page follows the option as well.
    const done = await post('/form/contact', form({ 'field-0': 'Ada', 'field-2': 'ada@example.com' }));
    expect(done.body).toContain('Form Submitted');
    expect(done.body).toContain(FORM_ATTRIBUTION);
  });

  it("ignoreBots: a bot's page and submission get n8n's 401; a browser passes; without the option a bot passes", async () => {
    const bot = { 'user-agent': 'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)' };
    const browser = {
      'user-agent':
        'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36',
    };
    const submission = form({ 'field-0': 'Ada', 'field-2': 'ada@example.com' });
    const postAs = (url: string, headers: Record<string, string>) =>
      p.request({
        method: 'POST',
        url,
        key: null,
        headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
        payload: submission,
      });
    const count = async () =>
      (
        (await p.request({ method: 'GET', url: '/api/v1/executions?limit=250' })).json() as {
          data: unknown[];
        }
      ).data.length;
    const before = await count();
    for (const refused of [
      await p.request({ method: 'GET', url: '/form/styled', key: null, headers: bot }),
      await postAs('/form/styled', bot),
    ]) {
      expect(refused.statusCode).toBe(401);
      expect(refused.headers['www-authenticate']).toBe('Basic realm="Enter credentials"');
      expect(refused.json()).toMatchObject({ code: 'UNAUTHORIZED' });
      expect(refused.json().message).toContain('ignoreBots');
    }
    expect(await count()).toBe(before);
    expect(
      (await p.request({ method: 'GET', url: '/form/styled', key: null, headers: browser })).statusCode,
    ).toBe(200);
    expect((await postAs('/form/styled', browser)).statusCode).toBe(200);
    // The option off (the default): a bot is served as anyone.
    expect(
      (await p.request({ method: 'GET', url: '/form/contact', key: null, headers: bot })).statusCode,
    ).toBe(200);
    expect((await postAs('/form/contact', bot)).statusCode).toBe(200);
  });

  it('refuses at save page options given as expressions: they shape the page before any item', async () => {
    const body = formExport('styled-expr', {
      options: { path: 'styled-expr', customCss: '={{ $json.css }}', ignoreBots: '={{ true }}' },
    });
    const res = await p.request({ method: 'POST', url: '/api/v1/workflows', payload: body });
    expect(res.statusCode).toBe(400);
    expect(res.body).toContain('parameters.options.customCss');
    expect(res.body).toContain('parameters.options.ignoreBots');
  });

  it('refuses at save what the page cannot serve, naming the field', async () => {
    const body = formExport('contact-file');
    const fields = (
      (body.nodes[0] as { parameters: unknown }).parameters as {
        formFields: { values: Array<Record<string, unknown>> };
      }
    ).formFields;
    fields.values.push({ fieldLabel: 'Intro', fieldType: 'html' }, { fieldLabel: 'Name' });
    const res = await p.request({ method: 'POST', url: '/api/v1/workflows', payload: body });
    expect(res.statusCode).toBe(400);
    const text = JSON.stringify(res.json());
    expect(text).toContain("'html' fields are not served here");
    expect(text).toContain("'Name' is used twice");
  });
});
