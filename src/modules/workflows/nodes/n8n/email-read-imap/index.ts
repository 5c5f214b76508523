import type { ImapFlow } from 'imapflow';
import { type Static, Type } from 'typebox';
import { isExpression } from '../../../engine/expressions.js';
import { defineNode, type ListenerContext, NodeOperationError, output } from '../../../engine/node-type.js';
import type { Item, ValidationProblem } from '../../../engine/types.js';
import { credentialOf } from '../credential-of.js';
import { imapClient, searchOf } from './imap.js';
import { type ImapFormat, messageItem } from './message.js';

/** A message larger than this is emitted with its headers only (and a `warning`), never downloaded. */
export const MAX_MESSAGE_BYTES = 25 * 1024 * 1024;
/** Messages one execution carries; more wait for the next round (started at once). */
const BATCH = 50;

const EmailReadImapParameters = Type.Object(
  {
    mailbox: Type.String({ default: 'INBOX', minLength: 1, maxLength: 1_000 }),
    postProcessAction: Type.Enum(['read', 'nothing'] as const, { default: 'read' }),
    downloadAttachments: Type.Boolean({ default: false }),
    format: Type.Enum(['simple', 'resolved', 'raw'] as const, { default: 'simple' }),
    dataPropertyAttachmentsPrefixName: Type.String({ default: 'attachment_', maxLength: 100 }),
    options: Type.Object(
      {
        customEmailConfig: Type.Optional(Type.String({ maxLength: 10_000 })),
        forceReconnect: Type.Optional(Type.Number({ minimum: 0 })),
        trackLastMessageId: Type.Optional(Type.Boolean()),
        // v1 only (v2 moved it to the credential): accept a certificate TLS cannot verify.
        allowUnauthorizedCerts: Type.Optional(Type.Boolean()),
      },
      { additionalProperties: false, default: {} },
    ),
  },
  { additionalProperties: false },
);
type Params = Static<typeof EmailReadImapParameters>;

function problemsOf(p: Params): ValidationProblem[] {
  const problems: ValidationProblem[] = [];
  for (const [name, value] of Object.entries(p))
    if (isExpression(value))
      problems.push({
        path: `parameters.${name}`,
        message: 'must be fixed: the trigger listens before any run',
      });
  const config = p.options.customEmailConfig;
  if (config !== undefined && !isExpression(config))
    try {
      searchOf(config);
    } catch (err) {
      problems.push({ path: 'parameters.options.customEmailConfig', message: (err as Error).message });
    }
  return problems;
}

/** What one new message becomes, bounded by MAX_MESSAGE_BYTES. */
async function fetchItem(client: ImapFlow, uid: number, p: Params): Promise<Item> {
  const head = await client.fetchOne(String(uid), { size: true, envelope: true }, { uid: true });
  if (head && (head.size ?? 0) > MAX_MESSAGE_BYTES)
    return {
      json: {
        subject: head.envelope?.subject ?? '',
        from: head.envelope?.from?.map((a) => a.address ?? '').join(', ') ?? '',
        date: head.envelope?.date?.toISOString() ?? null,
        warning: `The message is ${head.size} bytes, more than ${MAX_MESSAGE_BYTES}: not downloaded`,
      },
    };
  const full = await client.fetchOne(String(uid), { source: true }, { uid: true });
  if (full === false || !full.source) throw new NodeOperationError(`Message ${uid} could not be fetched`);
  return messageItem(full.source, p.format as ImapFormat, {
    downloadAttachments: p.format === 'resolved' || p.downloadAttachments,
    prefix: p.dataPropertyAttachmentsPrefixName,
  });
}

/**
 * The listening side: one IMAP connection per active trigger, IDLE on the mailbox (imapflow idles by
 * itself), a look at every new-mail notice and at start. What is new is recorded in the dedupe history
 * (`uidValidity:uid`) before its execution starts, so a message starts one execution however many
 * worker processes listen, with or without mark-as-read.
 */
