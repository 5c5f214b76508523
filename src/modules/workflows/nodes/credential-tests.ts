import type { OutboundHttp } from '../../../core/http/outbound.js';
import type { OutboundHostGuard } from '../../../core/http/outbound-host.js';
import { testImapCredential } from './n8n/email-read-imap/imap.js';
import { testSmtpCredential } from './n8n/email-send/smtp.js';

/** n8n's answer to a credential test (`POST /credentials/{id}/test`). */
export interface CredentialTestResult {
  status: 'OK' | 'Error';
  message: string;
}

/** What a test may reach: the outbound-host guard (and, for HTTP-based types, the guarded client). */
export interface CredentialTestDeps {
  outboundHost: OutboundHostGuard;
  /** The guarded outbound HTTP client, for types tested over HTTP (aws). */
  http?: OutboundHttp;
}

export type CredentialTest = (
  data: Record<string, string>,
  deps: CredentialTestDeps,
) => Promise<CredentialTestResult>;

/**
 * Credential tests by credential type, each beside the node that uses the type: the credentials
 * route answers with the entry of the credential's type (one line per type here).
 */
export const credentialTests: Record<string, CredentialTest> = {
  smtp: (data, deps) => testSmtpCredential(data, deps.outboundHost),
  imap: (data, deps) => testImapCredential(data, deps.outboundHost),
  // aws4 and xml2js load when an aws credential is tested, not with the mail tests.
  aws: async (data, deps) =>
    (await import('./n8n/aws-s3/credential-test.js')).testAwsCredential(data, deps.http),
};
