import type { SmtpOptions, Transporter } from 'nodemailer';
import type { OutboundHostGuard } from '../../../../../core/http/outbound-host.js';
import { NodeOperationError } from '../../../engine/node-type.js';
import { flagOf, hostOf, portOf } from '../mail-helpers/credential-fields.js';

/** Connection, greeting and socket idle bounds of one SMTP session. */
const SMTP_TIMEOUT_MS = 20_000;

/**
 * An SMTP transport for n8n's `smtp` credential (host, port, secure, disableStartTls, hostName, user,
 * password), connected to the address the outbound guard checked; TLS still verifies the host's name.
 * `secure` is TLS from the start (465); otherwise STARTTLS when the server offers it, unless
 * disableStartTls.
 */
export async function smtpTransport(
  data: Record<string, string>,
  guard: OutboundHostGuard | undefined,
  options: { allowUnauthorizedCerts?: boolean } = {},
): Promise<Transporter> {
  if (!guard) throw new NodeOperationError('Outbound SMTP is not available here');
  const host = hostOf(data);
  const port = portOf(data, 465);
  const secure = flagOf(data, 'secure', true);
  let target: { address: string; servername: string };
  try {
    target = await guard(host, port);
  } catch (err) {
    throw new NodeOperationError((err as Error).message);
  }
  const smtp: SmtpOptions = {
    host: target.address,
    port,
    secure,
    tls: {
      servername: target.servername,
      ...(options.allowUnauthorizedCerts === true ? { rejectUnauthorized: false } : {}),
    },
    connectionTimeout: SMTP_TIMEOUT_MS,
    greetingTimeout: SMTP_TIMEOUT_MS,
    socketTimeout: SMTP_TIMEOUT_MS,
    // Attachments come from item bytes only: never a path or URL nodemailer would read itself.
    disableFileAccess: true,
    disableUrlAccess: true,
  };
  if (!secure) smtp.ignoreTLS = flagOf(data, 'disableStartTls', false);
  if (data.hostName) smtp.name = data.hostName;
  if (data.user || data.password) smtp.auth = { user: data.user ?? '', pass: data.password ?? '' };
  // Loaded on first use: a platform that sends no mail never loads the client.
  const { createTransport } = await import('nodemailer');
  return createTransport(smtp);
}

/** n8n's credential test of `smtp`: connect, greet, authenticate. */
export async function testSmtpCredential(
  data: Record<string, string>,
  guard: OutboundHostGuard | undefined,
): Promise<{ status: 'OK' | 'Error'; message: string }> {
  let transport: Transporter | undefined;
  try {
    transport = await smtpTransport(data, guard);
    await transport.verify();
    return { status: 'OK', message: 'Connection successful!' };
  } catch (err) {
    return { status: 'Error', message: (err as Error).message };
  } finally {
    transport?.close();
  }
}
