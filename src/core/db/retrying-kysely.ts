import { Kysely, type KyselyConfig, TransactionBuilder } from 'kysely';
import { DatabaseUnavailableError, pgConnectionSurvives } from './faults.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A transaction that failed on a lost connection before its COMMIT: the server rolled it back. */
function rolledBack(error: unknown): boolean {
  return (
    error instanceof DatabaseUnavailableError &&
    error.committed === false &&
    !pgConnectionSurvives(error.reason)
  );
}

/** The builder with `execute` running the transaction again while it fails that way, until `waitMs`. */
function retrying<DB>(builder: TransactionBuilder<DB>, waitMs: number): TransactionBuilder<DB> {
  return new Proxy(builder, {
    get(target, property) {
      const value = Reflect.get(target, property, target) as unknown;
      if (property === 'execute') {
        return async <T>(callback: Parameters<TransactionBuilder<DB>['execute']>[0]): Promise<T> => {
          const deadline = Date.now() + waitMs;
          for (;;) {
            try {
              return (await target.execute(callback)) as T;
            } catch (error) {
              if (!rolledBack(error) || Date.now() >= deadline) throw error;
              await sleep(50);
            }
          }
        };
      }
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        const result = (value as (...a: unknown[]) => unknown).apply(target, args);
        return result instanceof TransactionBuilder
          ? retrying(result as TransactionBuilder<DB>, waitMs)
          : result;
      };
    },
  });
}

/**
 * Kysely whose `transaction().execute(fn)` runs `fn` again when the connection was lost before the
 * COMMIT (PostgreSQL restarted, the session was terminated): nothing of the first attempt was kept,
 * so a second one is safe. The callbacks of this code base touch only the database. A COMMIT whose
 * answer was lost is not retried: it may have committed (the caller gets a 503).
 */
export class RetryingKysely<DB> extends Kysely<DB> {
  readonly #waitMs: number;

  constructor(config: KyselyConfig, waitMs: number) {
    super(config);
    this.#waitMs = waitMs;
  }

  override transaction(): TransactionBuilder<DB> {
    return retrying(super.transaction(), this.#waitMs);
  }
}
