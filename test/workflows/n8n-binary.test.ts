import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestPlatform } from '../helpers/platform.js';
import { testDialects } from '../helpers/services.js';
import { until } from '../helpers/until.js';
import { activate, createWorkflow, n8nNode, workflowPlatform } from './support.js';

/** Eight bytes of a PNG signature and a few that are not UTF-8: any text round trip would change them. */
const PNG = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0xff, 0xfe, 0x00, 0x80]);

/** A downstream: `/file` serves PNG bytes as an attachment; `/upload` records what it was sent. */
let downstream: Server;
let base = '';
const received: Array<{ contentType: string; bytes: Buffer }> = [];
beforeAll(async () => {
  downstream = createServer((req, res) => {
    if (req.url === '/file') {
      res.writeHead(200, {
        'content-type': 'image/png',
        'content-disposition': 'attachment; filename="logo.png"',
      });
      res.end(PNG);
      return;
    }
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      received.push({ contentType: req.headers['content-type'] ?? '', bytes: Buffer.concat(chunks) });
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"stored":true}');
    });
  });
  await new Promise<void>((r) => downstream.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(downstream.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((r) => downstream.close(() => r())));

/** Webhook (answered by a Respond to Webhook node) → the given nodes in a chain. */
function chain(path: string, nodes: ReturnType<typeof n8nNode>[], webhook: Record<string, unknown> = {}) {
  const all = [
    n8nNode('Webhook', 'webhook', 2, {
      httpMethod: 'POST',
      path,
      responseMode: 'responseNode',
      options: {},
      ...webhook,
    }),
    ...nodes,
  ];
  const connections: Record<string, unknown> = {};
  for (let i = 0; i < all.length - 1; i++)
    connections[all[i]?.name as string] = { main: [[{ node: all[i + 1]?.name, type: 'main', index: 0 }]] };
  return { name: `binary ${path}`, nodes: all, connections };
}

const respondJson = n8nNode('Respond', 'respondToWebhook', 1.1, {
  respondWith: 'firstIncomingItem',
  options: {},
});
const respondBinary = (parameters: Record<string, unknown> = {}) =>
  n8nNode('Respond', 'respondToWebhook', 1.1, { respondWith: 'binary', options: {}, ...parameters });

function multipart(
  boundary: string,
  parts: Array<{ name: string; value: string | Buffer; file?: string; type?: string }>,
) {
  const chunks: Buffer[] = [];
  for (const part of parts) {
    const disposition = `form-data; name="${part.name}"${part.file ? `; filename="${part.file}"` : ''}`;
    const head = `--${boundary}\r\nContent-Disposition: ${disposition}\r\n${part.type ? `Content-Type: ${part.type}\r\n` : ''}\r\n`;
    chunks.push(
      Buffer.from(head),
      Buffer.isBuffer(part.value) ? part.value : Buffer.from(part.value),
      Buffer.from('\r\n'),
    );
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`));
  return Buffer.concat(chunks);
}

describe.each(await testDialects())('n8n binary data on %s', (dialect) => {
  let p: TestPlatform;
  beforeAll(async () => {
    p = await workflowPlatform(dialect);
  });
  afterAll(() => p.close());

  async function deploy(body: unknown): Promise<string> {
    const id = await createWorkflow(p, body);
    await activate(p, id);
    return id;
  }
  /** The first output item of `node` in the workflow's latest execution, in n8n's run data shape. */
  async function lastItem(workflowId: string, nodeName: string) {
    // The Respond node answers before the run is stored: wait for it to end.
    return until(
      async () => {
        const list = await p.request({
          method: 'GET',
          url: `/api/v1/executions?workflowId=${workflowId}&includeData=true&limit=1`,
        });
        const [latest] = list.json().data;
        return latest?.status === 'success'
          ? latest.data.resultData.runData[nodeName][0].data.main[0][0]
          : undefined;
      },
      `a finished execution of ${workflowId}`,
      20_000,
    );
  }
  const post = (path: string, payload: Buffer | string, headers: Record<string, string>) =>
    p.request({ method: 'POST', url: `/webhook/${path}`, key: null, payload, headers });

  it('takes a body it does not parse as binary `data`, shows its metadata in $binary, and answers with the bytes', async () => {
    const echo = await deploy(
      chain('bin-echo', [
        n8nNode('Meta', 'set', 3.4, {
          assignments: {
            assignments: [
              { id: 'a', name: 'type', type: 'string', value: '={{ $binary.data.mimeType }}' },
              { id: 'b', name: 'ext', type: 'string', value: '={{ $binary.data.fileExtension }}' },
              { id: 'c', name: 'size', type: 'string', value: '={{ $binary.data.fileSize }}' },
              {
                id: 'd',
                name: 'bytesHidden',
                type: 'boolean',
                value: '={{ $binary.data.data === undefined }}',
              },
            ],
          },
          includeOtherFields: true,
          options: {},
        }),
        respondBinary(),
      ]),
    );
    const res = await post('bin-echo', PNG, { 'content-type': 'image/png' });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.headers['content-type']).toBe('image/png');
    expect(res.rawPayload.equals(PNG)).toBe(true);

    const run = await lastItem(echo, 'Meta');
    expect(run.json).toMatchObject({ type: 'image/png', ext: 'png', size: '12 B', bytesHidden: true });
    expect(Buffer.from(run.binary.data.data, 'base64').equals(PNG)).toBe(true);
  });

  it('puts uploaded files in binary properties by n8n names, the other fields in the body', async () => {
    const upload = await deploy(chain('bin-upload', [respondJson]));
    const boundary = 'xYzBoundary42';
    const body = multipart(boundary, [
      { name: 'title', value: 'two files' },
      { name: 'files[]', value: PNG, file: 'a.png', type: 'image/png' },
      { name: 'files[]', value: 'hello', file: 'b.txt', type: 'text/plain' },
      { name: 'single', value: '{"x":1}', file: 'c.json', type: 'application/json' },
    ]);
    const res = await post('bin-upload', body, {
      'content-type': `multipart/form-data; boundary=${boundary}`,
    });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().body).toEqual({ title: 'two files' });

    const { binary } = await lastItem(upload, 'Webhook');
    expect(Object.keys(binary).sort()).toEqual(['files0', 'files1', 'single']);
    expect(binary.files0).toMatchObject({ mimeType: 'image/png', fileName: 'a.png', fileType: 'image' });
    expect(Buffer.from(binary.files1.data, 'base64').toString()).toBe('hello');
    expect(binary.single).toMatchObject({ fileName: 'c.json', fileExtension: 'json', fileType: 'json' });

    // With binaryPropertyName every file is `{name}{n}`, in order.
    const uploadNamed = await deploy(
      chain('bin-upload-named', [respondJson], { options: { binaryPropertyName: 'upload' } }),
    );
    const named = await post('bin-upload-named', body, {
      'content-type': `multipart/form-data; boundary=${boundary}`,
    });
    expect(named.statusCode).toBe(200);
    const binary2 = (await lastItem(uploadNamed, 'Webhook')).binary;
    expect(Object.keys(binary2).sort()).toEqual(['upload0', 'upload1', 'upload2']);
  });

  it('refuses a multipart body it cannot read with a 400', async () => {
    await deploy(chain('bin-bad', [respondJson]));
    const res = await post('bin-bad', Buffer.from('--nope\r\nnot a part'), {
      'content-type': 'multipart/form-data; boundary=other',
    });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ code: 'VALIDATION_ERROR' });

    // More files than a trigger item may carry: refused before any execution.
    const boundary = 'many';
    const files = Array.from({ length: 101 }, (_, i) => ({ name: `f${i}`, value: 'x', file: `${i}.txt` }));
    const many = await post('bin-bad', multipart(boundary, files), {
      'content-type': `multipart/form-data; boundary=${boundary}`,
    });
    expect(many.statusCode).toBe(400);
    expect(many.json().message).toContain('at most 100 files');
  });

  it('fails the Code node, not the server, on Buffer calls it cannot make', async () => {
    await deploy(
      chain('bin-buffer-bad', [
        n8nNode('Code', 'code', 2, {
          jsCode: "return [{ json: { s: Buffer.from('x', 'ebcdic').toString() } }];",
        }),
        respondJson,
      ]),
    );
    const res = await post('bin-buffer-bad', '{}', { 'content-type': 'application/json' });
    expect(res.statusCode).toBe(422);
    expect(res.json().message).toContain('Unknown encoding: ebcdic');
    const bad = await post('bin-buffer-bad', '{}', { 'content-type': 'application/json' });
    expect(bad.statusCode).toBe(422);
  });

  it('downloads a file with HTTP Request and sends it on as a body and as a form file', async () => {
    await deploy(
      chain('bin-relay', [
        n8nNode('Download', 'httpRequest', 4.2, { url: `${base}/file`, options: {} }),
        n8nNode('Send', 'httpRequest', 4.2, {
          method: 'POST',
          url: `${base}/upload`,
          sendBody: true,
          contentType: 'binaryData',
          inputDataFieldName: 'data',
          options: {},
        }),
      ]),
    );
    const before = received.length;
    const res = await post('bin-relay', '{}', { 'content-type': 'application/json' });
    expect(res.statusCode, res.body).toBe(200);
    expect(received[before]).toMatchObject({ contentType: 'image/png' });
    expect(received[before]?.bytes.equals(PNG)).toBe(true);

    await deploy(
      chain('bin-form', [
        n8nNode('Download', 'httpRequest', 4.2, { url: `${base}/file`, options: {} }),
        n8nNode('Send', 'httpRequest', 4.2, {
          method: 'POST',
          url: `${base}/upload`,
          sendBody: true,
          contentType: 'multipart-form-data',
          bodyParameters: {
            parameters: [
              { parameterType: 'formData', name: 'note', value: 'logo' },
              { parameterType: 'formBinaryData', name: 'file', inputDataFieldName: 'data' },
            ],
          },
          options: {},
        }),
      ]),
    );
    const formRes = await post('bin-form', '{}', { 'content-type': 'application/json' });
    expect(formRes.statusCode, formRes.body).toBe(200);
    const sent = received[received.length - 1] as { contentType: string; bytes: Buffer };
    const form = await new Response(sent.bytes, { headers: { 'content-type': sent.contentType } }).formData();
    expect(form.get('note')).toBe('logo');
    const file = form.get('file') as File;
    expect(file.name).toBe('logo.png');
    expect(file.type).toBe('image/png');
    expect(Buffer.from(await file.arrayBuffer()).equals(PNG)).toBe(true);
  });

  it('lets the Code node read and make binary data', async () => {
    await deploy(
      chain('bin-code', [
        n8nNode('Code', 'code', 2, {
          jsCode: [
            'const inBytes = $input.first().binary.data.data;',
            "const text = $input.first().binary.data.mimeType + ':' + inBytes.length;",
            "return [{ json: { text }, binary: { report: { data: Buffer.from(text).toString('base64'), mimeType: 'text/plain', fileName: 'r.txt' } } }];",
          ].join('\n'),
        }),
        respondBinary({ responseDataSource: 'set', inputFieldName: 'report' }),
      ]),
    );
    const res = await post('bin-code', PNG, { 'content-type': 'image/png' });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.headers['content-type']).toBe('text/plain');
    expect(res.body).toBe(`image/png:${PNG.toString('base64').length}`);

    // btoa/atob and Buffer's encodings agree with Node's.
    await deploy(
      chain('bin-code2', [
        n8nNode('Code', 'code', 2, {
          jsCode: [
            'const inBytes = $input.first().binary.data.data;',
            "const text = $input.first().binary.data.mimeType + ':' + inBytes.length;",
            "const bytes = Buffer.from(inBytes, 'base64');",
            "const check = [bytes.length, bytes.toString('hex'), atob(btoa('é')), Buffer.byteLength('é')].join('|');",
            "return [{ json: { text }, binary: { report: { data: btoa(check), mimeType: 'text/plain', fileName: 'r.txt' } } }];",
          ].join('\n'),
        }),
        respondBinary({ responseDataSource: 'set', inputFieldName: 'report' }),
      ]),
    );
    const ok = await post('bin-code2', PNG, { 'content-type': 'image/png' });
    expect(ok.statusCode, ok.body).toBe(200);
    expect(ok.rawPayload.toString('latin1')).toBe(`${PNG.length}|${PNG.toString('hex')}|é|2`);
  });

  it("follows n8n's Set rule for binary data and answers a missing property in words", async () => {
    for (const [path, set, kept] of [
      ['bin-set-keep', { includeOtherFields: true, options: {} }, true],
      ['bin-set-strip', { includeOtherFields: true, options: { stripBinary: true } }, false],
      ['bin-set-none', { options: {} }, false],
    ] as const) {
      await deploy(
        chain(path, [
          n8nNode('Set', 'set', 3.4, { assignments: { assignments: [] }, ...set }),
          respondBinary(),
        ]),
      );
      const res = await post(path, PNG, { 'content-type': 'image/png' });
      if (kept) {
        expect(res.statusCode, path).toBe(200);
        expect(res.rawPayload.equals(PNG)).toBe(true);
      } else {
        expect(res.statusCode, path).toBe(422);
        expect(res.json().message).toContain('No binary data exists on the first item');
      }
    }
  });

  it('answers with the last node’s binary property (firstEntryBinary) and keeps rawBody as binary `data`', async () => {
    await deploy({
      name: 'first entry binary',
      nodes: [
        n8nNode('Webhook', 'webhook', 2, {
          httpMethod: 'POST',
          path: 'bin-last',
          responseMode: 'lastNode',
          responseData: 'firstEntryBinary',
          options: {},
        }),
      ],
      connections: {},
    });
    const res = await post('bin-last', PNG, { 'content-type': 'application/octet-stream' });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.headers['content-type']).toBe('application/octet-stream');
    expect(res.rawPayload.equals(PNG)).toBe(true);

    const rawFlow = await deploy(chain('bin-raw', [respondJson], { options: { rawBody: true } }));
    const raw = await post('bin-raw', '{"a":1}', { 'content-type': 'application/json' });
    expect(raw.statusCode).toBe(200);
    expect(raw.json().body).toEqual({ a: 1 });
    expect(raw.json().rawBody).toBeUndefined();
    const item = await lastItem(rawFlow, 'Webhook');
    expect(Buffer.from(item.binary.data.data, 'base64').toString()).toBe('{"a":1}');
    expect(item.binary.data.mimeType).toBe('application/json');
  });
});
