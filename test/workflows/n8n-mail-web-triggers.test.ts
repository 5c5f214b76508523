import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ImapFlow } from 'imapflow';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOutboundHostGuard } from '../../src/core/http/outbound-host.js';
import { credentialTests } from '../../src/modules/workflows/nodes/credential-tests.js';
import { type Dovecot, dovecotMissing, startDovecot } from '../helpers/dovecot.js';
import type { TestPlatform } from '../helpers/platform.js';
import { testDialects } from '../helpers/services.js';
import { until } from '../helpers/until.js';
import { activate, createCredential, createWorkflow, n8nNode, settled, workflowPlatform } from './support.js';

const missing = dovecotMissing();

interface Listed {
  id: string;
  status: string;
}
interface Detail {
  status: string;
  data: {
    resultData: {
      runData: Record<
        string,
        Array<{
          data: {
            main: Array<
              Array<{
                json: Record<string, unknown>;
                binary?: Record<string, { data: string; fileName?: string; mimeType: string }>;
              }>
            >;
          };
        }>
      >;
    };
  };
}

async function runsOf(p: TestPlatform, workflowId: string): Promise<Listed[]> {
  const res = await p.request({
    method: 'GET',
    url: `/api/v1/executions?workflowId=${workflowId}&limit=250`,
  });
  return (res.json() as { data: Listed[] }).data;
}
const outputOf = (d: Detail, node: string) => d.data.resultData.runData[node]?.[0]?.data.main[0] ?? [];

/** A mail with a text and an HTML part and a CSV attachment, as a client would append it. */
function mime(subject: string, n: number): string {
  return [
    'From: Ada <ada@example.com>',
    'To: team@example.com',
    `Subject: ${subject}`,
    'MIME-Version: 1.0',
    'Content-Type: multipart/mixed; boundary="b1"',
    '',
    '--b1',
    'Content-Type: text/plain; charset=utf-8',
    '',
    `hello ${n}`,
    '--b1',
    'Content-Type: text/csv; name="data.csv"',
    'Content-Disposition: attachment; filename="data.csv"',
    '',
    `n\r\n${n}`,
    '--b1--',
    '',
  ].join('\r\n');
}

