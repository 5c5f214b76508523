import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import aws4 from 'aws4';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAddressGuard, createOutboundHttp } from '../../../../../core/http/outbound.js';
import { testCredential } from '../../../credentials/connection-test.js';
import { ctx, testDeps, workflow } from '../../../engine/testing.js';
import type { Item } from '../../../engine/types.js';
import { WorkflowEngine } from '../../../engine/workflow-engine.js';
import { defaultNodeRegistry } from '../../index.js';
import { awsTestRequest } from './credential-test.js';

/**
 * The AWS S3 node against a small S3 speaking S3's REST and XML wire format (path-style, as MinIO),
 * which checks each request's SigV4 signature by signing it again with the test's secret.
 */
const keys = { accessKeyId: 'AKIDTEST', secretAccessKey: 'secret/test+key' };
const buckets = new Map<string, Map<string, { body: Buffer; type: string }>>();
const seen: Array<{ method: string; url: string; auth: string }> = [];
let server: Server;
let endpoint = '';

const xml = (res: ServerResponse, status: number, body: string) => {
  res.writeHead(status, { 'content-type': 'application/xml' });
  res.end(`<?xml version="1.0" encoding="UTF-8"?>${body}`);
};
const error = (res: ServerResponse, status: number, code: string, message: string) =>
  xml(res, status, `<Error><Code>${code}</Code><Message>${message}</Message></Error>`);

function signatureOk(req: IncomingMessage, body: Buffer): boolean {
  const auth = String(req.headers.authorization ?? '');
  const signed = /SignedHeaders=([^,]+)/.exec(auth)?.[1]?.split(';') ?? [];
  const service = /Credential=[^/]+\/\d+\/[^/]+\/([^/]+)\//.exec(auth)?.[1] ?? 's3';
  if (!auth.startsWith(`AWS4-HMAC-SHA256 Credential=${keys.accessKeyId}/`) || signed.length === 0)
    return false;
  if (req.headers['x-amz-content-sha256'] !== createHash('sha256').update(body).digest('hex')) return false;
  const headers = Object.fromEntries(signed.map((h) => [h, String(req.headers[h] ?? '')]));
  const again = aws4.sign(
    {
      method: req.method ?? 'GET',
      path: req.url ?? '/',
      service,
      region: 'us-east-1',
      // The payload's hash is the signed x-amz-content-sha256 header, checked above.
      headers,
      doNotEncodePath: true,
    },
    keys,
  );
  return (again.headers as Record<string, string>).Authorization === auth;
}

