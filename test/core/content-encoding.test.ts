/**
 * Compressed request bodies: webhooks decode gzip, deflate and br as n8n's do (inflated bytes bounded
 * by the webhook's limit, a bomb stopped at it); every other route refuses them with a 415 before its
 * parser reads them (JSON, multipart uploads, raw blobs).
 */
import { brotliCompressSync, deflateSync, gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestPlatform, type TestPlatform } from '../helpers/platform.js';
import { uniqueName } from '../helpers/services.js';
import { activate, createWorkflow, echoFlow } from '../workflows/support.js';

let p: TestPlatform;
beforeAll(async () => {
  p = await createTestPlatform({ dialect: 'sqlite', env: { QUEUE_PREFIX: uniqueName('q') } });
  await activate(p, await createWorkflow(p, echoFlow('packed')));
  await activate(p, await createWorkflow(p, echoFlow('packed-small', { options: { bodyLimitBytes: 4096 } })));
  await activate(p, await createWorkflow(p, echoFlow('packed-raw', { options: { rawBody: true } })));
});
afterAll(() => p?.close());

const json = Buffer.from(JSON.stringify({ message: 'squeezed' }));
const post = (url: string, payload: Buffer, encoding: string, type = 'application/json') =>
  p.app.inject({
    method: 'POST',
    url,
    payload,
    headers: { 'content-type': type, 'content-encoding': encoding },
  });

describe('webhooks decode compressed bodies', () => {
  it('gzip, x-gzip, deflate and br bodies reach the workflow decoded', async () => {
    for (const [encoding, body] of [
      ['gzip', gzipSync(json)],
      ['x-gzip', gzipSync(json)],
      ['deflate', deflateSync(json)],
      ['br', brotliCompressSync(json)],
      ['GZIP, identity', gzipSync(json)],
    ] as const) {
      const res = await post('/webhook/packed', body, encoding);
      expect(res.statusCode, `${encoding}: ${res.body}`).toBe(200);
      expect(res.json()).toMatchObject({ echoed: 'squeezed', ok: true });
    }
  });

  it('the webhook limit holds for the decoded bytes: a small bomb is a 413', async () => {
    // 1 MB of zeros is ~1 KB compressed: under the 4 KB limit sent, far over it decoded.
    const bomb = gzipSync(Buffer.alloc(1_000_000, 0x20));
    expect(bomb.length).toBeLessThan(4096);
    const res = await post('/webhook/packed-small', bomb, 'gzip');
    expect(res.statusCode, res.body).toBe(413);
    expect(res.json()).toMatchObject({ code: 'PAYLOAD_TOO_LARGE' });
    const fine = await post('/webhook/packed-small', gzipSync(json), 'gzip');
    expect(fine.json()).toMatchObject({ echoed: 'squeezed' });
  });

  it('a body that is not what its encoding says is a 400; an unknown coding a 415 naming those taken', async () => {
    const corrupt = await post('/webhook/packed', json, 'gzip');
    expect(corrupt.statusCode, corrupt.body).toBe(400);
    expect(corrupt.json().message).toMatch(/could not be decompressed/);
    const unknown = await post('/webhook/packed', json, 'zstd');
    expect(unknown.statusCode, unknown.body).toBe(415);
    expect(unknown.json().message).toMatch(/'zstd'.*gzip, deflate or br/);
    const stacked = await post('/webhook/packed', gzipSync(gzipSync(json)), 'gzip, gzip');
    expect(stacked.statusCode).toBe(415);
  });

  it('the raw body a workflow sees is the decoded one', async () => {
    const text = Buffer.from('plain words');
    const res = await post('/webhook/packed-raw', gzipSync(text), 'gzip', 'text/plain');
    expect(res.statusCode, res.body).toBe(200);
    const runs = (await p.request({ method: 'GET', url: '/api/v1/executions?includeData=true' })).json() as {
      data: Array<{ workflowId: string; data: unknown }>;
    };
    expect(JSON.stringify(runs.data)).toContain(Buffer.from('plain words').toString('base64'));
  });
});

describe('other routes refuse compressed bodies with a 415 before reading them', () => {
  it('a JSON route, a multipart upload and a raw blob', async () => {
    const boundary = 'x-boundary';
    const multipart = Buffer.from(
      `--${boundary}\r\nContent-Disposition: form-data; name="purpose"\r\n\r\nbatch\r\n` +
        `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="a.jsonl"\r\n` +
        `Content-Type: application/jsonl\r\n\r\n{}\r\n--${boundary}--\r\n`,
    );
    for (const [url, payload, type] of [
      ['/api/v1/workflows', gzipSync(json), 'application/json'],
      ['/v1/files', gzipSync(multipart), `multipart/form-data; boundary=${boundary}`],
      [`/api/blobs/sha256:${'0'.repeat(64)}`, gzipSync(Buffer.from('blob')), 'application/octet-stream'],
    ] as const) {
      const res = await p.request({
        method: 'POST',
        url,
        payload,
        headers: { 'content-type': type, 'content-encoding': 'gzip' },
      });
      expect(res.statusCode, `${url}: ${res.body}`).toBe(415);
      expect(res.body).toMatch(/Content-Encoding 'gzip' is not supported/);
    }
  });

  it('a request without a body is not refused for the header alone', async () => {
    const res = await p.request({
      method: 'GET',
      url: '/api/v1/workflows',
      headers: { 'content-encoding': 'gzip' },
    });
    expect(res.statusCode).toBe(200);
  });
});