describe.skipIf(missing !== null).each(await testDialects())(
  'Email Trigger (IMAP) against dovecot on %s',
  (dialect) => {
    let dovecot: Dovecot;
    let p: TestPlatform;
    let mailbox: ImapFlow;
    beforeAll(async () => {
      dovecot = await startDovecot({ ada: 'pw', bea: 'pw' });
      p = await workflowPlatform(dialect, { TRIGGER_LISTENER_SYNC_SECONDS: '1' });
      mailbox = new ImapFlow({
        host: '127.0.0.1',
        port: dovecot.port,
        secure: false,
        auth: { user: 'ada', pass: 'pw' },
        logger: false,
      });
      await mailbox.connect();
    });
    afterAll(async () => {
      await mailbox?.logout().catch(() => mailbox.close());
      await p?.close();
      await dovecot?.stop();
    });

    const credentialData = () => ({
      user: 'ada',
      password: 'pw',
      host: '127.0.0.1',
      port: String(dovecot.port),
      secure: 'false',
    });

    it('starts one execution per round of new mail while active, marks it read, attachments as binary', async () => {
      const cred = await createCredential(p, 'IMAP account', 'imap', credentialData());
      const id = await createWorkflow(p, {
        name: 'mail in',
        nodes: [
          n8nNode(
            'Email Trigger (IMAP)',
            'emailReadImap',
            2,
            { downloadAttachments: true, options: {} },
            {
              credentials: { imap: { id: cred, name: 'IMAP account' } },
            },
          ),
          n8nNode('No Operation', 'noOp', 1, {}),
        ],
        connections: {
          'Email Trigger (IMAP)': { main: [[{ node: 'No Operation', type: 'main', index: 0 }]] },
        },
        settings: {},
      });
      await mailbox.append('INBOX', mime('before activation', 1));
      await activate(p, id);
      // The mail already there is new to the trigger: it starts the first execution.
      const first = await until(async () => (await runsOf(p, id))[0], 'the first execution', 30_000);
      const detail = (await settled(p, first.id)) as unknown as Detail;
      expect(detail.status).toBe('success');
      const [item] = outputOf(detail, 'No Operation');
      expect(item?.json).toMatchObject({
        subject: 'before activation',
        textPlain: 'hello 1',
        from: 'Ada <ada@example.com>',
      });
      expect(item?.binary?.attachment_0).toMatchObject({ fileName: 'data.csv', mimeType: 'text/csv' });
      expect(Buffer.from(item?.binary?.attachment_0?.data ?? '', 'base64').toString()).toBe('n\r\n1');

      // New mail while listening (IDLE): another execution, with that mail only.
      await mailbox.append('INBOX', mime('while listening', 2));
      const second = await until(
        async () => {
          const runs = await runsOf(p, id);
          return runs.length >= 2 ? runs.find((r) => r.id !== first.id) : undefined;
        },
        'the second execution',
        30_000,
      );
      const next = (await settled(p, second.id)) as unknown as Detail;
      expect(outputOf(next, 'No Operation').map((i) => i.json.subject)).toEqual(['while listening']);

      // Both are marked read on the server.
      const lock = await mailbox.getMailboxLock('INBOX');
      try {
        const unseen = await mailbox.search({ seen: false }, { uid: true });
        expect(unseen).toEqual([]);
      } finally {
        lock.release();
      }

      // Deactivated: the listener stops; mail that comes meanwhile starts the workflow once re-activated.
      const off = await p.request({ method: 'POST', url: `/api/v1/workflows/${id}/deactivate` });
      expect(off.statusCode).toBe(200);
      await mailbox.append('INBOX', mime('while inactive', 3));
      expect(await runsOf(p, id)).toHaveLength(2);
      await activate(p, id);
      const third = await until(
        async () => {
          const runs = await runsOf(p, id);
          return runs.length >= 3 ? runs : undefined;
        },
        'the third execution',
        30_000,
      );
      expect(third).toHaveLength(3);
    });

    it('runs a v1 trigger as exported by templates (search config, allowUnauthorizedCerts in options)', async () => {
      const cred = await createCredential(p, 'IMAP v1', 'imap', credentialData());
      const id = await createWorkflow(p, {
        name: 'mail in v1',
        nodes: [
          n8nNode(
            'Email Trigger (IMAP)',
            'emailReadImap',
            1,
            {
              format: 'resolved',
              mailbox: 'INBOX',
              postProcessAction: 'nothing',
              options: { customEmailConfig: '["ALL"]', allowUnauthorizedCerts: true },
            },
            { credentials: { imap: { id: cred, name: 'IMAP v1' } } },
          ),
          n8nNode('No Operation', 'noOp', 1, {}),
        ],
        connections: {
          'Email Trigger (IMAP)': { main: [[{ node: 'No Operation', type: 'main', index: 0 }]] },
        },
        settings: {},
      });
      await activate(p, id);
      const first = await until(async () => (await runsOf(p, id))[0], 'the v1 execution', 30_000);
      const detail = (await settled(p, first.id)) as unknown as Detail;
      expect(detail.status).toBe('success');
      const subjects = outputOf(detail, 'No Operation').map((i) => i.json.subject);
      expect(subjects).toContain('before activation');
      const off = await p.request({ method: 'POST', url: `/api/v1/workflows/${id}/deactivate` });
      expect(off.statusCode).toBe(200);
    });

    // The bound is the trigger's, read from the size the server reports (nothing database-specific):
    // tested once per runtime, on SQLite, as each run uploads a 28 MiB mail.
    if (dialect === 'sqlite')
      it('a mail past the 25 MiB bound (a 28 MiB attachment) is not downloaded: its item says so, and the next mail runs', async () => {
        const bea = new ImapFlow({
          host: '127.0.0.1',
          port: dovecot.port,
          secure: false,
          auth: { user: 'bea', pass: 'pw' },
          logger: false,
        });
        await bea.connect();
        try {
          const cred = await createCredential(p, 'Bea IMAP', 'imap', { ...credentialData(), user: 'bea' });
          const id = await createWorkflow(p, {
            name: 'large mail in',
            nodes: [
              n8nNode(
                'Email Trigger (IMAP)',
                'emailReadImap',
                2,
                { downloadAttachments: true, options: {} },
                { credentials: { imap: { id: cred, name: 'Bea IMAP' } } },
              ),
              n8nNode('No Operation', 'noOp', 1, {}),
            ],
            connections: {
              'Email Trigger (IMAP)': { main: [[{ node: 'No Operation', type: 'main', index: 0 }]] },
            },
            settings: {},
          });
          // 28 MiB of attachment, base64 in lines as a mail client writes it: the size the server
          // reports is past the bound, so the trigger never fetches the body.
          const attachment = Buffer.alloc(21 * 1024 * 1024, 7)
            .toString('base64')
            .replace(/.{76}/g, '$&\r\n');
          const large = [
            'From: Bea <bea@example.com>',
            'To: team@example.com',
            'Subject: the large one',
            'MIME-Version: 1.0',
            'Content-Type: multipart/mixed; boundary="b1"',
            '',
            '--b1',
            'Content-Type: text/plain; charset=utf-8',
            '',
            'see attached',
            '--b1',
            'Content-Type: application/octet-stream; name="big.bin"',
            'Content-Transfer-Encoding: base64',
            'Content-Disposition: attachment; filename="big.bin"',
            '',
            attachment,
            '--b1--',
            '',
          ].join('\r\n');
          expect(large.length).toBeGreaterThan(27 * 1024 * 1024);
          await bea.append('INBOX', large);
          await activate(p, id);
          const first = await until(
            async () => (await runsOf(p, id))[0],
            "the large mail's execution",
            60_000,
          );
          const detail = (await settled(p, first.id)) as unknown as Detail;
          expect(detail.status).toBe('success');
          const [item] = outputOf(detail, 'No Operation');
          expect(item?.json).toMatchObject({ subject: 'the large one' });
          expect(String(item?.json.warning)).toMatch(/more than 26214400: not downloaded/);
          expect(item?.binary).toBeUndefined();
          // The listener goes on: the next mail is read in full.
          await bea.append('INBOX', mime('after the large one', 4));
          const second = await until(
            async () => (await runsOf(p, id)).find((r) => r.id !== first.id),
            'the next execution',
            30_000,
          );
          const next = (await settled(p, second.id)) as unknown as Detail;
          expect(outputOf(next, 'No Operation').map((i) => i.json.subject)).toEqual(['after the large one']);
          await p.request({ method: 'POST', url: `/api/v1/workflows/${id}/deactivate` });
        } finally {
          await bea.logout().catch(() => bea.close());
        }
      }, 120_000);

    it('refuses bad search rules at save and private hosts unless configured; tests the credential', async () => {
      const res = await p.request({
        method: 'POST',
        url: '/api/v1/workflows',
        payload: {
          name: 'bad rules',
          nodes: [
            n8nNode('Email Trigger (IMAP)', 'emailReadImap', 2, {
              options: { customEmailConfig: '["NOPE"]' },
            }),
          ],
          connections: {},
          settings: {},
        },
      });
      expect(res.statusCode).toBe(400);
      expect(res.body).toContain("Search criterion 'NOPE' is not supported here");

      const allowed = createOutboundHostGuard({ allowHosts: ['127.0.0.1'] });
      const imap = credentialTests.imap as NonNullable<(typeof credentialTests)['imap']>;
      expect(await imap(credentialData(), { outboundHost: allowed })).toEqual({
        status: 'OK',
        message: 'Connection successful!',
      });
      const wrong = await imap({ ...credentialData(), password: 'nope' }, { outboundHost: allowed });
      expect(wrong.status).toBe('Error');
      const blocked = await imap(credentialData(), {
        outboundHost: createOutboundHostGuard({ allowHosts: [] }),
      });
      expect(blocked).toEqual({ status: 'Error', message: expect.stringContaining('not allowed') });
    });
  },
);

