/** The part of nodemailer (which ships no types) the Send Email node uses. */
declare module 'nodemailer' {
  export interface SmtpOptions {
    host: string;
    port: number;
    secure: boolean;
    ignoreTLS?: boolean;
    requireTLS?: boolean;
    name?: string;
    auth?: { user: string; pass: string };
    tls?: { servername?: string; rejectUnauthorized?: boolean };
    connectionTimeout?: number;
    greetingTimeout?: number;
    socketTimeout?: number;
    disableFileAccess?: boolean;
    disableUrlAccess?: boolean;
  }
  export interface MailAttachment {
    filename: string;
    content: Buffer;
    cid?: string;
    contentType?: string;
  }
  export interface MailOptions {
    from?: string;
    to?: string;
    cc?: string;
    bcc?: string;
    replyTo?: string;
    subject?: string;
    text?: string;
    html?: string;
    attachments?: MailAttachment[];
  }
  export interface SentMessageInfo {
    accepted: Array<string | { address: string }>;
    rejected: Array<string | { address: string }>;
    envelope: { from: string | false; to: string[] };
    messageId: string;
    response: string;
    ehlo?: string[];
    envelopeTime?: number;
    messageTime?: number;
    messageSize?: number;
  }
  export interface Transporter {
    sendMail(options: MailOptions): Promise<SentMessageInfo>;
    verify(): Promise<true>;
    close(): void;
  }
  export function createTransport(options: SmtpOptions): Transporter;
  const nodemailer: { createTransport: typeof createTransport };
  export default nodemailer;
}
