import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import pg from 'pg';
import { generateKey } from '../../src/modules/auth/key-format.js';
import { testRedis } from '../helpers/platform.js';
import { PG_URL, REDIS_URL, uniqueName } from '../helpers/services.js';
import {
  type Api,
  apiClient,
  baseEnv,
  cleanup,
  type PlatformProcess,
  sleep,
  startProcess,
  tempDir,
} from '../workflows/process/processes.js';

/** The host part of each worker's PUBLIC_URL: it shows in `$execution.resumeUrl`, so a run names its worker. */
export const WORKER_MARKERS = ['http://worker-a.scale.invalid', 'http://worker-b.scale.invalid'] as const;

const START_TIMEOUT_MS = 180_000;

export type ApiProcess = PlatformProcess & { url: string; api: Api };

export interface Cluster {
  /** Two `serve --no-worker` processes. */
  apis: [ApiProcess, ApiProcess];
  /** Two `worker` processes; `workers[i]` runs with `WORKER_MARKERS[i]`. */
  workers: [PlatformProcess, PlatformProcess];
  /** The owner's Admin key (PLATFORM_BOOTSTRAP_KEY). */
  key: string;
  /** Rows of the cluster's PostgreSQL schema (unqualified table names resolve there). */
  query(text: string, values?: unknown[]): Promise<Array<Record<string, unknown>>>;
  /** SIGTERM every process still running, SIGKILL after the grace period; drops schema and Redis keys. */
  close(): Promise<void>;
}

export interface ClusterOptions {
  /** Settings for all four processes. */
  env?: Record<string, string>;
}

/** SIGTERM, then SIGKILL if the process is still there after `graceMs`; resolves with the exit code. */
export async function stop(proc: PlatformProcess, graceMs = 5_000): Promise<number | null> {
  if (proc.child.exitCode !== null || proc.child.signalCode !== null) return proc.child.exitCode;
  proc.child.kill('SIGTERM');
  const timer = setTimeout(() => proc.child.kill('SIGKILL'), graceMs);
  try {
    return await proc.exited;
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Two API processes and two workers, run from source as users start them, on one fresh PostgreSQL
 * schema (picked by the URL's search_path) and one Redis under fresh prefixes.
 */
export async function startCluster(options: ClusterOptions = {}): Promise<Cluster> {
  const schema = uniqueName('scale');
  const queuePrefix = uniqueName('qs');
  const redisPrefix = `${uniqueName('rs')}:`;
  const admin = new pg.Pool({ connectionString: PG_URL, max: 2 });
  await admin.query(`create schema "${schema}"`);
  const url = new URL(PG_URL);
  // The platform takes no schema setting: libpq `options` sets the connection's search_path.
  url.searchParams.set('options', `-c search_path=${schema}`);
  const rows = new pg.Pool({ connectionString: url.toString(), max: 2 });

  const procs: PlatformProcess[] = [];
  const close = async () => {
    await Promise.all(procs.map((p) => stop(p)));
    await cleanup();
    await rows.end();
    await admin.query(`drop schema if exists "${schema}" cascade`);
    await admin.end();
    const redis = testRedis();
    try {
      for (const pattern of [`${queuePrefix}:*`, `${redisPrefix}*`]) {
        const keys = await redis.keys(pattern);
        if (keys.length > 0) await redis.del(...keys);
      }
    } finally {
      redis.disconnect();
    }
  };

  const key = generateKey('production');
  const dir = tempDir('platform-scale-');
  const shared = {
    ...baseEnv(dir),
    DATABASE_URL: url.toString(),
    REDIS_URL,
    QUEUE_PREFIX: queuePrefix,
    REDIS_PREFIX: redisPrefix,
    // Shared by every host of one database (README "Scaling out"): tokens and secrets stay readable.
    ENCRYPTION_KEY: randomBytes(32).toString('hex'),
    PLATFORM_BOOTSTRAP_KEY: key,
    ...options.env,
  };
  const apiEnv = { ...shared, DATA_DIR: path.join(dir, 'api') };
  const workerEnv = (i: 0 | 1) => ({
    ...shared,
    DATA_DIR: path.join(dir, `worker-${i}`),
    PUBLIC_URL: WORKER_MARKERS[i],
  });
  // Four processes compiling TypeScript at once on a busy machine (load 30-50 here): allow three minutes.
  const api = async (): Promise<ApiProcess> => {
    const proc = startProcess(['serve', '--no-worker'], apiEnv);
    procs.push(proc);
    const found = await proc.waitFor(/Server listening at (http:\/\/127\.0\.0\.1:\d+)/, START_TIMEOUT_MS);
    const url = found[1] as string;
    return { ...proc, url, api: apiClient(url, key) };
  };
  const worker = async (i: 0 | 1): Promise<PlatformProcess> => {
    const proc = startProcess(['worker'], workerEnv(i));
    procs.push(proc);
    await proc.waitFor(/workflow worker started/, START_TIMEOUT_MS);
    return proc;
  };

  try {
    // The first API process migrates and creates the owner; the others start on a ready schema.
    const first = await api();
    const [second, w0, w1] = await Promise.all([api(), worker(0), worker(1)]);
    return {
      apis: [first, second],
      workers: [w0, w1],
      key,
      async query(text, values) {
        return (await rows.query(text, values)).rows;
      },
      close,
    };
  } catch (error) {
    await close();
    throw error;
  }
}

/** Which worker ran an execution, from the resume URL its run saw (`undefined`: neither). */
export function workerOf(resumeUrl: unknown): number | undefined {
  const index = WORKER_MARKERS.findIndex((m) => String(resumeUrl).startsWith(`${m}/`));
  return index < 0 ? undefined : index;
}

export interface Call {
  n: string;
  worker: number | undefined;
  /** When the call arrived (ms since the epoch). */
  at: number;
  done: boolean;
}

/** A downstream on 127.0.0.1 that answers `{n}` after `delayMs`, remembering each call and its worker. */
export async function downstream(delayMs: number) {
  const calls: Call[] = [];
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const query = new URL(req.url ?? '/', 'http://x').searchParams;
    const call: Call = {
      n: query.get('n') ?? '?',
      worker: workerOf(query.get('w')),
      at: Date.now(),
      done: false,
    };
    calls.push(call);
    res.on('error', () => undefined);
    setTimeout(() => {
      call.done = true;
      if (res.destroyed) return;
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ n: call.n }));
    }, delayMs);
  });
  // A killed worker's sockets reset: not an error of this test.
  server.on('connection', (socket) => socket.on('error', () => undefined));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    calls,
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    /** Calls of `n` received so far. */
    count: (n: string) => calls.filter((c) => c.n === n).length,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

