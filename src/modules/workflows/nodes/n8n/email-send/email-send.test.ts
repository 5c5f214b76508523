import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { type ParsedMail, simpleParser } from 'mailparser';
import { SMTPServer, type SMTPServerOptions } from 'smtp-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOutboundHostGuard } from '../../../../../core/http/outbound-host.js';
import { binaryOf } from '../../../engine/binary.js';
import { ctx, jsonOf, testDeps, workflow } from '../../../engine/testing.js';
import type { Item } from '../../../engine/types.js';
import { WorkflowEngine } from '../../../engine/workflow-engine.js';
import { defaultNodeRegistry } from '../../index.js';
import { testSmtpCredential } from './smtp.js';

interface Received {
  mail: ParsedMail;
  secure: boolean;
  user: string | undefined;
  to: string[];
}

/** A self-signed certificate for `localhost`, made for this run (openssl, ships with Debian). */
function selfSigned(): { key: string; cert: string } {
  const dir = mkdtempSync(path.join(tmpdir(), 'smtp-cert-'));
  try {
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'ec',
        '-pkeyopt',
        'ec_paramgen_curve:prime256v1',
        '-nodes',
        '-days',
        '1',
        '-subj',
        '/CN=localhost',
        '-keyout',
        path.join(dir, 'key.pem'),
        '-out',
        path.join(dir, 'cert.pem'),
      ],
      { stdio: 'ignore', timeout: 20_000 },
    );
    return {
      key: readFileSync(path.join(dir, 'key.pem'), 'utf8'),
      cert: readFileSync(path.join(dir, 'cert.pem'), 'utf8'),
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const received: Received[] = [];
const servers: SMTPServer[] = [];
const ports: Record<'starttls' | 'tls' | 'plain', number> = { starttls: 0, tls: 0, plain: 0 };

async function listen(options: SMTPServerOptions): Promise<number> {
  const server = new SMTPServer({
    authOptional: false,
    size: 30 * 1024 * 1024,
    logger: false,
    onAuth(auth, _session, cb) {
      if (auth.username === 'ada' && auth.password === 'pw') cb(null, { user: 'ada' });
      else cb(new Error('Invalid username or password'));
    },
    onData(stream, session, cb) {
      simpleParser(stream)
        .then((mail) => {
          received.push({
            mail,
            secure: session.secure,
            user: session.user as string | undefined,
            to: session.envelope.rcptTo.map((r) => r.address),
          });
          cb();
        })
        .catch(cb);
    },
    ...options,
  });
  // A client that gives up on the certificate closes mid-handshake: the server reports it, nothing more.
  server.on('error', () => {});
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.server.address() as AddressInfo).port;
}

beforeAll(async () => {
  const { key, cert } = selfSigned();
  ports.starttls = await listen({ key, cert });
  ports.tls = await listen({ key, cert, secure: true });
  ports.plain = await listen({ hideSTARTTLS: true, allowInsecureAuth: true });
});
afterAll(async () => {
  await Promise.all(servers.map((s) => new Promise<void>((resolve) => s.close(() => resolve()))));
});

const credentials: Record<string, Record<string, string>> = {};
const credentialFor = (mode: keyof typeof ports, extra: Record<string, string> = {}) => {
  const id = `smtp_${Object.keys(credentials).length}`;
  credentials[id] = {
    host: '127.0.0.1',
    port: String(ports[mode]),
    secure: mode === 'tls' ? 'true' : 'false',
    user: 'ada',
    password: 'pw',
    ...(mode === 'plain' ? { disableStartTls: 'true' } : {}),
    ...extra,
  };
  return id;
};

function engineWith(allowHosts: string[]) {
  return new WorkflowEngine(
    testDeps({
      outboundHost: createOutboundHostGuard({ allowHosts }),
      credential: async (id) => {
        const c = credentials[id];
        if (!c) throw new Error(`Credential '${id}' not found`);
        return c;
      },
    }),
    defaultNodeRegistry,
  );
}
const engine = engineWith(['127.0.0.1']);