function handle(req: IncomingMessage, res: ServerResponse, body: Buffer) {
  seen.push({ method: req.method ?? '', url: req.url ?? '', auth: String(req.headers.authorization ?? '') });
  if (!signatureOk(req, body))
    return error(res, 403, 'SignatureDoesNotMatch', 'The signature does not match');
  const url = new URL(req.url ?? '/', 'http://s3.test');
  const [, bucket = '', ...rest] = url.pathname.split('/');
  const key = decodeURIComponent(rest.join('/'));
  const objects = buckets.get(bucket);
  const m = req.method;
  if (bucket === '' && m === 'GET') {
    const list = [...buckets.keys()].map(
      (b) => `<Bucket><Name>${b}</Name><CreationDate>2026-01-01T00:00:00.000Z</CreationDate></Bucket>`,
    );
    return xml(
      res,
      200,
      `<ListAllMyBucketsResult><Buckets>${list.join('')}</Buckets></ListAllMyBucketsResult>`,
    );
  }
  if (key === '' && m === 'PUT') {
    buckets.set(bucket, new Map());
    return res.writeHead(200).end();
  }
  if (!objects) return error(res, 404, 'NoSuchBucket', 'The specified bucket does not exist');
  if (key === '' && m === 'DELETE') {
    if (objects.size > 0)
      return error(res, 409, 'BucketNotEmpty', 'The bucket you tried to delete is not empty');
    buckets.delete(bucket);
    return res.writeHead(204).end();
  }
  if (key === '' && m === 'GET') {
    const prefix = url.searchParams.get('prefix') ?? '';
    const max = Number(url.searchParams.get('max-keys') ?? 1000);
    const after = url.searchParams.get('continuation-token') ?? '';
    const delimiter = url.searchParams.get('delimiter');
    // A delimiter groups deeper keys into CommonPrefixes (not listed here), as S3 does.
    const all = [...objects.keys()]
      .filter((k) => k.startsWith(prefix) && k > after)
      .filter((k) => !delimiter || !k.slice(prefix.length).includes(delimiter))
      .sort();
    const page = all.slice(0, max);
    const more = all.length > page.length;
    const contents = page.map(
      (k) =>
        `<Contents><Key>${k}</Key><LastModified>2026-01-01T00:00:00.000Z</LastModified><ETag>"x"</ETag><Size>${objects.get(k)?.body.length}</Size><StorageClass>STANDARD</StorageClass></Contents>`,
    );
    return xml(
      res,
      200,
      `<ListBucketResult><Name>${bucket}</Name><IsTruncated>${more}</IsTruncated>${more ? `<NextContinuationToken>${page.at(-1)}</NextContinuationToken>` : ''}${contents.join('')}</ListBucketResult>`,
    );
  }
  if (key === '' && m === 'POST' && url.searchParams.has('delete')) {
    const gone: string[] = [];
    for (const [, k] of String(body).matchAll(/<Key>([^<]*)<\/Key>/g)) {
      objects.delete(k as string);
      gone.push(`<Deleted><Key>${k}</Key></Deleted>`);
    }
    return xml(res, 200, `<DeleteResult>${gone.join('')}</DeleteResult>`);
  }
  if (m === 'PUT') {
    const source = req.headers['x-amz-copy-source'];
    if (source) {
      const [, from = '', ...fromKey] = decodeURI(String(source)).split('/');
      const found = buckets.get(from)?.get(fromKey.join('/'));
      if (!found) return error(res, 404, 'NoSuchKey', 'The specified key does not exist.');
      objects.set(key, found);
      return xml(
        res,
        200,
        '<CopyObjectResult><LastModified>2026-01-02T00:00:00.000Z</LastModified><ETag>"c"</ETag></CopyObjectResult>',
      );
    }
    objects.set(key, { body, type: String(req.headers['content-type'] ?? 'binary/octet-stream') });
    return res.writeHead(200, { etag: '"e"' }).end();
  }
  const found = objects.get(key);
  if (!found) return error(res, 404, 'NoSuchKey', 'The specified key does not exist.');
  if (m === 'GET' && url.searchParams.has('chunked')) {
    // No Content-Length: the size shows only as the body arrives.
    res.writeHead(200, { 'content-type': found.type });
    for (let i = 0; i < found.body.length; i += 1_024) res.write(found.body.subarray(i, i + 1_024));
    return res.end();
  }
  if (m === 'GET') return res.writeHead(200, { 'content-type': found.type }).end(found.body);
  if (m === 'DELETE') {
    objects.delete(key);
    return res.writeHead(204).end();
  }
  error(res, 405, 'MethodNotAllowed', 'no');
}

