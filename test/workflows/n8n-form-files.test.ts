import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FormInfo } from '../../src/modules/workflows/engine/index.js';
import {
  MAX_FORM_PARTS,
  submissionFromMultipart,
} from '../../src/modules/workflows/webhooks/form-submission.js';
import { listeningPlatform } from '../helpers/listening.js';
import type { TestPlatform } from '../helpers/platform.js';
import { testDialects } from '../helpers/services.js';
import { activate, createWorkflow, settled } from './support.js';

/**
 * Form file fields and the n8n versions around them, over real HTTP: submissions are `fetch` with
 * `FormData` (multipart, as n8n's own page script posts), read against the listening platform.
 */
const node = (name: string, type: string, typeVersion: number, parameters: Record<string, unknown>) => ({
  id: `n-${name.toLowerCase().replace(/\W+/g, '-')}`,
  name,
  type,
  typeVersion,
  position: [0, 0],
  parameters,
});

const UPLOAD_LIMIT = 65_536;

/** A Form Trigger with a text field, one file field and one that takes several, then a Set node. */
function uploadForm(path: string, version: number, extra: Record<string, unknown> = {}) {
  return {
    name: `uploads ${path}`,
    nodes: [
      node('On form submission', 'n8n-nodes-base.formTrigger', version, {
        formTitle: 'Apply',
        formFields: {
          values: [
            { fieldLabel: 'Name', requiredField: true },
            {
              fieldLabel: 'CV file',
              fieldType: 'file',
              multipleFiles: false,
              acceptFileTypes: '.pdf, .txt',
              requiredField: true,
            },
            { fieldLabel: 'Samples', fieldType: 'file' },
          ],
        },
        ...(version < 2 ? { path } : { options: { path } }),
        ...extra,
      }),
      node('Keep', 'n8n-nodes-base.noOp', 1, {}),
    ],
    connections: { 'On form submission': { main: [[{ node: 'Keep', type: 'main', index: 0 }]] } },
    settings: { executionOrder: 'v1' },
  };
}

interface RunItem {
  json: Record<string, unknown>;
  binary?: Record<string, { mimeType: string; fileName?: string; data?: string; fileSize?: string }>;
}