async function send(
  parameters: Record<string, unknown>,
  credentialId: string,
  items: Item[] = [{ json: { who: 'Grace' } }],
  typeVersion = 2.1,
  e = engine,
) {
  const d = workflow(
    [
      { name: 'Start', type: 'n8n-nodes-base.manualTrigger', typeVersion: 1 },
      {
        name: 'Send Email',
        type: 'n8n-nodes-base.emailSend',
        typeVersion,
        parameters,
        credentials: { smtp: { id: credentialId, name: 'SMTP account' } },
      },
    ],
    [['Start', 'Send Email']],
  );
  expect(e.validate(d)).toEqual([]);
  const started = Date.now();
  const out = await e.run(d, { nodeName: 'Start', items }, ctx);
  return { out, json: jsonOf(out.state, 'Send Email'), ms: Date.now() - started };
}

const mailParams = {
  fromEmail: 'platform@example.com',
  toEmail: 'grace@example.com',
  subject: '={{ "Hello " + $json.who }}',
  options: { allowUnauthorizedCerts: true },
};

describe('Send Email (n8n-nodes-base.emailSend) against smtp-server', () => {
  it('sends HTML over STARTTLS (self-signed certificate allowed by the option), authenticated', async () => {
    const before = received.length;
    const { out, json } = await send(
      { ...mailParams, html: '=<p>Hi <b>{{ $json.who }}</b></p>' },
      credentialFor('starttls'),
    );
    expect(out.status).toBe('success');
    expect(json[0]).toMatchObject({ accepted: ['grace@example.com'], rejected: [] });
    expect(received).toHaveLength(before + 1);
    const got = received.at(-1) as Received;
    expect(got.secure).toBe(true);
    expect(got.user).toBe('ada');
    expect(got.mail.subject).toBe('Hello Grace');
    expect(got.mail.html).toContain('<p>Hi <b>Grace</b></p>');
    // No advertisement appended unless asked.
    expect(got.mail.html).not.toContain('sent automatically');
  });

  it('refuses the self-signed certificate when the option is off', async () => {
    const { out } = await send({ ...mailParams, options: {}, html: 'x' }, credentialFor('starttls'));
    expect(out.status).toBe('error');
    expect(out.state.error?.message).toMatch(/self[- ]signed certificate/i);
  });

  it('sends text and HTML over TLS from the start, with cc, bcc, reply-to and binary attachments', async () => {
    const pdf = Buffer.from('%PDF-1.4 tiny');
    const item: Item = {
      json: { who: 'Ada' },
      binary: {
        data: binaryOf(Buffer.from('name,score\nada,3\n'), 'text/csv', 'scores.csv'),
        report: binaryOf(pdf, 'application/pdf', 'report.pdf'),
      },
    };
    const { out } = await send(
      {
        ...mailParams,
        emailFormat: 'both',
        text: '=plain {{ $json.who }}',
        html: '<i>rich</i>',
        options: {
          allowUnauthorizedCerts: true,
          attachments: 'data, report',
          ccEmail: 'cc@example.com',
          bccEmail: 'bcc@example.com',
          replyTo: 'reply@example.com',
          appendAttribution: true,
        },
      },
      credentialFor('tls'),
      [item],
    );
    expect(out.status).toBe('success');
    const got = received.at(-1) as Received;
    expect(got.secure).toBe(true);
    expect(got.to.sort()).toEqual(['bcc@example.com', 'cc@example.com', 'grace@example.com']);
    expect(got.mail.text).toContain('plain Ada');
    expect(got.mail.html).toContain('<i>rich</i>');
    expect(got.mail.html).toContain('This email was sent automatically.');
    expect(got.mail.replyTo?.text).toBe('reply@example.com');
    expect(got.mail.attachments.map((a) => [a.filename, a.contentType, a.content.toString()])).toEqual([
      ['scores.csv', 'text/csv', 'name,score\nada,3\n'],
      ['report.pdf', 'application/pdf', '%PDF-1.4 tiny'],
    ]);
  });

  it('sends plain text with STARTTLS disabled (v2), and v1 parameters', async () => {
    const v2 = await send(
      { ...mailParams, options: {}, text: 'no tls here' },
      credentialFor('plain'),
      undefined,
      2,
    );
    expect(v2.out.status).toBe('success');
    expect(received.at(-1)?.secure).toBe(false);
    expect(received.at(-1)?.mail.text?.trim()).toBe('no tls here');
    const v1 = await send(
      {
        fromEmail: 'a@example.com',
        toEmail: 'b@example.com',
        subject: 'v1',
        text: 'one',
        options: { allowUnauthorizedCerts: true },
      },
      credentialFor('starttls'),
      undefined,
      1,
    );
    expect(v1.out.status).toBe('success');
    expect(received.at(-1)?.mail.subject).toBe('v1');
  });

  it('fails on wrong credentials and on a missing binary property', async () => {
    const wrong = await send({ ...mailParams, text: 'x' }, credentialFor('starttls', { password: 'nope' }));
    expect(wrong.out.state.error?.message).toMatch(/Invalid login|Invalid username/);
    const missing = await send(
      { ...mailParams, text: 'x', options: { attachments: 'nothing', allowUnauthorizedCerts: true } },
      credentialFor('starttls'),
      [{ json: {}, binary: { data: binaryOf(Buffer.from('x'), 'text/plain') } }],
    );
    expect(missing.out.state.error?.message).toContain("binary file 'nothing'");
  });

  it('refuses a 100 MB attachment before connecting, quickly, with a clear node error', async () => {
    const before = received.length;
    const huge: Item = {
      json: {},
      binary: { data: binaryOf(Buffer.alloc(100 * 1024 * 1024, 1), 'application/octet-stream', 'huge.bin') },
    };
    const { out, ms } = await send(
      { ...mailParams, text: 'x', options: { attachments: 'data' } },
      credentialFor('starttls'),
      [huge],
    );
    expect(out.status).toBe('error');
    expect(out.state.error?.message).toBe('The attachments are larger than 25 MB together [item 0]');
    expect(ms).toBeLessThan(10_000);
    expect(received).toHaveLength(before);
  });

  it('refuses private SMTP hosts unless configuration allows them', async () => {
    const { out } = await send(
      { ...mailParams, text: 'x' },
      credentialFor('starttls'),
      undefined,
      2.1,
      engineWith([]),
    );
    expect(out.state.error?.message).toBe(
      "Host '127.0.0.1' is not allowed: outbound calls may not reach private or internal addresses",
    );
  });

  it("tests an smtp credential as n8n's credential test does", async () => {
    const guard = createOutboundHostGuard({ allowHosts: ['127.0.0.1'] });
    const ok = await testSmtpCredential(credentials[credentialFor('tls')] as Record<string, string>, guard);
    // Verification checks the certificate: the self-signed one fails, a clear Error answer.
    expect(ok.status).toBe('Error');
    const plain = await testSmtpCredential(
      credentials[credentialFor('plain')] as Record<string, string>,
      guard,
    );
    expect(plain).toEqual({ status: 'OK', message: 'Connection successful!' });
    const wrong = await testSmtpCredential(
      { ...(credentials[credentialFor('plain')] as Record<string, string>), password: 'x' },
      guard,
    );
    expect(wrong.status).toBe('Error');
    const blocked = await testSmtpCredential(
      credentials[credentialFor('plain')] as Record<string, string>,
      createOutboundHostGuard({ allowHosts: [] }),
    );
    expect(blocked).toEqual({ status: 'Error', message: expect.stringContaining('not allowed') });
  });
});
