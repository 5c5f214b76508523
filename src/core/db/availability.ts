import type pg from 'pg';
import { pgConnectionSurvives } from './faults.js';

interface Availability {
  /** A fault seen on any connection; one that says the server is gone starts the watch. */
  fault(reason: string): void;
  available(): boolean;
  /** `select 1` on a connection of its own (not the pool's, which may be full), within `timeoutMs`. */
  probe(timeoutMs: number): Promise<boolean>;
  onRecovered(listener: () => void): () => void;
  close(): void;
}

type Log = { warn(obj: object, msg: string): void; info(obj: object, msg: string): void };

/** How often a lost database is probed until it answers. */
const PROBE_EVERY_MS = 250;

/**
 * The PostgreSQL server's state as this process sees it. Lost on the first fault that says the
 * server is gone (not on a full pool or a slow statement: the server is there); then probed every
 * 250 ms on its own connection, and on the first answer found again and the listeners called, so
 * interrupted work resumes within a second of the server's return.
 */
export function watchAvailability(connect: () => pg.Client, log?: Log): Availability {
  let up = true;
  let lostAt = 0;
  let closed = false;
  let timer: NodeJS.Timeout | null = null;
  let client: pg.Client | null = null;
  let ready: Promise<pg.Client> | null = null;
  const listeners = new Set<() => void>();

  const drop = () => {
    const old = client;
    client = null;
    ready = null;
    old?.end().catch(() => undefined);
  };
  const connected = (): Promise<pg.Client> => {
    if (ready) return ready;
    const fresh = connect();
    fresh.on('error', () => {
      if (client === fresh) drop();
    });
    client = fresh;
    ready = fresh.connect().then(() => fresh);
    ready.catch(() => {
      if (client === fresh) drop();
    });
    return ready;
  };
  const probe = async (timeoutMs: number): Promise<boolean> => {
    if (closed) return false;
    let timeout: NodeJS.Timeout | undefined;
    const answered = (async () => {
      const c = await connected();
      await c.query('select 1');
      return true;
    })().catch(() => false);
    const late = new Promise<false>((resolve) => {
      timeout = setTimeout(() => resolve(false), timeoutMs);
    });
    const ok = await Promise.race([answered, late]);
    clearTimeout(timeout);
    if (!ok) {
      drop();
      lose('unreachable');
    }
    return ok;
  };
  const lose = (reason: string) => {
    if (!up || closed) return;
    up = false;
    lostAt = Date.now();
    log?.warn({ dependency: 'database', reason }, 'database unavailable; retrying');
    timer = setInterval(() => {
      void probe(1_000).then((ok) => {
        if (!ok || up || closed) return;
        up = true;
        if (timer) clearInterval(timer);
        timer = null;
        log?.info({ dependency: 'database', downMs: Date.now() - lostAt }, 'database available again');
        for (const listener of listeners) listener();
      });
    }, PROBE_EVERY_MS);
    timer.unref();
  };
  return {
    fault: (reason) => {
      if (reason === 'no free connection' || pgConnectionSurvives(reason)) return;
      lose(reason);
    },
    available: () => up,
    probe,
    onRecovered: (listener) => {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    close: () => {
      closed = true;
      if (timer) clearInterval(timer);
      timer = null;
      drop();
    },
  };
}