/**
 * webhook → GET the downstream with `n` and the worker's resume URL → set `{n, worker}`: the
 * answer, the stored run and the downstream all say which worker ran it.
 */
export function markedFlow(name: string, path: string, responseMode: string, downstreamUrl: string) {
  const nodes = [
    { name: 'Webhook', type: 'webhook', parameters: { path, responseMode } },
    {
      name: 'Call',
      type: 'httpRequest',
      parameters: {
        method: 'GET',
        url: `${downstreamUrl}/call`,
        query: { n: '={{ $json.body.n }}', w: '={{ $execution.resumeUrl }}' },
      },
    },
    {
      name: 'Set',
      type: 'set',
      parameters: { values: { n: '={{ $json.n }}', worker: '={{ $execution.resumeUrl }}' } },
    },
  ];
  return {
    name,
    nodes: nodes.map((n, i) => ({ position: [i * 200, 0], ...n })),
    connections: {
      Webhook: { main: [[{ node: 'Call', type: 'main', index: 0 }]] },
      Call: { main: [[{ node: 'Set', type: 'main', index: 0 }]] },
    },
  };
}

/** POSTs `{n}` to a webhook; the status and JSON answer (null when the call was cut off). */
export async function hook(
  base: string,
  webhookPath: string,
  n: number,
): Promise<{ status: number; body: Record<string, unknown> } | null> {
  try {
    const res = await fetch(`${base}/webhook/${webhookPath}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ n }),
    });
    const text = await res.text();
    return { status: res.status, body: text ? (JSON.parse(text) as Record<string, unknown>) : {} };
  } catch {
    return null;
  }
}

/** Waits until every API process serves the webhook (each keeps a 1-second cache of paths). */
export async function webhookLive(cluster: Cluster, webhookPath: string): Promise<void> {
  for (const { url } of cluster.apis) {
    const end = Date.now() + 5_000;
    for (;;) {
      // GET on a POST webhook: 405 once the path is known, 404 before; no execution either way.
      const res = await fetch(`${url}/webhook/${webhookPath}`);
      await res.arrayBuffer();
      if (res.status === 405) break;
      if (Date.now() > end) throw new Error(`${url} does not serve /webhook/${webhookPath}: ${res.status}`);
      await sleep(100);
    }
  }
}