describe.each(await testDialects())('n8n form file fields on %s', (dialect) => {
  let p: TestPlatform;
  let base: string;
  beforeAll(async () => {
    p = await listeningPlatform(dialect, { FORM_UPLOAD_MAX_BYTES: String(UPLOAD_LIMIT) });
    base = p.ctx.config.PUBLIC_URL;
    await activate(p, await createWorkflow(p, uploadForm('apply', 2.3)));
    await activate(p, await createWorkflow(p, uploadForm('legacy', 1)));
    await activate(p, await createWorkflow(p, pagesWithUpload('pages-upload')));
    await activate(p, await createWorkflow(p, pagesWithUpload('pages-zip', true)));
    await activate(
      p,
      await createWorkflow(
        p,
        uploadForm('walled', 2.6, { options: { path: 'walled', ipWhitelist: '10.1.0.0/16' } }),
      ),
    );
    await activate(
      p,
      await createWorkflow(
        p,
        uploadForm('proto', 2.3, {
          formFields: {
            values: [
              { fieldLabel: '__proto__', fieldType: 'file', multipleFiles: false },
              { fieldLabel: 'constructor', fieldType: 'file' },
              { fieldLabel: 'toString' },
            ],
          },
        }),
      ),
    );
  });
  afterAll(() => p.close());

  /** The item a node of the latest execution output (its first), once the execution ended. */
  /**
   * The latest execution's first item out of `nodeName`, once that node ran: a form page's submission
   * answers before its execution has resumed (a waiting execution counts as settled), so this waits
   * for the node rather than for the execution alone.
   */
  async function lastItem(nodeName: string): Promise<RunItem | undefined> {
    const end = Date.now() + 20_000;
    for (;;) {
      const list = (await p.request({ method: 'GET', url: '/api/v1/executions?limit=1' })).json() as {
        data: Array<{ id: string }>;
      };
      const id = list.data[0]?.id ?? '';
      await settled(p, id);
      const full = (
        await p.request({ method: 'GET', url: `/api/v1/executions/${id}?includeData=true` })
      ).json() as {
        data: { resultData: { runData: Record<string, Array<{ data: { main: RunItem[][] } }>> } };
      };
      const item = full.data.resultData.runData[nodeName]?.[0]?.data.main[0]?.[0];
      if (item || Date.now() > end) return item;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  const file = (text: string, type: string) => new Blob([text], { type });

  it('serves the page with a multipart form and file inputs, its policy unchanged', async () => {
    const res = await fetch(`${base}/form/apply`);
    expect(res.status).toBe(200);
    const html = await res.text();
    expect(html).toContain('enctype="multipart/form-data"');
    expect(html).toContain('<input id="f1" type="file" name="field-1" accept=".pdf, .txt" required>');
    expect(html).toContain('<input id="f2" type="file" name="field-2" multiple>');
    const csp = String(res.headers.get('content-security-policy'));
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("form-action 'self'");
    expect(csp).not.toContain('script-src');
    expect(html).not.toContain('<script');
  });

  it("makes the uploads the item's binary as n8n names them: the field's name, _0 _1 … for several", async () => {
    const form = new FormData();
    form.append('field-0', '  Ada  ');
    form.append('field-1', file('%PDF-1.4 cv', 'application/pdf'), 'cv.pdf');
    form.append('field-2', file('one', 'text/plain'), 'a.txt');
    form.append('field-2', file('second', 'image/png'), 'b.png');
    const res = await fetch(`${base}/form/apply`, { method: 'POST', body: form });
    const answer = await res.text();
    expect(res.status, answer).toBe(200);
    // A fetch without Accept: text/html is a JSON caller: the workflow's answer, not the page.
    expect(answer).not.toContain('Form Submitted');
    const item = await lastItem('Keep');
    expect(item?.json).toMatchObject({
      Name: 'Ada', // trimmed, as n8n trims text and email values
      'CV file': { filename: 'cv.pdf', mimetype: 'application/pdf', size: 11 },
      Samples: [
        { filename: 'a.txt', mimetype: 'text/plain', size: 3 },
        { filename: 'b.png', mimetype: 'image/png', size: 6 },
      ],
      formMode: 'production',
    });
    expect(Object.keys(item?.binary ?? {}).sort()).toEqual(['CV_file', 'Samples_0', 'Samples_1']);
    expect(item?.binary?.CV_file).toMatchObject({ mimeType: 'application/pdf', fileName: 'cv.pdf' });
    expect(Buffer.from(item?.binary?.Samples_1?.data ?? '', 'base64').toString()).toBe('second');
    expect(item?.binary?.Samples_0?.mimeType).toBe('text/plain');
  });

  it('keeps one file of a field that takes several as a list in the JSON, its binary unnumbered', async () => {
    const form = new FormData();
    form.append('field-0', 'Bo');
    form.append('field-1', file('cv', 'text/plain'), 'cv.txt');
    form.append('field-2', file('only', 'text/plain'), 'only.txt');
    const res = await fetch(`${base}/form/apply`, { method: 'POST', body: form });
    expect(res.status).toBe(200);
    const item = await lastItem('Keep');
    expect(item?.json.Samples).toEqual([{ filename: 'only.txt', mimetype: 'text/plain', size: 4 }]);
    expect(Object.keys(item?.binary ?? {}).sort()).toEqual(['CV_file', 'Samples']);
  });

  it('refuses a missing required file, a second file, a type not accepted: 400 naming the field', async () => {
    const cases: Array<[(f: FormData) => void, string]> = [
      [() => {}, 'This field is required'],
      [
        (f) => {
          f.append('field-1', file('a', 'text/plain'), 'a.txt');
          f.append('field-1', file('b', 'text/plain'), 'b.txt');
        },
        'Choose one file',
      ],
      [
        (f) => f.append('field-1', file('MZ', 'application/x-msdownload'), 'cv.exe'),
        'not an accepted file type',
      ],
    ];
    for (const [fill, message] of cases) {
      const form = new FormData();
      form.append('field-0', 'Cy');
      fill(form);
      const res = await fetch(`${base}/form/apply`, { method: 'POST', body: form });
      const body = (await res.json()) as {
        code: string;
        details: { problems: Array<Record<string, unknown>> };
      };
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(body.code).toBe('VALIDATION_ERROR');
      expect(body.details.problems[0]).toMatchObject({ path: 'CV file', field: 1 });
      expect(String(body.details.problems[0]?.message)).toContain(message);
    }
  });

  it('answers a browser (Accept: text/html) with the pages: the form again with the problem', async () => {
    const form = new FormData();
    form.append('field-0', 'Di');
    const res = await fetch(`${base}/form/apply`, {
      method: 'POST',
      body: form,
      headers: { accept: 'text/html,application/xhtml+xml' },
    });
    expect(res.status).toBe(400);
    const html = await res.text();
    expect(html).toContain('This field is required');
    expect(html).toContain('value="Di"');
  });

  it('refuses a submission past FORM_UPLOAD_MAX_BYTES with 413, before buffering it, and serves on', async () => {
    const form = new FormData();
    form.append('field-0', 'Ed');
    form.append('field-1', file('x'.repeat(UPLOAD_LIMIT + 1), 'text/plain'), 'big.txt');
    // The server answers 413 from the declared length and closes; a client still writing may see the
    // close (EPIPE/ECONNRESET) before the answer — a refusal either way, never a buffered body.
    const res = await fetch(`${base}/form/apply`, { method: 'POST', body: form }).catch((e: Error) => e);
    if (res instanceof Error) {
      expect(['EPIPE', 'ECONNRESET']).toContain((res.cause as { code?: string } | undefined)?.code);
    } else {
      const body = (await res.json()) as { code: string; message: string; details: { limit: number } };
      expect(res.status).toBe(413);
      expect(body.code).toBe('PAYLOAD_TOO_LARGE');
      expect(body.message).toContain('FORM_UPLOAD_MAX_BYTES');
      expect(body.details.limit).toBe(UPLOAD_LIMIT);
    }
    // A stream with no declared length is cut at the bound as well.
    const chunk = new TextEncoder().encode('y'.repeat(16_384));
    let sent = 0;
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent > UPLOAD_LIMIT * 4) return controller.close();
        sent += chunk.length;
        controller.enqueue(chunk);
      },
    });
    const streamed = await fetch(`${base}/form/apply`, {
      method: 'POST',
      body: stream,
      headers: { 'content-type': 'multipart/form-data; boundary=zzz' },
      duplex: 'half',
    } as RequestInit);
    expect(streamed.status).toBe(413);
    expect((await fetch(`${base}/form/apply`)).status).toBe(200);
  });

  it('refuses a multipart body with no readable parts clearly (400), never a 500', async () => {
    const res = await fetch(`${base}/form/apply`, {
      method: 'POST',
      body: 'not multipart at all',
      headers: { 'content-type': 'multipart/form-data; boundary=nothing' },
    });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { message: string }).message).toContain('multipart body cannot be read');
  });

  it('serves a Form Trigger v1 where n8n 1.x did: /webhook/{path}/n8n-form, page and submission', async () => {
    const page = await fetch(`${base}/webhook/legacy/n8n-form`);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('enctype="multipart/form-data"');
    const form = new FormData();
    form.append('field-0', 'Fay');
    form.append('field-1', file('v1 cv', 'text/plain'), 'cv.txt');
    const res = await fetch(`${base}/webhook/legacy/n8n-form`, { method: 'POST', body: form });
    expect(res.status, await res.clone().text()).toBe(200);
    const item = await lastItem('Keep');
    expect(item?.json).toMatchObject({
      Name: 'Fay',
      'CV file': { filename: 'cv.txt', size: 5 },
      Samples: null,
    });
    expect(Object.keys(item?.binary ?? {})).toEqual(['CV_file']);
    // The v2 page path is not where a v1 form lives.
    expect((await fetch(`${base}/form/legacy`)).status).toBe(404);
  });

  it('serves a Form Trigger v1 without a path at its webhook id, as n8n does (exports carry none)', async () => {
    const body = uploadForm('unused', 1) as { nodes: Array<Record<string, unknown>> };
    const trigger = body.nodes[0] as { parameters: Record<string, unknown>; webhookId?: string };
    delete trigger.parameters.path;
    trigger.webhookId = 'f0a1b2c3-0000-4000-8000-00000000v1id';
    await activate(p, await createWorkflow(p, body));
    const page = await fetch(`${base}/webhook/f0a1b2c3-0000-4000-8000-00000000v1id/n8n-form`);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('Apply');
  });

  it('takes files on an n8n Form page (v2.5, fields keyed by fieldName), resuming with them as binary', async () => {
    const start = new FormData();
    start.append('field-0', 'Gus');
    const started = await fetch(`${base}/form/pages-upload`, {
      method: 'POST',
      body: start,
      headers: { accept: 'text/html' },
      redirect: 'manual',
    });
    expect(started.status).toBe(303);
    const location = String(started.headers.get('location'));
    expect(location).toMatch(/^\/form-waiting\/[^?]+\?signature=0\./);
    // The page is served once the execution waits at it (a pending page reloads itself meanwhile).
    let html = '';
    const end = Date.now() + 20_000;
    while (!html.includes('type="file"')) {
      if (Date.now() > end) throw new Error(`no form page: ${html}`);
      html = await (await fetch(`${base}${location}`)).text();
    }
    expect(html).toContain('enctype="multipart/form-data"');
    const form = new FormData();
    form.append('field-0', file('photo-bytes', 'image/jpeg'), 'me.jpg');
    form.append('field-1', 'hello');
    const res = await fetch(`${base}${location}`, { method: 'POST', body: form });
    const body = (await res.json()) as { next: string };
    expect(res.status, JSON.stringify(body)).toBe(200);
    const item = await lastItem('Upload page');
    expect(item?.json).toMatchObject({
      photo: [{ filename: 'me.jpg', mimetype: 'image/jpeg', size: 11 }],
      note: 'hello',
    });
    expect(Buffer.from(item?.binary?.photo?.data ?? '', 'base64').toString()).toBe('photo-bytes');
  });

  /** Starts a pages workflow as a browser and returns its first page's signed path, once served. */
  async function firstPage(path: string): Promise<string> {
    const start = new FormData();
    start.append('field-0', 'Hal');
    const started = await fetch(`${base}/form/${path}`, {
      method: 'POST',
      body: start,
      headers: { accept: 'text/html' },
      redirect: 'manual',
    });
    expect(started.status).toBe(303);
    const location = String(started.headers.get('location'));
    const end = Date.now() + 20_000;
    for (let html = ''; !html.includes('type="file"'); ) {
      if (Date.now() > end) throw new Error(`no form page: ${html}`);
      html = await (await fetch(`${base}${location}`)).text();
    }
    return location;
  }

  it('serves several returnBinary files of an ending as one zip download', async () => {
    const location = await firstPage('pages-zip');
    const form = new FormData();
    form.append('field-0', file('first', 'image/png'), 'one.png');
    form.append('field-0', file('second!', 'image/png'), 'two.png');
    const res = await fetch(`${base}${location}`, { method: 'POST', body: form });
    const { next } = (await res.json()) as { next: string };
    expect(res.status).toBe(200);
    const end = Date.now() + 20_000;
    let download = await fetch(`${base}${next}`);
    // The pending page reloads itself until the execution reaches the ending.
    while (download.headers.get('content-type') !== 'application/zip') {
      if (Date.now() > end) throw new Error(`no download: ${await download.text()}`);
      download = await fetch(`${base}${next}`);
    }
    expect(download.headers.get('content-disposition')).toBe('attachment; filename="files.zip"');
    const zip = Buffer.from(await download.arrayBuffer());
    expect(zip.subarray(0, 2).toString()).toBe('PK');
    // Stored (level 0): each file's bytes and name are in the archive as they came.
    expect(zip.includes(Buffer.from('one.png'))).toBe(true);
    expect(zip.includes(Buffer.from('second!'))).toBe(true);
  });

  it('keeps a form behind its ipWhitelist: page and submission 403 from elsewhere', async () => {
    expect((await fetch(`${base}/form/walled`)).status).toBe(403);
    const form = new FormData();
    form.append('field-0', 'Ivy');
    form.append('field-1', file('cv', 'text/plain'), 'cv.txt');
    expect((await fetch(`${base}/form/walled`, { method: 'POST', body: form })).status).toBe(403);
  });

  it("keeps fields labelled '__proto__' and 'constructor': their values and files are the item's", async () => {
    const form = new FormData();
    form.append('field-0', file('proto bytes', 'text/plain'), 'p.txt');
    form.append('field-1', file('c1', 'text/plain'), 'c1.txt');
    form.append('field-1', file('c2', 'text/plain'), 'c2.txt');
    form.append('field-2', 'text value');
    const res = await fetch(`${base}/form/proto`, { method: 'POST', body: form });
    expect(res.status, await res.clone().text()).toBe(200);
    const item = await lastItem('Keep');
    const json = item?.json ?? {};
    expect(Object.keys(json)).toEqual(['__proto__', 'constructor', 'toString', 'submittedAt', 'formMode']);
    expect(Object.getOwnPropertyDescriptor(json, '__proto__')?.value).toEqual({
      filename: 'p.txt',
      mimetype: 'text/plain',
      size: 11,
    });
    expect(Object.getOwnPropertyDescriptor(json, 'constructor')?.value).toHaveLength(2);
    expect(Object.getOwnPropertyDescriptor(json, 'toString')?.value).toBe('text value');
    const binary = item?.binary ?? {};
    expect(Object.keys(binary).sort()).toEqual(['__proto__', 'constructor_0', 'constructor_1']);
    const proto = Object.getOwnPropertyDescriptor(binary, '__proto__')?.value as { data: string };
    expect(Buffer.from(proto.data, 'base64').toString()).toBe('proto bytes');
  });

  it('refuses at save file fields whose files would share a binary property (n8n would overwrite one)', async () => {
    const body = uploadForm('clash', 2.3, {
      formFields: {
        values: [
          { fieldLabel: 'CV file', fieldType: 'file' },
          { fieldLabel: 'CV-file', fieldType: 'file' },
        ],
      },
    });
    const res = await p.request({ method: 'POST', url: '/api/v1/workflows', payload: body });
    expect(res.statusCode).toBe(400);
    expect(res.body).toContain('parameters.formFields.values[1].fieldLabel');
    expect(res.body).toContain("the same binary property as 'CV file' ('CV_file')");
    // Distinct names are saved.
    const fine = uploadForm('no-clash', 2.3, {
      formFields: {
        values: [
          { fieldLabel: 'CV file', fieldType: 'file' },
          { fieldLabel: 'Cover letter', fieldType: 'file' },
        ],
      },
    });
    expect((await p.request({ method: 'POST', url: '/api/v1/workflows', payload: fine })).statusCode).toBe(
      201,
    );
  });

  it("refuses at save what the trigger cannot serve: n8n's user sign-in, a bad allow-list entry", async () => {
    const body = uploadForm('refused', 2.6, {
      authentication: 'n8nUserAuth',
      options: { path: 'refused', ipWhitelist: '10.0.0.0/8, nonsense' },
    });
    const res = await p.request({ method: 'POST', url: '/api/v1/workflows', payload: body });
    expect(res.statusCode).toBe(400);
    const text = res.body;
    expect(text).toContain("n8n's user sign-in is not served here");
    expect(text).toContain("'nonsense' is not an IP address or CIDR range");
  });
});

