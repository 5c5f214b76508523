import type { MailAttachment, MailOptions, SentMessageInfo } from 'nodemailer';
import { Type } from 'typebox';
import {
  defineNode,
  type NodeExecutionContext,
  NodeOperationError,
  output,
} from '../../../engine/node-type.js';
import type { Item, Json, ValidationProblem } from '../../../engine/types.js';
import { credentialOf } from '../credential-of.js';
import { smtpTransport } from './smtp.js';

/** Attachments of one mail together, decoded; more is refused before any connection is made. */
export const MAX_ATTACHMENT_BYTES = 25 * 1024 * 1024;
/** Text and HTML bodies, each. */
const MAX_BODY_CHARS = 5 * 1024 * 1024;

const SendOptions = {
  appendAttribution: Type.Optional(Type.Boolean()),
  attachments: Type.Optional(Type.String()),
  ccEmail: Type.Optional(Type.String()),
  bccEmail: Type.Optional(Type.String()),
  allowUnauthorizedCerts: Type.Optional(Type.Boolean()),
  replyTo: Type.Optional(Type.String()),
};

function v2Schema(defaultFormat: 'text' | 'html') {
  return Type.Object(
    {
      resource: Type.Literal('email', { default: 'email' }),
      operation: Type.Enum(['send', 'sendAndWait'] as const, { default: 'send' }),
      fromEmail: Type.String({ default: '' }),
      toEmail: Type.String({ default: '' }),
      subject: Type.String({ default: '' }),
      emailFormat: Type.Enum(['text', 'html', 'both'] as const, { default: defaultFormat }),
      text: Type.String({ default: '' }),
      html: Type.String({ default: '' }),
      options: Type.Object(SendOptions, { additionalProperties: false, default: {} }),
    },
    { additionalProperties: false },
  );
}

const EmailSendV1Parameters = Type.Object(
  {
    fromEmail: Type.String({ default: '' }),
    toEmail: Type.String({ default: '' }),
    ccEmail: Type.String({ default: '' }),
    bccEmail: Type.String({ default: '' }),
    subject: Type.String({ default: '' }),
    text: Type.String({ default: '' }),
    html: Type.String({ default: '' }),
    attachments: Type.String({ default: '' }),
    options: Type.Object(
      { allowUnauthorizedCerts: Type.Optional(Type.Boolean()), replyTo: Type.Optional(Type.String()) },
      { additionalProperties: false, default: {} },
    ),
  },
  { additionalProperties: false },
);

/** One mail as both versions describe it. */
interface Mail {
  from: string;
  to: string;
  cc?: string | undefined;
  bcc?: string | undefined;
  replyTo?: string | undefined;
  subject: string;
  text?: string | undefined;
  html?: string | undefined;
  attachments: string;
  allowUnauthorizedCerts: boolean;
}

/** The item's binary properties named (comma-separated) as attachments, bounded in total. */
export function attachmentsOf(item: Item | undefined, names: string, index: number): MailAttachment[] {
  const properties = names
    .split(',')
    .map((n) => n.trim())
    .filter(Boolean);
  if (properties.length === 0 || !item?.binary) return [];
  let total = 0;
  const out: MailAttachment[] = [];
  for (const property of properties) {
    const meta = item.binary[property];
    if (!meta)
      throw new NodeOperationError(
        `This operation expects the node's input data to contain a binary file '${property}', but none was found [item ${index}]`,
      );
    // Counted before decoding: a huge attachment is refused without a second copy in memory.
    total += Buffer.byteLength(meta.data, 'base64');
    if (total > MAX_ATTACHMENT_BYTES)
      throw new NodeOperationError(
        `The attachments are larger than ${MAX_ATTACHMENT_BYTES / 1024 / 1024} MB together [item ${index}]`,
        {
          description: `Attachment '${property}' brings them to ${total} bytes; mail servers refuse such mails too`,
        },
      );
    out.push({
      filename: meta.fileName || 'unknown',
      content: Buffer.from(meta.data, 'base64'),
      cid: property,
      contentType: meta.mimeType,
    });
  }
  return out;
}

const ATTRIBUTION = 'This email was sent automatically.';

function bounded(value: string | undefined, name: string): string | undefined {
  if (value !== undefined && value.length > MAX_BODY_CHARS)
    throw new NodeOperationError(`The ${name} is longer than ${MAX_BODY_CHARS} characters`);
  return value;
}

/** Plain JSON of nodemailer's answer (accepted, rejected, envelope, messageId, response…). */
const infoJson = (info: SentMessageInfo): Record<string, Json> =>
  JSON.parse(JSON.stringify(info)) as Record<string, Json>;

