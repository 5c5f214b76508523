import type { AddressGuard, OutboundHttp } from '../../../core/http/outbound.js';

/** n8n's answer to `POST /credentials/{id}/test`. */
export interface CredentialTestResult {
  status: 'OK' | 'Error';
  message: string;
}

/** A test gives up after this (connect and the trivial query together). */
const TEST_TIMEOUT_MS = 15_000;

type Data = Record<string, string | undefined>;

/** Connects with the credential (through the outbound guard) and runs SELECT 1 / PING, or logs in (FTP, SFTP). */
const TESTS: Record<string, (data: Data, guard: AddressGuard) => Promise<void>> = {
  async postgres(data, guard) {
    const { postgresPool, withConnection } = await import('../nodes/n8n/postgres/client.js');
    const pool = await postgresPool(data, guard, TEST_TIMEOUT_MS);
    await withConnection(pool, async (client) => void (await client.query('SELECT 1')));
  },
  async mySql(data, guard) {
    const { mysqlPool, withConnection } = await import('../nodes/n8n/mysql/client.js');
    const pool = await mysqlPool(data, guard, { connectTimeoutMs: TEST_TIMEOUT_MS });
    await withConnection(
      pool,
      (conn) =>
        new Promise<void>((resolve, reject) =>
          conn.query('SELECT 1', (err) => (err ? reject(err) : resolve())),
        ),
    );
  },
  async ftp(data, guard) {
    const { openRemote } = await import('../nodes/n8n/ftp/index.js');
    (await openRemote('ftp', data, guard, TEST_TIMEOUT_MS)).close();
  },
  async sftp(data, guard) {
    const { openRemote } = await import('../nodes/n8n/ftp/index.js');
    (await openRemote('sftp', data, guard, TEST_TIMEOUT_MS)).close();
  },
  async redis(data, guard) {
    const { redisClient } = await import('../nodes/n8n/redis/client.js');
    const client = await redisClient(data, guard);
    await client.ping();
  },
};

/** Types whose test lives beside its node (nodes/credential-tests.ts): the mail nodes', AWS's. */
const NODE_TESTED = ['smtp', 'imap', 'aws'];

export const testableCredentialTypes = [...Object.keys(TESTS), ...NODE_TESTED];

/** The node-side tests answer in n8n's shape themselves; they get the same guard, keeping the name for TLS. */
async function nodeTest(
  type: string,
  http: OutboundHttp | undefined,
  data: Data,
  guard: AddressGuard,
): Promise<void> {
  const { credentialTests } = await import('../nodes/credential-tests.js');
  const test = credentialTests[type];
  if (!test) throw new Error(`Credentials of type '${type}' have no test here`);
  const outboundHost = async (host: string, port: number) => ({
    address: await guard(host, port),
    servername: host.trim(),
  });
  const result = await test(data as Record<string, string>, { outboundHost, ...(http ? { http } : {}) });
  if (result.status === 'Error') throw new Error(result.message);
}

/**
 * n8n's credential test: `{status: 'OK'}` when the server answered, else the reason. `http` (the
 * guarded outbound client) serves the types tested over HTTP.
 */
export async function testCredential(
  type: string,
  data: Data,
  guard: AddressGuard,
  http?: OutboundHttp,
): Promise<CredentialTestResult> {
  const test = TESTS[type] ?? (NODE_TESTED.includes(type) ? nodeTest.bind(null, type, http) : undefined);
  if (!test) return { status: 'Error', message: `Credentials of type '${type}' have no test here` };
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      test(data, guard),
      new Promise<never>((_, reject) => {
        timer = setTimeout(
          () => reject(new Error(`No answer within ${TEST_TIMEOUT_MS / 1000} s`)),
          TEST_TIMEOUT_MS,
        );
      }),
    ]);
    return { status: 'OK', message: 'Connection tested successfully' };
  } catch (err) {
    const e = err as Error & { description?: string };
    return { status: 'Error', message: e.description ? `${e.message}: ${e.description}` : e.message };
  } finally {
    clearTimeout(timer);
  }
}
