import { Type } from 'typebox';
import { defineSubNode, type NodeExecutionContext } from '../../../engine/node-type.js';
import { redisClient } from '../../n8n/redis/client.js';
import { boundsOf, timedOut } from '../../n8n/sql/bounds.js';
import { nodeCredential } from '../../n8n/sql/credential.js';
import { type ChatMemory, LANGCHAIN, MAX_HISTORY_MESSAGES } from '../ai-parts.js';
import {
  chatMessageOf,
  memoryMessageOf,
  SessionParameters,
  sessionFromInput,
  sessionIdOf,
  storedMessage,
  storedOfMemory,
} from '../memory-session.js';

const Parameters = Type.Object(
  {
    ...SessionParameters,
    sessionTTL: Type.Integer({ minimum: 0, maximum: 100_000_000, default: 0 }),
    notice: Type.Optional(Type.String()),
  },
  { additionalProperties: false },
);

/**
 * n8n's Redis Chat Memory (LangChain's RedisChatMessageHistory): the session's turns as a list under the
 * session id in the workflow's own `redis` server (newest first, `{type, data}` JSON), reached through
 * the outbound-address guard like the Redis node, with the session's TTL if set; the last
 * `contextWindowLength` exchanges are read back.
 */
export const memoryRedisChatNode = defineSubNode({
  type: `${LANGCHAIN}.memoryRedisChat`,
  versions: [1, 1.1, 1.2, 1.3, 1.4, 1.5],
  schema: Parameters,
  subNode: 'ai_memory',
  async supply(ctx, itemIndex): Promise<ChatMemory> {
    const p = await ctx.params(itemIndex);
    const key = sessionIdOf(ctx.node.typeVersion, p, ctx.items[itemIndex]);
    const credential = await nodeCredential(ctx as NodeExecutionContext<unknown>, 'redis');
    const { timeoutMs } = boundsOf({}, ctx.deadlineAt);
    const bounded = async <T>(work: Promise<T>): Promise<T> => {
      let timer: NodeJS.Timeout | undefined;
      try {
        return await Promise.race([
          work,
          new Promise<never>((_, reject) => {
            timer = setTimeout(() => reject(timedOut(timeoutMs)), timeoutMs);
          }),
        ]);
      } finally {
        clearTimeout(timer);
      }
    };
    const redis = await bounded(redisClient(credential, ctx.deps.connectAddress));
    const limit = p.contextWindowLength * 2;
    return {
      kind: 'memory',
      sessionFromInput: sessionFromInput(ctx.node.typeVersion, p),
      async load() {
        const raw = await bounded(redis.lrange(key, 0, limit - 1));
        return raw
          .reverse()
          .map((r) => chatMessageOf(r))
          .filter((m) => m !== null);
      },
      history: {
        async all() {
          const raw = await bounded(redis.lrange(key, 0, MAX_HISTORY_MESSAGES - 1));
          return raw
            .reverse()
            .map((r) => memoryMessageOf(r))
            .filter((m) => m !== null);
        },
        async clear() {
          await bounded(redis.del(key));
        },
        async add(messages) {
          if (messages.length === 0) return;
          const multi = redis.multi();
          for (const m of messages) multi.lpush(key, JSON.stringify(storedOfMemory(m)));
          if (p.sessionTTL > 0) multi.expire(key, p.sessionTTL);
          await bounded(multi.exec());
        },
      },
      async save(input, output) {
        const multi = redis
          .multi()
          .lpush(key, JSON.stringify(storedMessage('user', input)))
          .lpush(key, JSON.stringify(storedMessage('assistant', output)));
        if (p.sessionTTL > 0) multi.expire(key, p.sessionTTL);
        await bounded(multi.exec());
      },
    };
  },
});