describe.each(await testDialects())('RSS Feed Trigger against a local feed on %s', (dialect) => {
  let p: TestPlatform;
  let server: Server;
  let base: string;
  const entries: Array<{ title: string; date: string }> = [{ title: 'old', date: '2024-01-01T00:00:00Z' }];
  const rss = () =>
    `<?xml version="1.0"?><rss version="2.0"><channel><title>t</title><link>http://x</link><description>d</description>${entries
      .map(
        (e) =>
          `<item><title>${e.title}</title><link>http://x/${e.title}</link><pubDate>${new Date(e.date).toUTCString()}</pubDate></item>`,
      )
      .join('')}</channel></rss>`;
  beforeAll(async () => {
    server = createServer((_req, res) =>
      res.writeHead(200, { 'content-type': 'application/rss+xml' }).end(rss()),
    );
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    p = await workflowPlatform(dialect, { TRIGGER_LISTENER_SYNC_SECONDS: '1' });
  });
  afterAll(async () => {
    await p?.close();
    await new Promise<void>((r) => server.close(() => r()));
  });

  it('notes the newest date at activation, then starts the workflow with newer items only', async () => {
    const id = await createWorkflow(p, {
      name: 'feed',
      nodes: [
        n8nNode('RSS Feed Trigger', 'rssFeedReadTrigger', 1, {
          pollTimes: { item: [{ mode: 'everyMinute' }] },
          feedUrl: `${base}/feed`,
        }),
      ],
      connections: {},
      settings: {},
    });
    await activate(p, id);
    const api = p.ctx.apis.workflows;
    if (!api) throw new Error('workflows module not loaded');
    // The first poll notes the newest date (no execution); a restart of the listener polls again.
    await until(async () => {
      const row = await p.ctx.db
        .selectFrom('workflow_dedupe_latest')
        .select('value')
        .where('workflow_id', '=', id)
        .executeTakeFirst();
      return row !== undefined;
    }, 'the first poll');
    expect(await runsOf(p, id)).toHaveLength(0);
    entries.push({ title: 'fresh', date: '2025-06-01T00:00:00Z' });
    // Saving restarts the listener: it polls at once.
    const wf = (await p.request({ method: 'GET', url: `/api/v1/workflows/${id}` })).json() as Record<
      string,
      unknown
    >;
    const put = await p.request({
      method: 'PUT',
      url: `/api/v1/workflows/${id}`,
      payload: { name: 'feed again', nodes: wf.nodes, connections: wf.connections, settings: wf.settings },
    });
    expect(put.statusCode).toBe(200);
    const run = await until(async () => (await runsOf(p, id))[0], 'an execution for the new item', 30_000);
    const detail = (await settled(p, run.id)) as unknown as Detail;
    expect(outputOf(detail, 'RSS Feed Trigger').map((i) => i.json.title)).toEqual(['fresh']);
  });

  it('reads a feed in RSS Read, and refuses a feed on a private host unless allowed', async () => {
    const guarded = await workflowPlatform(dialect, { OUTBOUND_ALLOW_HOSTS: '' });
    try {
      for (const [platform, expected] of [
        [p, 'success'],
        [guarded, 'error'],
      ] as const) {
        const id = await createWorkflow(platform, {
          name: 'read feed',
          nodes: [
            n8nNode('Manual', 'manualTrigger', 1, {}),
            n8nNode('RSS Read', 'rssFeedRead', 1.2, { url: `${base}/feed`, options: {} }),
          ],
          connections: { Manual: { main: [[{ node: 'RSS Read', type: 'main', index: 0 }]] } },
          settings: {},
        });
        const res = await platform.request({
          method: 'POST',
          url: `/api/v1/workflows/${id}/run`,
          payload: {},
        });
        expect(res.statusCode, res.body).toBe(200);
        const detail = res.json() as Detail;
        expect(detail.status).toBe(expected);
        if (expected === 'success')
          expect(outputOf(detail, 'RSS Read').map((i) => i.json.title)).toEqual(['old', 'fresh']);
      }
    } finally {
      await guarded.close();
    }
  });
});