beforeAll(async () => {
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => handle(req, res, Buffer.concat(chunks)));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

async function run(
  parameters: Record<string, unknown>,
  opts: { items?: Item[]; allow?: string[]; secret?: string; version?: number; maxDownload?: number } = {},
) {
  const deps = testDeps({
    http: createOutboundHttp({ allowHosts: opts.allow ?? ['127.0.0.1'], timeoutMs: 5_000 }),
    ...(opts.maxDownload ? { s3MaxDownloadBytes: opts.maxDownload } : {}),
    credential: async () => ({
      ...keys,
      ...(opts.secret ? { secretAccessKey: opts.secret } : {}),
      region: 'us-east-1',
      customEndpoints: 'true',
      s3Endpoint: endpoint,
    }),
  });
  const engine = new WorkflowEngine(deps, defaultNodeRegistry);
  const def = workflow(
    [
      { name: 'T', type: 'n8n-nodes-base.manualTrigger', typeVersion: 1 },
      {
        name: 'S3',
        type: 'n8n-nodes-base.awsS3',
        typeVersion: opts.version ?? 2,
        parameters,
        credentials: { aws: { id: 'aws', name: 'aws' } },
      },
    ],
    [['T', 'S3']],
  );
  const out = await engine.run(def, { nodeName: 'T', items: opts.items ?? [{ json: {} }] }, ctx);
  const runs = out.state.runData.S3 ?? [];
  return {
    error: out.state.error,
    json: (runs[runs.length - 1]?.output[0] ?? []).map((i) => i.json),
    items: runs[runs.length - 1]?.output[0] ?? [],
  };
}

describe('n8n-nodes-base.awsS3 v2', () => {
  it('buckets, files and folders against an S3 wire-format server, every request signed', async () => {
    const made = await run({ resource: 'bucket', operation: 'create', name: 'reports' });
    expect(made.error).toBeNull();
    expect(made.json).toEqual([{ success: true }]);
    expect((await run({ resource: 'bucket', operation: 'getAll', returnAll: true })).json).toEqual([
      { Name: 'reports', CreationDate: '2026-01-01T00:00:00.000Z' },
    ]);
    const data = {
      mimeType: 'text/csv',
      fileName: 'q1.csv',
      data: Buffer.from('a,b\n1,2').toString('base64'),
    };
    const up = await run(
      {
        resource: 'file',
        operation: 'upload',
        bucketName: 'reports',
        fileName: 'q1 (final).csv',
        additionalFields: { parentFolderKey: '2026' },
      },
      { items: [{ json: {}, binary: { data } }] },
    );
    expect(up.error).toBeNull();
    expect(buckets.get('reports')?.get('2026/q1 (final).csv')).toMatchObject({ type: 'text/csv' });
    expect(
      (await run({ resource: 'folder', operation: 'create', bucketName: 'reports', folderName: 'archive' }))
        .json,
    ).toEqual([{ success: true }]);
    const copied = await run({
      resource: 'file',
      operation: 'copy',
      sourcePath: '/reports/2026/q1 (final).csv',
      destinationPath: '/reports/archive/q1.csv',
    });
    expect(copied.json).toEqual([{ LastModified: '2026-01-02T00:00:00.000Z', ETag: '"c"' }]);

    // n8n's file listing is one level deep (delimiter '/') under the folder key as given.
    const top = await run({ resource: 'file', operation: 'getAll', bucketName: 'reports', returnAll: true });
    expect(top.json).toEqual([]);
    const files = await run({
      resource: 'file',
      operation: 'getAll',
      bucketName: 'reports',
      returnAll: true,
      options: { folderKey: 'archive/' },
    });
    expect(files.json.map((f) => f.Key)).toEqual(['archive/q1.csv']);
    const folders = await run({
      resource: 'folder',
      operation: 'getAll',
      bucketName: 'reports',
      returnAll: true,
    });
    expect(folders.json.map((f) => f.Key)).toEqual(['archive/']);
    const search = await run({
      resource: 'bucket',
      operation: 'search',
      bucketName: 'reports',
      limit: 1,
      additionalFields: { prefix: 'archive/' },
    });
    expect(search.json.map((f) => f.Key)).toEqual(['archive/']);

    const down = await run({
      resource: 'file',
      operation: 'download',
      bucketName: 'reports',
      fileKey: 'archive/q1.csv',
    });
    expect(down.items[0]?.binary?.data).toMatchObject({ fileName: 'q1.csv', mimeType: 'text/csv' });
    expect(Buffer.from(down.items[0]?.binary?.data?.data ?? '', 'base64').toString()).toBe('a,b\n1,2');

    expect(
      (
        await run({
          resource: 'file',
          operation: 'delete',
          bucketName: 'reports',
          fileKey: '2026/q1 (final).csv',
        })
      ).json,
    ).toEqual([{ success: true }]);
    expect(
      (await run({ resource: 'folder', operation: 'delete', bucketName: 'reports', folderKey: 'archive' }))
        .json,
    ).toEqual([{ deleted: [{ Key: 'archive/' }, { Key: 'archive/q1.csv' }] }]);
    expect(buckets.get('reports')?.size).toBe(0);
    expect((await run({ resource: 'bucket', operation: 'delete', name: 'reports' })).json).toEqual([
      { success: true },
    ]);
    expect(seen.every((r) => r.auth.startsWith('AWS4-HMAC-SHA256 Credential=AKIDTEST/'))).toBe(true);
  });

  it("fails with S3's error, a bad signature, a bad bucket name, or a private endpoint", async () => {
    expect(
      (await run({ resource: 'file', operation: 'download', bucketName: 'nope', fileKey: 'x' })).error
        ?.message,
    ).toBe('NoSuchBucket: The specified bucket does not exist');
    expect((await run({ resource: 'bucket', operation: 'getAll' }, { secret: 'wrong' })).error?.message).toBe(
      'SignatureDoesNotMatch: The signature does not match',
    );
    expect((await run({ resource: 'bucket', operation: 'create', name: 'Bad_Name' })).error?.message).toBe(
      "'Bad_Name' is not a valid S3 bucket name",
    );
    expect((await run({ resource: 'bucket', operation: 'getAll' }, { allow: [] })).error?.message).toContain(
      'not allowed',
    );
  });
});

describe('n8n-nodes-base.awsS3 v1 and the bounds', () => {
  it("runs n8n's v1 upload export (file name from the binary), text as text/html, v1 folder keys", async () => {
    await run({ resource: 'bucket', operation: 'create', name: 'bucket' }, { version: 1 });
    // n8n's own v1 test workflow: upload with a file name, additionalFields empty.
    const data = {
      mimeType: 'application/json',
      fileName: 'x.json',
      data: Buffer.from('{"key":"value"}').toString('base64'),
    };
    const named = await run(
      { operation: 'upload', bucketName: 'bucket', fileName: 'binary.json', additionalFields: {} },
      { version: 1, items: [{ json: {}, binary: { data } }] },
    );
    expect(named.error).toBeNull();
    expect(named.json).toEqual([{ success: true }]);
    expect(buckets.get('bucket')?.get('binary.json')?.body.toString()).toBe('{"key":"value"}');
    // No file name: the binary's.
    await run(
      { operation: 'upload', bucketName: 'bucket', additionalFields: { parentFolderKey: 'in' } },
      { version: 1, items: [{ json: {}, binary: { data } }] },
    );
    expect(buckets.get('bucket')?.get('in/x.json')?.type).toBe('application/json');
    await run(
      {
        operation: 'upload',
        bucketName: 'bucket',
        fileName: 'note.html',
        binaryData: false,
        fileContent: '<p>hi</p>',
      },
      { version: 1 },
    );
    expect(buckets.get('bucket')?.get('note.html')?.type).toBe('text/html');
    // v1 joins the parent folder key and the name as given; v2 puts a slash between.
    await run(
      {
        resource: 'folder',
        operation: 'create',
        bucketName: 'bucket',
        folderName: 'a',
        additionalFields: { parentFolderKey: 'docs/' },
      },
      { version: 1 },
    );
    await run(
      {
        resource: 'folder',
        operation: 'create',
        bucketName: 'bucket',
        folderName: 'b',
        additionalFields: { parentFolderKey: 'docs' },
      },
      { version: 2 },
    );
    const folders = await run(
      {
        resource: 'folder',
        operation: 'getAll',
        bucketName: 'bucket',
        returnAll: true,
        options: { folderKey: 'docs/' },
      },
      { version: 1 },
    );
    expect(folders.json.map((f) => f.Key)).toEqual(['docs/a/', 'docs/b/']);
    // n8n's object-lock and encryption fields import and reach S3 as its headers.
    const copied = await run(
      {
        resource: 'file',
        operation: 'copy',
        sourcePath: '/bucket/binary.json',
        destinationPath: '/bucket/copy.json',
        additionalFields: { metadataDirective: 'copy', grantRead: true, lockLegalHold: true },
      },
      { version: 1 },
    );
    expect(copied.error).toBeNull();
    expect(buckets.get('bucket')?.get('copy.json')).toBeDefined();
  });

  it('refuses a download past S3_MAX_DOWNLOAD_BYTES from its Content-Length, and keeps what fits', async () => {
    await run({ resource: 'bucket', operation: 'create', name: 'big' });
    const bytes = Buffer.alloc(8_192, 7);
    buckets.get('big')?.set('blob.bin', { body: bytes, type: 'application/octet-stream' });
    const announced = await run(
      { resource: 'file', operation: 'download', bucketName: 'big', fileKey: 'blob.bin' },
      { maxDownload: 4_096 },
    );
    expect(announced.error?.message).toBe('The file is larger than the S3 download limit of 4096 bytes');
    const ok = await run(
      { resource: 'file', operation: 'download', bucketName: 'big', fileKey: 'blob.bin' },
      { maxDownload: 8_192 },
    );
    expect(Buffer.from(ok.items[0]?.binary?.data?.data ?? '', 'base64').equals(bytes)).toBe(true);
  });

  it('streams past the limit: a body without Content-Length is cut as it arrives', async () => {
    const http = createOutboundHttp({ allowHosts: ['127.0.0.1'], timeoutMs: 5_000 });
    buckets.set('chunks', new Map([['c.bin', { body: Buffer.alloc(16_384, 1), type: 'x/y' }]]));
    const { s3Request } = await import('./request.js');
    const target = {
      credential: { ...keys, region: 'us-east-1', customEndpoints: 'true', s3Endpoint: endpoint },
      http,
    };
    await expect(
      s3Request(target, {
        method: 'GET',
        bucket: 'chunks',
        key: 'c.bin',
        query: 'chunked=1',
        download: { maxBytes: 4_096 },
      }),
    ).rejects.toThrow('The file is larger than the S3 download limit of 4096 bytes');
    const whole = await s3Request(target, {
      method: 'GET',
      bucket: 'chunks',
      key: 'c.bin',
      query: 'chunked=1',
      download: { maxBytes: 16_384 },
    });
    expect(whole.bytes?.length).toBe(16_384);
    expect(whole.body).toBe('');
  });

  it('tests an aws credential: STS GetCallerIdentity, or ListBuckets on an S3-compatible endpoint', async () => {
    const http = createOutboundHttp({ allowHosts: ['127.0.0.1'], timeoutMs: 5_000 });
    const guard = createAddressGuard(['127.0.0.1']);
    const base = { ...keys, region: 'us-east-1', customEndpoints: 'true' };
    // AWS itself: n8n's STS GetCallerIdentity, at the region's STS host (China's on amazonaws.com.cn).
    const sts = awsTestRequest({ ...keys, region: 'eu-west-1' });
    expect([sts.service, sts.method, sts.url.toString()]).toEqual([
      'sts',
      'POST',
      'https://sts.eu-west-1.amazonaws.com/?Action=GetCallerIdentity&Version=2011-06-15',
    ]);
    expect(awsTestRequest({ ...keys, region: 'cn-north-1' }).url.host).toBe(
      'sts.cn-north-1.amazonaws.com.cn',
    );
    expect(await testCredential('aws', { ...base, s3Endpoint: endpoint }, guard, http)).toEqual({
      status: 'OK',
      message: 'Connection tested successfully',
    });
    const wrong = await testCredential(
      'aws',
      { ...base, s3Endpoint: endpoint, secretAccessKey: 'no' },
      guard,
      http,
    );
    expect(wrong).toEqual({
      status: 'Error',
      message: 'SignatureDoesNotMatch: The signature does not match',
    });
    // A private endpoint the outbound guard does not allow is refused, never reached.
    const blocked = await testCredential(
      'aws',
      { ...base, s3Endpoint: endpoint },
      guard,
      createOutboundHttp({ allowHosts: [], timeoutMs: 5_000 }),
    );
    expect(blocked.status).toBe('Error');
    expect(blocked.message).toContain('not allowed');
    const seenBefore = seen.length;
    expect((await testCredential('aws', { ...base, s3Endpoint: endpoint }, guard)).status).toBe('Error');
    expect(seen.length).toBe(seenBefore);
  });
});
