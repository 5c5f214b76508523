import type { AddressGuard } from '../../../core/http/outbound.js';

/** n8n's answer to `POST /credentials/{id}/test`. */
export interface CredentialTestResult {
  status: 'OK' | 'Error';
  message: string;
}

/** A test gives up after this (connect and the trivial query together). */
const TEST_TIMEOUT_MS = 15_000;

type Data = Record<string, string | undefined>;

/** Connects with the credential (through the outbound guard) and runs SELECT 1 / PING. */
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
  async redis(data, guard) {
    const { redisClient } = await import('../nodes/n8n/redis/client.js');
    const client = await redisClient(data, guard);
    await client.ping();
  },
};

export const testableCredentialTypes = Object.keys(TESTS);

/** n8n's credential test: `{status: 'OK'}` when the server answered, else the reason. */
export async function testCredential(
  type: string,
  data: Data,
  guard: AddressGuard,
): Promise<CredentialTestResult> {
  const test = TESTS[type];
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
