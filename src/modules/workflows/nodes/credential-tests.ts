import type { AddressGuard, OutboundHttp } from '../../../core/http/outbound.js';
import type { OutboundHostGuard } from '../../../core/http/outbound-host.js';
import { testImapCredential } from './n8n/email-read-imap/imap.js';
import { testSmtpCredential } from './n8n/email-send/smtp.js';

/** n8n's answer to a credential test (`POST /credentials/{id}/test`). */
export interface CredentialTestResult {
  status: 'OK' | 'Error';
  message: string;
}

/** A test gives up after this (connect and the trivial query together). */
export const CREDENTIAL_TEST_TIMEOUT_MS = 15_000;

/** What a test may reach: the outbound guards (and, for HTTP-based types, the guarded client). */
export interface CredentialTestDeps {
  /** The guard for a host reached over TLS (mail): the address and the name to check. */
  outboundHost: OutboundHostGuard;
  /** The guard for a raw TCP destination (databases, FTP, Redis): the address to connect to. */
  connectAddress?: AddressGuard;
  /** The guarded outbound HTTP client, for types tested over HTTP (aws). */
  http?: OutboundHttp;
}

export type CredentialTest = (
  data: Record<string, string>,
  deps: CredentialTestDeps,
) => Promise<CredentialTestResult>;

/** n8n's answer for a test that connects: OK once `connect` is done, else why it failed. */
async function connects(connect: () => Promise<void>): Promise<CredentialTestResult> {
  try {
    await connect();
    return { status: 'OK', message: 'Connection tested successfully' };
  } catch (err) {
    const e = err as Error & { description?: string };
    return { status: 'Error', message: e.description ? `${e.message}: ${e.description}` : e.message };
  }
}

/**
 * The one table of credential tests, by credential type: each connects with the credential (through
 * the outbound guard) and runs SELECT 1 / PING, logs in (FTP, SFTP, mail) or asks the service who
 * it is (aws). Each node's client loads when its type is tested, not with the table.
 */
export const credentialTests: Record<string, CredentialTest> = {
  postgres: (data, deps) =>
    connects(async () => {
      const { postgresPool, withConnection } = await import('./n8n/postgres/client.js');
      const pool = await postgresPool(data, deps.connectAddress, CREDENTIAL_TEST_TIMEOUT_MS);
      await withConnection(pool, async (client) => void (await client.query('SELECT 1')));
    }),
  mySql: (data, deps) =>
    connects(async () => {
      const { mysqlPool, withConnection } = await import('./n8n/mysql/client.js');
      const pool = await mysqlPool(data, deps.connectAddress, {
        connectTimeoutMs: CREDENTIAL_TEST_TIMEOUT_MS,
      });
      await withConnection(
        pool,
        (conn) =>
          new Promise<void>((resolve, reject) =>
            conn.query('SELECT 1', (err) => (err ? reject(err) : resolve())),
          ),
      );
    }),
  ftp: (data, deps) =>
    connects(async () => {
      const { openRemote } = await import('./n8n/ftp/index.js');
      (await openRemote('ftp', data, deps.connectAddress, CREDENTIAL_TEST_TIMEOUT_MS)).close();
    }),
  sftp: (data, deps) =>
    connects(async () => {
      const { openRemote } = await import('./n8n/ftp/index.js');
      (await openRemote('sftp', data, deps.connectAddress, CREDENTIAL_TEST_TIMEOUT_MS)).close();
    }),
  redis: (data, deps) =>
    connects(async () => {
      const { redisClient } = await import('./n8n/redis/client.js');
      const client = await redisClient(data, deps.connectAddress);
      await client.ping();
    }),
  smtp: (data, deps) => testSmtpCredential(data, deps.outboundHost),
  imap: (data, deps) => testImapCredential(data, deps.outboundHost),
  // aws4 and xml2js load when an aws credential is tested, not with the mail tests.
  // The AI model and vector store credentials with a test in n8n: list the provider's models, Qdrant's
  // collections or Pinecone's indexes (langchain/model-credential-tests.ts).
  ...Object.fromEntries(
    ['mistralCloudApi', 'groqApi', 'openRouterApi', 'googlePalmApi', 'qdrantApi', 'pineconeApi'].map(
      (type): [string, CredentialTest] => [
        type,
        async (data, deps) =>
          (await import('./langchain/model-credential-tests.js')).testModelCredential(type, data, deps.http),
      ],
    ),
  ),
  aws: async (data, deps) =>
    (await import('./n8n/aws-s3/credential-test.js')).testAwsCredential(data, deps.http),
};
