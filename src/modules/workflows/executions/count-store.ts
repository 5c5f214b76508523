import type { Redis } from 'ioredis';
import { sql } from 'kysely';
import type { Db } from '../../../core/db/database.js';

/**
 * Counters of executions per account and UTC day. `take` counts one only while the count is below
 * `limit`, atomically: concurrent starts never pass the limit together.
 */
export interface ExecutionCountStore {
  /** The day's count after this one, or null when `limit` is reached (nothing counted). */
  take(accountId: string, day: string, limit: number): Promise<number | null>;
  /** The day's count (0 when none). */
  read(accountId: string, day: string): Promise<number>;
  /** Drops counters of days before `day` (stores whose keys do not expire). */
  prune?(day: string): Promise<void>;
}

/** On the platform's database (SQLite or PostgreSQL): one conditional upsert per start. */
export class DbExecutionCountStore implements ExecutionCountStore {
  constructor(private readonly db: Db) {}

  async take(accountId: string, day: string, limit: number): Promise<number | null> {
    // ON CONFLICT … DO UPDATE … WHERE: a row at the limit is left alone and nothing is returned.
    const result = await sql<{ count: number | string }>`
      insert into workflow_execution_counts (account_id, day, count) values (${accountId}, ${day}, 1)
      on conflict (account_id, day) do update set count = workflow_execution_counts.count + 1
      where workflow_execution_counts.count < ${limit}
      returning count`.execute(this.db);
    const row = result.rows[0];
    return row ? Number(row.count) : null;
  }

  async read(accountId: string, day: string): Promise<number> {
    const row = await this.db
      .selectFrom('workflow_execution_counts')
      .select('count')
      .where('account_id', '=', accountId)
      .where('day', '=', day)
      .executeTakeFirst();
    return Number(row?.count ?? 0);
  }

  /** Days before `day` are no longer read. */
  async prune(day: string): Promise<void> {
    await this.db.deleteFrom('workflow_execution_counts').where('day', '<', day).execute();
  }
}

/** Raises a day's counter below its limit; -1 when at the limit. Keys live two days. */
const TAKE = `
local c = tonumber(redis.call('GET', KEYS[1]) or '0')
if c >= tonumber(ARGV[1]) then return -1 end
c = redis.call('INCR', KEYS[1])
if c == 1 then redis.call('EXPIRE', KEYS[1], 172800) end
return c`;

/** With REDIS_URL: one Lua script per start, shared by every process. */
export class RedisExecutionCountStore implements ExecutionCountStore {
  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
  ) {}

  private key(accountId: string, day: string): string {
    return `${this.prefix}executions:${accountId}:${day}`;
  }

  async take(accountId: string, day: string, limit: number): Promise<number | null> {
    const count = Number(await this.redis.eval(TAKE, 1, this.key(accountId, day), limit));
    return count < 0 ? null : count;
  }

  async read(accountId: string, day: string): Promise<number> {
    return Number((await this.redis.get(this.key(accountId, day))) ?? 0);
  }
}
