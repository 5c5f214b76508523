import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestPlatform } from '../helpers/platform.js';
import { testDialects } from '../helpers/services.js';
import { createCredential, otherAccountKey, workflowPlatform } from './support.js';

const PG = { host: '127.0.0.1', database: 'test', user: 'postgres' };
const MARIA = { host: '127.0.0.1', database: 'test', user: 'root', port: '3306' };
const REDIS = { host: '127.0.0.1', port: '6379' };

describe.each(await testDialects())(
  "n8n's credential test (POST /api/v1/credentials/{id}/test) on %s",
  (dialect) => {
    let p: TestPlatform;
    beforeAll(async () => {
      p = await workflowPlatform(dialect);
    });
    afterAll(() => p.close());

    const test = (id: string, key?: string) =>
      p.request({ method: 'POST', url: `/api/v1/credentials/${id}/test`, ...(key ? { key } : {}) });

    it('answers OK for postgres, mySql and redis credentials that connect', async () => {
      for (const [type, data] of [
        ['postgres', PG],
        ['mySql', MARIA],
        ['redis', REDIS],
      ] as const) {
        const id = await createCredential(p, `ok ${type}`, type, data);
        const res = await test(id);
        expect(res.statusCode, res.body).toBe(200);
        expect(res.json(), type).toEqual({ status: 'OK', message: 'Connection tested successfully' });
      }
    });

    it('answers Error with the reason when the server refuses or is not there', async () => {
      const badDb = await createCredential(p, 'bad db', 'postgres', { ...PG, database: 'no_such_db_here' });
      const res = await test(badDb);
      expect(res.json().status).toBe('Error');
      expect(res.json().message).toContain('no_such_db_here');
      const closed = await createCredential(p, 'closed port', 'redis', { host: '127.0.0.1', port: '1' });
      const refused = await test(closed);
      expect(refused.json().status).toBe('Error');
      expect(refused.json().message).toContain('Could not connect to Redis');
    });

    it('answers for the mail credentials too (smtp, beside its node): OK from a real SMTP server, else the reason', async () => {
      const smtp = new SMTPServer({ authOptional: true, disabledCommands: ['STARTTLS'] });
      await new Promise<void>((resolve) => smtp.listen(0, '127.0.0.1', resolve));
      try {
        const { port } = smtp.server.address() as AddressInfo;
        const ok = await createCredential(p, 'smtp ok', 'smtp', {
          host: '127.0.0.1',
          port: String(port),
          secure: 'false',
        });
        const answer = (await test(ok)).json();
        expect(answer, answer.message).toEqual({ status: 'OK', message: expect.any(String) });
        const closed = await createCredential(p, 'smtp closed', 'smtp', { host: '127.0.0.1', port: '1' });
        expect((await test(closed)).json()).toMatchObject({ status: 'Error' });
      } finally {
        await new Promise<void>((resolve) => smtp.close(() => resolve()));
      }
    });

    it('answers for an aws credential with an S3-compatible endpoint: a signed ListBuckets there', async () => {
      const calls: Array<{ method?: string; url?: string; auth: string }> = [];
      const s3 = createServer((req, res) => {
        calls.push({ method: req.method, url: req.url, auth: String(req.headers.authorization ?? '') });
        const ok = String(req.headers.authorization ?? '').includes('Credential=AKIDROUTE/');
        res.writeHead(ok ? 200 : 403, { 'content-type': 'text/xml' });
        res.end(
          ok
            ? '<ListAllMyBucketsResult><Buckets></Buckets></ListAllMyBucketsResult>'
            : '<Error><Code>InvalidAccessKeyId</Code><Message>The AWS Access Key Id you provided does not exist in our records.</Message></Error>',
        );
      });
      await new Promise<void>((resolve) => s3.listen(0, '127.0.0.1', resolve));
      try {
        const { port } = s3.address() as AddressInfo;
        const data = {
          region: 'eu-west-1',
          accessKeyId: 'AKIDROUTE',
          secretAccessKey: 'secret',
          customEndpoints: 'true',
          s3Endpoint: `http://127.0.0.1:${port}`,
        };
        const ok = await createCredential(p, 'aws ok', 'aws', data);
        expect((await test(ok)).json()).toEqual({ status: 'OK', message: 'Connection tested successfully' });
        expect(calls[0]).toMatchObject({ method: 'GET', url: '/' });
        expect(calls[0]?.auth).toMatch(
          /^AWS4-HMAC-SHA256 Credential=AKIDROUTE\/\d{8}\/eu-west-1\/s3\/aws4_request/,
        );
        const bad = await createCredential(p, 'aws bad', 'aws', { ...data, accessKeyId: 'AKIDOTHER' });
        expect((await test(bad)).json()).toEqual({
          status: 'Error',
          message: 'InvalidAccessKeyId: The AWS Access Key Id you provided does not exist in our records.',
        });
      } finally {
        await new Promise<void>((resolve) => s3.close(() => resolve()));
      }
    });

    it("is a 404 for another account's credential, and for an unknown id", async () => {
      const id = await createCredential(p, 'mine', 'redis', REDIS);
      const other = await otherAccountKey(p);
      const res = await test(id, other);
      expect(res.statusCode).toBe(404);
      expect((await test('cred_unknown')).statusCode).toBe(404);
    });
  },
);

describe('the credential test and the outbound guard', () => {
  let p: TestPlatform;
  afterAll(() => p?.close());

  it('refuses a loopback host unless OUTBOUND_ALLOW_HOSTS allows it', async () => {
    p = await workflowPlatform('sqlite', { OUTBOUND_ALLOW_HOSTS: '' });
    const id = await createCredential(p, 'pg local', 'postgres', PG);
    const res = await p.request({ method: 'POST', url: `/api/v1/credentials/${id}/test` });
    expect(res.json()).toEqual({
      status: 'Error',
      message: "Host '127.0.0.1' is not allowed: outbound calls may not reach private or internal addresses",
    });
  });
});
