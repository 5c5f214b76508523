import type { Client } from 'pg';
import type { ListenerContext, ListenerHandle } from '../../../engine/node-type.js';
import { NodeOperationError } from '../../../engine/node-type.js';
import type { Item } from '../../../engine/types.js';
import { credentialOf } from '../credential-of.js';
import { connectionError } from '../postgres/client.js';
import { ident } from '../postgres/sql.js';
import { guardedAddress } from '../sql/address.js';
import { DEFAULT_CONNECT_TIMEOUT_MS, isOn } from '../sql/bounds.js';
import { createRule, dropRule, type TriggerRule } from './ddl.js';
import { foldedName, nodeSuffix } from './names.js';

/** How often a process that is not the listener asks again (another process holds the lock). */
const LEADER_RETRY_MS = 5_000;
/** Notifications waiting for their execution to be queued; more are dropped with a warning. */
const MAX_PENDING = 1_000;

export interface PostgresTriggerParams {
  triggerMode: 'createTrigger' | 'listenTrigger';
  channelName: string;
  rule: TriggerRule | null;
  additionalChannel: string;
}

/** n8n's channel: the parameter (listen mode), else the additional field, else after the node id. */
export function channelOf(p: PostgresTriggerParams, nodeId: string): string {
  const raw =
    p.triggerMode === 'listenTrigger'
      ? p.channelName
      : p.additionalChannel || `n8n_channel_${nodeSuffix(nodeId)}`;
  return foldedName(raw, 'channel name');
}

async function connect(ctx: ListenerContext): Promise<Client> {
  const c = await credentialOf(ctx.node, 'postgres', (id) => ctx.credential(id));
  const { address, port } = await guardedAddress(c, ctx.deps.connectAddress, 5432, 'Database');
  const pg = (await import('pg')).default;
  const ssl = c.ssl && c.ssl !== 'disable';
  const client = new pg.Client({
    host: address,
    port,
    database: c.database,
    user: c.user,
    password: c.password ?? '',
    ssl: ssl ? { rejectUnauthorized: !isOn(c.allowUnauthorizedCerts), servername: c.host } : false,
    connectionTimeoutMillis: DEFAULT_CONNECT_TIMEOUT_MS,
    application_name: 'n8n-trigger',
    keepAlive: true,
  });
  try {
    await client.connect();
  } catch (err) {
    throw connectionError(err);
  }
  return client;
}

/**
 * One connection per active trigger. Every worker process runs the listener, but only the one holding
 * a session advisory lock (per workflow and node, on the watched server) creates the rule and LISTENs:
 * a notification reaches every listening session, so two listeners would start two executions. The
 * lock goes with the connection, so another process takes over when the holder dies.
 */
export async function listen(ctx: ListenerContext, p: PostgresTriggerParams): Promise<ListenerHandle> {
  const channel = channelOf(p, ctx.node.id);
  const client = await connect(ctx);
  let stopped = false;
  let leader = false;
  let pending = 0;
  let queue: Promise<void> = Promise.resolve();
  let retry: NodeJS.Timeout | undefined;

  client.on('error', (err) => {
    if (!stopped) ctx.failed(err);
  });
  client.on('end', () => {
    if (!stopped) ctx.failed(new Error('PostgreSQL connection closed'));
  });
  client.on('notification', (notice) => {
    // pg's message carries n8n's item fields; its typing names only some of them.
    const msg = notice as typeof notice & { length: number; name: string };
    if (stopped || msg.channel !== channel) return;
    if (pending >= MAX_PENDING) {
      ctx.log.warn({ workflowId: ctx.workflowId, node: ctx.node.name }, 'Postgres notification dropped');
      return;
    }
    let payload: unknown = msg.payload;
    try {
      payload = JSON.parse(msg.payload ?? '');
    } catch {
      // Not JSON: passed on as text, as n8n does.
    }
    const item: Item = {
      json: {
        length: msg.length,
        processId: msg.processId,
        channel: msg.channel,
        payload: payload as never,
        name: msg.name,
      },
    };
    pending++;
    queue = queue
      .then(() => ctx.emit([item]))
      .catch((err: unknown) => ctx.log.warn({ err, node: ctx.node.name }, 'Postgres trigger emit failed'))
      .finally(() => {
        pending--;
      });
  });

  const lockKey = `n8n-trigger:${ctx.workflowId}:${ctx.node.id}`;
  const tryLead = async () => {
    const res = await client.query<{ ok: boolean }>('SELECT pg_try_advisory_lock(hashtext($1)) AS ok', [
      lockKey,
    ]);
    if (!res.rows[0]?.ok || stopped) return false;
    if (p.triggerMode === 'createTrigger' && p.rule) await createRule(client, p.rule, ctx.node.id, channel);
    await client.query(`LISTEN ${ident(channel)}`);
    leader = true;
    return true;
  };
  try {
    if (!(await tryLead())) {
      const again = () => {
        retry = setTimeout(() => {
          tryLead()
            .then((ok) => {
              if (!ok && !stopped) again();
            })
            .catch((err: Error) => ctx.failed(err));
        }, LEADER_RETRY_MS);
        retry.unref();
      };
      again();
    }
  } catch (err) {
    stopped = true;
    await client.end().catch(() => undefined);
    throw err instanceof NodeOperationError ? err : connectionError(err);
  }

  return {
    async stop() {
      stopped = true;
      clearTimeout(retry);
      try {
        if (leader) {
          await client.query(`UNLISTEN ${ident(channel)}`);
          if (p.triggerMode === 'createTrigger' && p.rule) await dropRule(client, p.rule, ctx.node.id);
        }
      } finally {
        await queue;
        await client.end().catch(() => undefined);
      }
    },
  };
}
