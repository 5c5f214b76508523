import type { ImapFlow, SearchObject } from 'imapflow';
import type { OutboundHostGuard } from '../../../../../core/http/outbound-host.js';
import { NodeOperationError } from '../../../engine/node-type.js';
import { flagOf, hostOf, portOf } from '../mail-helpers/credential-fields.js';

/** How soon a listening session idles after its last command (its commands follow each other closer). */
const LISTENING_IDLE_DELAY_MS = 1000;

/** Connection, greeting and socket idle bounds of one IMAP session (IDLE renews itself within). */
const IMAP_TIMEOUT_MS = 20_000;

/**
 * An IMAP client for n8n's `imap` credential (user, password, host, port, secure,
 * allowUnauthorizedCerts), connected to the address the outbound guard checked; TLS verifies the
 * host's name unless the credential says otherwise.
 */
export async function imapClient(
  data: Record<string, string>,
  guard: OutboundHostGuard | undefined,
  options: { listening?: boolean } = {},
): Promise<ImapFlow> {
  if (!guard) throw new NodeOperationError('Outbound IMAP is not available here');
  const host = hostOf(data);
  const secure = flagOf(data, 'secure', true);
  const port = portOf(data, secure ? 993 : 143);
  let target: { address: string; servername: string };
  try {
    target = await guard(host, port);
  } catch (err) {
    throw new NodeOperationError((err as Error).message);
  }
  // Loaded on first use: a platform that reads no mail never loads the client.
  const { ImapFlow: Client } = await import('imapflow');
  return new Client({
    host: target.address,
    port,
    secure,
    servername: target.servername,
    auth: { user: data.user ?? '', pass: data.password ?? '' },
    tls: {
      servername: target.servername,
      ...(flagOf(data, 'allowUnauthorizedCerts', false) ? { rejectUnauthorized: false } : {}),
    },
    logger: false,
    connectionTimeout: IMAP_TIMEOUT_MS,
    greetingTimeout: IMAP_TIMEOUT_MS,
    socketTimeout: 5 * 60_000,
    // A listener goes into IDLE a second after its last command, not imapflow's 15: until then the
    // server tells it of no new mail, so mail that came just after a look waited up to 15 s.
    ...(options.listening ? { autoIdleDelay: LISTENING_IDLE_DELAY_MS } : {}),
  });
}

/** n8n's credential test of `imap`: connect, log in, list the mailboxes. */
export async function testImapCredential(
  data: Record<string, string>,
  guard: OutboundHostGuard | undefined,
): Promise<{ status: 'OK' | 'Error'; message: string }> {
  let client: ImapFlow | undefined;
  try {
    client = await imapClient(data, guard);
    client.on('error', () => {});
    await client.connect();
    await client.list();
    return { status: 'OK', message: 'Connection successful!' };
  } catch (err) {
    const e = err as Error & { responseText?: string };
    return { status: 'Error', message: e.responseText ?? e.message };
  } finally {
    await client?.logout().catch(() => client?.close());
  }
}

type Criterion = string | unknown[];

/**
 * n8n's `customEmailConfig` (node-imap's search criteria: `["UNSEEN", ["SINCE", "May 20, 2024"]]`) as
 * imapflow's search object; criteria it has no equivalent for are refused by name.
 */
export function searchOf(config: string | undefined): SearchObject {
  let criteria: unknown;
  try {
    criteria = JSON.parse(config === undefined || config.trim() === '' ? '["UNSEEN"]' : config);
  } catch {
    throw new NodeOperationError('Custom email config is not valid JSON.');
  }
  if (!Array.isArray(criteria)) throw new NodeOperationError('Custom email config must be a JSON array.');
  const search: SearchObject = {};
  for (const c of criteria as Criterion[]) {
    const [name, ...args] = Array.isArray(c) ? c : [c];
    const key = String(name).toUpperCase();
    const arg = args[0];
    const text = () => {
      if (typeof arg !== 'string' && typeof arg !== 'number')
        throw new NodeOperationError(`Search criterion ${key} needs a value`);
      return String(arg);
    };
    switch (key) {
      case 'ALL':
        search.all = true;
        break;
      case 'UNSEEN':
      case 'SEEN':
        search.seen = key === 'SEEN';
        break;
      case 'FLAGGED':
      case 'UNFLAGGED':
        search.flagged = key === 'FLAGGED';
        break;
      case 'ANSWERED':
      case 'UNANSWERED':
        search.answered = key === 'ANSWERED';
        break;
      case 'DELETED':
      case 'UNDELETED':
        search.deleted = key === 'DELETED';
        break;
      case 'NEW':
        search.new = true;
        break;
      case 'SINCE':
      case 'BEFORE':
      case 'ON': {
        const date = new Date(text());
        if (Number.isNaN(date.getTime()))
          throw new NodeOperationError(`Search criterion ${key} needs a date`);
        search[key.toLowerCase() as 'since' | 'before' | 'on'] = date;
        break;
      }
      case 'FROM':
      case 'TO':
      case 'CC':
      case 'BCC':
      case 'SUBJECT':
      case 'BODY':
      case 'TEXT':
        search[key.toLowerCase() as 'from' | 'to' | 'cc' | 'bcc' | 'subject' | 'body' | 'text'] = text();
        break;
      case 'LARGER':
      case 'SMALLER':
        search[key.toLowerCase() as 'larger' | 'smaller'] = Number(text());
        break;
      case 'UID':
        search.uid = text();
        break;
      case 'HEADER':
        search.header = { ...(search.header ?? {}), [text()]: String(args[1] ?? '') };
        break;
      default:
        throw new NodeOperationError(`Search criterion '${String(name)}' is not supported here`);
    }
  }
  if (Object.keys(search).length === 0) search.all = true;
  return search;
}
