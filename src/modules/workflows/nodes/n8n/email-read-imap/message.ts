import type { ParsedMail } from 'mailparser';
import { binaryOf } from '../../../engine/binary.js';
import type { BinaryData, Item, Json } from '../../../engine/types.js';

export type ImapFormat = 'simple' | 'resolved' | 'raw';

/** Headers n8n's simple format puts at the top level; the others go under `metadata`. */
const TOP_LEVEL = ['cc', 'date', 'from', 'subject', 'to'];

/** Header lines as `{name: raw value}` (the first of each name), as n8n shows them. */
function headerValues(parsed: ParsedMail): Record<string, string> {
  const out: Record<string, string> = {};
  for (const { key, line } of parsed.headerLines) {
    if (key in out) continue;
    const colon = line.indexOf(':');
    out[key] = (colon >= 0 ? line.slice(colon + 1) : line).trim();
  }
  return out;
}

const plain = (value: unknown): Json => JSON.parse(JSON.stringify(value ?? null)) as Json;

function attachmentsOf(parsed: ParsedMail, prefix: string): Record<string, BinaryData> | undefined {
  if (parsed.attachments.length === 0) return undefined;
  const binary: Record<string, BinaryData> = {};
  parsed.attachments.forEach((a, i) => {
    binary[`${prefix}${i}`] = binaryOf(a.content, a.contentType, a.filename);
  });
  return binary;
}

/** The body between the header block and the end: what node-imap returns as the `TEXT` part. */
function textPart(source: Buffer): string {
  const text = source.toString('utf8');
  const end = text.search(/\r?\n\r?\n/);
  return end < 0 ? '' : text.slice(end).replace(/^\r?\n\r?\n/, '');
}

/**
 * One message as n8n's Email Trigger (IMAP) v2 emits it: `simple` (textHtml, textPlain, the
 * top-level headers and `metadata`, attachments when asked), `resolved` (mailparser's whole object,
 * `headers` by name, attachments always as binary) or `raw` (the body text).
 */
export async function messageItem(
  source: Buffer,
  format: ImapFormat,
  options: { downloadAttachments: boolean; prefix: string },
): Promise<Item> {
  if (format === 'raw') return { json: { raw: textPart(source) } };
  const { simpleParser } = await import('mailparser');
  const parsed = await simpleParser(source, { skipImageLinks: true, maxHtmlLengthToParse: 5 * 1024 * 1024 });
  const headers = headerValues(parsed);
  if (format === 'resolved') {
    const { attachments: _a, headerLines: _h, headers: _m, ...rest } = parsed;
    const binary = attachmentsOf(parsed, options.prefix);
    return { json: { ...(plain(rest) as Record<string, Json>), headers }, ...(binary ? { binary } : {}) };
  }
  const json: Record<string, Json> = {
    textHtml: typeof parsed.html === 'string' ? parsed.html : '',
    textPlain: parsed.text ?? '',
    metadata: {},
  };
  const metadata = json.metadata as Record<string, Json>;
  for (const [name, value] of Object.entries(headers)) {
    if (TOP_LEVEL.includes(name)) json[name] = value;
    else metadata[name] = value;
  }
  // An encoded subject reads decoded, as node-imap's parsed header is; addresses stay as written.
  if (parsed.subject !== undefined) json.subject = parsed.subject;
  const binary = options.downloadAttachments ? attachmentsOf(parsed, options.prefix) : undefined;
  return { json, ...(binary ? { binary } : {}) };
}