/**
 * Form Trigger v2.5 → an n8n Form page v2.5 whose fields have fieldNames, one a file field; `ending`
 * adds a Form ending returning both uploaded files (n8n's comma-separated `inputDataFieldName`).
 */
function pagesWithUpload(path: string, ending = false) {
  const end = node('Download', 'n8n-nodes-base.form', 2.5, {
    operation: 'completion',
    respondWith: 'returnBinary',
    inputDataFieldName: 'photo_0, photo_1',
    completionTitle: 'Here you go',
  });
  return {
    name: `pages ${path}`,
    nodes: [
      node('On form submission', 'n8n-nodes-base.formTrigger', 2.5, {
        formTitle: 'Start',
        formFields: { values: [{ fieldLabel: 'Your name', fieldName: 'name', requiredField: true }] },
        options: { path },
      }),
      node('Upload page', 'n8n-nodes-base.form', 2.5, {
        formFields: {
          values: [
            {
              fieldLabel: 'A photo of you',
              fieldName: 'photo',
              fieldType: 'file',
              acceptFileTypes: 'image/*',
            },
            { fieldLabel: 'A note', fieldName: 'note', fieldType: 'textarea' },
          ],
        },
        options: { formTitle: 'Upload' },
      }),
      ...(ending ? [end] : []),
    ],
    connections: {
      'On form submission': { main: [[{ node: 'Upload page', type: 'main', index: 0 }]] },
      ...(ending ? { 'Upload page': { main: [[{ node: 'Download', type: 'main', index: 0 }]] } } : {}),
    },
    settings: { executionOrder: 'v1' },
  };
}

describe('multipart form submissions, bounded in parts', () => {
  const form = { fields: [{ type: 'text', label: 'Tags' }] } as unknown as FormInfo;
  const encode = async (data: FormData) => {
    const response = new Response(data);
    return {
      raw: Buffer.from(await response.arrayBuffer()),
      type: response.headers.get('content-type') ?? '',
    };
  };

  it('collects repeated values of a field in order', async () => {
    const data = new FormData();
    for (const tag of ['a', 'b', 'c']) data.append('field-0', tag);
    const { raw, type } = await encode(data);
    expect((await submissionFromMultipart(form, raw, type)).values).toEqual([['a', 'b', 'c']]);
  });

  it('refuses a submission of more parts than a form has any use for: a 400, not a long parse', async () => {
    const data = new FormData();
    for (let i = 0; i <= MAX_FORM_PARTS; i++) data.append('field-0', 'x');
    const { raw, type } = await encode(data);
    await expect(submissionFromMultipart(form, raw, type)).rejects.toMatchObject({
      code: 'VALIDATION_ERROR',
      details: { limit: MAX_FORM_PARTS },
    });
  });
});
