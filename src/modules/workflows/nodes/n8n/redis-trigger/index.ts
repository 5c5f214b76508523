import { type Static, Type } from 'typebox';
import { isExpression } from '../../../engine/expressions.js';
import { defineNode, type ListenerContext, NodeOperationError, output } from '../../../engine/node-type.js';
import type { Json, ValidationProblem } from '../../../engine/types.js';
import { credentialOf } from '../credential-of.js';
import { ioredis, redisClient, redisOptions } from '../redis/client.js';
import { Lease } from './lease.js';

/** Messages waiting for their execution to be queued; more are dropped with a warning. */
const MAX_PENDING = 1_000;
const MAX_CHANNELS = 100;

const RedisTriggerParameters = Type.Object(
  {
    channels: Type.String({ default: '', maxLength: 10_000 }),
    options: Type.Object(
      {
        jsonParseBody: Type.Optional(Type.Boolean()),
        onlyMessage: Type.Optional(Type.Boolean()),
      },
      { additionalProperties: false, default: {} },
    ),
  },
  { additionalProperties: false },
);
type Params = Static<typeof RedisTriggerParameters>;

/** n8n's comma-separated channels, each a pattern (`*` wildcards: PSUBSCRIBE). */
function channelsOf(p: Params): string[] {
  const channels = p.channels
    .split(',')
    .map((c) => c.trim())
    .filter((c) => c !== '');
  if (channels.length === 0) throw new NodeOperationError('Channels are mandatory!');
  if (channels.length > MAX_CHANNELS) throw new NodeOperationError(`At most ${MAX_CHANNELS} channels`);
  return channels;
}

function problemsOf(p: Params): ValidationProblem[] {
  if (isExpression(p.channels))
    return [{ path: 'parameters.channels', message: 'must be fixed: the trigger listens before any run' }];
  try {
    channelsOf(p);
    return [];
  } catch (err) {
    return [{ path: 'parameters.channels', message: (err as Error).message }];
  }
}

/**
 * A subscriber connection per active trigger (every worker process subscribes); the one holding the
 * lease (lease.ts) starts one execution per message, `{channel, message}` or `{message}`.
 */
async function listen(ctx: ListenerContext) {
  const p = ctx.parameters as Params;
  const channels = channelsOf(p);
  const credential = await credentialOf(ctx.node, 'redis', (id) => ctx.credential(id));
  const options = await redisOptions(credential, ctx.deps.connectAddress);
  const Redis = await ioredis();
  // Named so an operator (and the test) can see which trigger a subscription belongs to.
  const subscriber = new Redis({ ...options, connectionName: `n8n-trigger:${ctx.workflowId}` });
  let stopped = false;
  let pending = 0;
  let queue: Promise<void> = Promise.resolve();
  subscriber.on('error', () => undefined);
  subscriber.on('end', () => {
    if (!stopped) ctx.failed(new Error('Redis connection closed'));
  });
  const lease = new Lease(
    await redisClient(credential, ctx.deps.connectAddress),
    `n8n:trigger-lease:${ctx.workflowId}:${ctx.node.id}`,
    (err) =>
      ctx.log.warn({ err, node: ctx.node.name }, 'Redis trigger lease not taken: every process listens'),
  );
  subscriber.on('pmessageBuffer', (_pattern: Buffer, channel: Buffer, raw: Buffer) => {
    if (stopped || !lease.leading) return;
    if (pending >= MAX_PENDING) {
      ctx.log.warn({ workflowId: ctx.workflowId, node: ctx.node.name }, 'Redis message dropped');
      return;
    }
    let message: Json = raw.toString('utf8');
    if (p.options.jsonParseBody)
      try {
        message = JSON.parse(message) as Json;
      } catch {
        // Not JSON: passed on as text, as n8n does.
      }
    const json: Record<string, Json> = p.options.onlyMessage
      ? { message }
      : { channel: channel.toString('utf8'), message };
    pending++;
    queue = queue
      .then(() => ctx.emit([{ json }]))
      .catch((err: unknown) => ctx.log.warn({ err, node: ctx.node.name }, 'Redis trigger emit failed'))
      .finally(() => {
        pending--;
      });
  });
  try {
    await subscriber.connect();
    await lease.start();
    await subscriber.psubscribe(...channels);
  } catch (err) {
    stopped = true;
    await lease.stop();
    subscriber.disconnect();
    throw new NodeOperationError(`Could not subscribe on Redis: ${(err as Error).message}`);
  }
  return {
    async stop() {
      stopped = true;
      await lease.stop();
      await queue;
      await subscriber.quit().catch(() => subscriber.disconnect());
    },
  };
}

/**
 * n8n's Redis Trigger (v1, credential `redis`): subscribes to channels (comma-separated, `*` patterns)
 * while the workflow is active; each message starts one execution, JSON-parsed on request.
 */
export const redisTriggerNode = defineNode({
  type: 'n8n-nodes-base.redisTrigger',
  versions: [1],
  schema: RedisTriggerParameters,
  trigger: true,
  inputs: 0,
  check: problemsOf,
  listener: { start: listen },
  async execute(ctx) {
    return output(ctx.items);
  },
});