async function sendAll(
  ctx: NodeExecutionContext<unknown>,
  mailOf: (index: number) => Promise<Mail>,
): Promise<Item[]> {
  const credential = await credentialOf(ctx.node, 'smtp', (id) => ctx.credential(id));
  const out: Item[] = [];
  for (let i = 0; i < ctx.items.length; i++) {
    const mail = await mailOf(i);
    const message: MailOptions = {
      from: mail.from,
      to: mail.to,
      subject: mail.subject,
      ...(mail.cc ? { cc: mail.cc } : {}),
      ...(mail.bcc ? { bcc: mail.bcc } : {}),
      ...(mail.replyTo ? { replyTo: mail.replyTo } : {}),
      ...(mail.text !== undefined ? { text: bounded(mail.text, 'text') } : {}),
      ...(mail.html !== undefined ? { html: bounded(mail.html, 'HTML') } : {}),
    };
    const attachments = attachmentsOf(ctx.items[i], mail.attachments, i);
    if (attachments.length > 0) message.attachments = attachments;
    const transport = await smtpTransport(credential, ctx.deps.outboundHost, {
      allowUnauthorizedCerts: mail.allowUnauthorizedCerts,
    });
    try {
      out.push({ json: infoJson(await transport.sendMail(message)), pairedItem: { item: i } });
    } catch (err) {
      const e = err as Error & { responseCode?: number; response?: string };
      throw new NodeOperationError(e.message, {
        ...(e.response ? { description: `SMTP ${e.responseCode ?? ''} ${e.response}`.trim() } : {}),
      });
    } finally {
      transport.close();
    }
  }
  return out;
}

const refuseSendAndWait = (p: { operation: string }): ValidationProblem[] =>
  p.operation === 'sendAndWait'
    ? [
        {
          path: 'parameters.operation',
          message: "'sendAndWait' is not supported here; use 'send' and a Wait node",
        },
      ]
    : [];

const EmailSendV2Parameters = v2Schema('text');

/** n8n's Send Email v2 and v2.1 (text by default in v2, HTML in v2.1) over the `smtp` credential. */
function emailSendV2(versions: number[], schema: typeof EmailSendV2Parameters) {
  return defineNode({
    type: 'n8n-nodes-base.emailSend',
    versions,
    schema,
    check: refuseSendAndWait,
    async execute(ctx) {
      const out = await sendAll(ctx as NodeExecutionContext<unknown>, async (i) => {
        const p = await ctx.params(i);
        const o = p.options;
        const wantsText = p.emailFormat === 'text' || p.emailFormat === 'both';
        const wantsHtml = p.emailFormat === 'html' || p.emailFormat === 'both';
        let text = wantsText ? p.text : undefined;
        let html = wantsHtml ? p.html : undefined;
        // n8n appends its own advertisement by default from v2.1; here only when asked, and neutral.
        if (o.appendAttribution === true) {
          if (html !== undefined) html = `${html}<br><br>---<br><em>${ATTRIBUTION}</em>`;
          else text = `${text ?? ''}\n\n---\n${ATTRIBUTION}`;
        }
        return {
          from: p.fromEmail,
          to: p.toEmail,
          cc: o.ccEmail,
          bcc: o.bccEmail,
          replyTo: o.replyTo,
          subject: p.subject,
          text,
          html,
          attachments: o.attachments ?? '',
          allowUnauthorizedCerts: o.allowUnauthorizedCerts === true,
        };
      });
      return output(out);
    },
  });
}

/** n8n's Send Email v1: text and HTML side by side, attachments and cc/bcc at the top level. */
const emailSendV1 = defineNode({
  type: 'n8n-nodes-base.emailSend',
  versions: [1],
  schema: EmailSendV1Parameters,
  async execute(ctx) {
    const out = await sendAll(ctx as NodeExecutionContext<unknown>, async (i) => {
      const p = await ctx.params(i);
      return {
        from: p.fromEmail,
        to: p.toEmail,
        cc: p.ccEmail,
        bcc: p.bccEmail,
        replyTo: p.options.replyTo,
        subject: p.subject,
        text: p.text || undefined,
        html: p.html || undefined,
        attachments: p.attachments,
        allowUnauthorizedCerts: p.options.allowUnauthorizedCerts === true,
      };
    });
    return output(out);
  },
});

export const emailSendNodes = [
  emailSendV1,
  emailSendV2([2], EmailSendV2Parameters),
  emailSendV2([2.1], v2Schema('html') as unknown as typeof EmailSendV2Parameters),
];