async function listen(ctx: ListenerContext) {
  const p = ctx.parameters as Params;
  const search = searchOf(p.options.customEmailConfig);
  const stored = await credentialOf(ctx.node, 'imap', (id) => ctx.credential(id));
  // v1 read allowUnauthorizedCerts from the node's options; it adds to the credential's setting.
  const credential =
    (ctx.node.typeVersion ?? 1) < 2 && p.options.allowUnauthorizedCerts === true
      ? { ...stored, allowUnauthorizedCerts: 'true' }
      : stored;
  const dedupe = ctx.deps.dedupe;
  if (!dedupe) throw new Error('The Email Trigger needs the dedupe history');
  const scope = { workflowId: ctx.workflowId, scope: `imap:${ctx.node.id}` };
  let client: ImapFlow | null = null;
  let stopped = false;
  let running: Promise<void> = Promise.resolve();
  let again = false;

  /** The highest UID looked at in this session (per UIDVALIDITY): each look reads only what is after. */
  let seen = { validity: '', uid: 0 };
  const look = async (c: ImapFlow) => {
    const validity = String(c.mailbox ? c.mailbox.uidValidity : '');
    if (seen.validity !== validity) seen = { validity, uid: 0 };
    const key = (uid: number) => `${validity}:${uid}`;
    for (;;) {
      const found = (await c.search(search, { uid: true })) || [];
      const uids = found
        .filter((u) => u > seen.uid)
        .sort((a, b) => a - b)
        .slice(0, BATCH);
      if (uids.length === 0 || stopped) return;
      const items = new Map<number, Item>();
      for (const uid of uids) items.set(uid, await fetchItem(c, uid, p));
      seen.uid = uids[uids.length - 1] as number;
      // Marked only once read whole, as n8n does: a failure above leaves them unread.
      if (p.postProcessAction === 'read') await c.messageFlagsAdd(uids, ['\\Seen'], { uid: true });
      // Recorded after the download, before the execution: another process that read them too starts none.
      const fresh = await dedupe.recordKeys(scope, uids.map(key));
      const batch = uids.filter((u) => fresh.has(key(u))).map((u) => items.get(u) as Item);
      if (batch.length > 0) await ctx.emit(batch);
    }
  };
  const schedule = () => {
    if (stopped || !client) return;
    const c = client;
    again = true;
    running = running.then(async () => {
      if (!again || stopped) return;
      again = false;
      try {
        await look(c);
      } catch (err) {
        ctx.log.warn({ err, workflowId: ctx.workflowId, node: ctx.node.name }, 'IMAP look failed');
      }
    });
  };

  const connect = async () => {
    const c = await imapClient(credential, ctx.deps.outboundHost, { listening: true });
    c.on('error', (err: Error) => ctx.log.warn({ err, node: ctx.node.name }, 'IMAP connection error'));
    c.on('close', () => {
      if (!stopped && client === c) ctx.failed(new Error('IMAP connection closed'));
    });
    c.on('exists', schedule);
    try {
      await c.connect();
      await c.mailboxOpen(p.mailbox);
    } catch (err) {
      c.close();
      const e = err as Error & { responseText?: string };
      throw new NodeOperationError(e.responseText ?? e.message);
    }
    client = c;
    schedule();
  };
  await connect();

  // n8n's forceReconnect: a fresh session every so many minutes (some servers drop long IDLEs).
  const minutes = p.options.forceReconnect ?? 60;
  const timer =
    minutes > 0
      ? setInterval(() => {
          const old = client;
          client = null;
          old?.logout().catch(() => old.close());
          connect().catch((err: Error) => ctx.failed(err));
        }, Math.max(1, minutes) * 60_000)
      : undefined;
  timer?.unref();

  return {
    async stop() {
      stopped = true;
      clearInterval(timer);
      const c = client;
      client = null;
      await running.catch(() => {});
      await c?.logout().catch(() => c.close());
    },
  };
}

/**
 * n8n's Email Trigger (IMAP) v1, v2 and v2.1 (v1 has the same parameters, plus the options'
 * `allowUnauthorizedCerts`, which v2 moved to the credential) over the `imap` credential: new messages of a mailbox start
 * the workflow (one execution per round of new mail). In a run the trigger passes the messages on.
 */
export const emailReadImapNode = defineNode({
  type: 'n8n-nodes-base.emailReadImap',
  versions: [1, 2, 2.1],
  schema: EmailReadImapParameters,
  trigger: true,
  inputs: 0,
  check: problemsOf,
  listener: { start: listen },
  async execute(ctx) {
    return output(ctx.items);
  },
});
