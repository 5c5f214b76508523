import type { FastifyBaseLogger } from 'fastify';
import type { Clock } from '../../core/clock.js';
import { AppError } from '../../core/errors.js';
import type { GameClient } from './game-client.js';
import type { GameStore } from './store.js';

/** How long a cached manifest is served before the upstream version is checked again. */
const MANIFEST_CHECK_SECONDS = 300;
/** Definition tables kept in memory per process (the most recently used), and the largest one read. */
const TABLES_KEPT = 8;
const TABLE_MAX_BYTES = 512 * 1024 * 1024;
/** The language whose definition tables are served. */
const LANGUAGE = 'en';

type Table = Record<string, unknown>;

/**
 * The manifest of each game, cached in the database by its content version: served from the
 * cache between checks, replaced when the upstream version changes, served stale when the
 * upstream fails and a copy exists. One upstream fetch per game at a time in this process.
 */
export class ManifestCache {
  private readonly inflight = new Map<string, Promise<unknown>>();
  /** Definition tables by `game version entityType`: a new version is a new key, so never stale. */
  private readonly tables = new Map<string, Promise<Table>>();

  constructor(
    private readonly client: GameClient,
    private readonly store: GameStore,
    private readonly clock: Clock,
    private readonly log: FastifyBaseLogger,
  ) {}

  async get(game: string): Promise<unknown> {
    const row = await this.store.latestManifest(game);
    const now = this.clock.now();
    if (row && now.getTime() - Date.parse(row.checked_at) < MANIFEST_CHECK_SECONDS * 1000) {
      return JSON.parse(row.body) as unknown;
    }
    let pending = this.inflight.get(game);
    if (!pending) {
      pending = this.refresh(game, row?.version, row?.body).finally(() => this.inflight.delete(game));
      this.inflight.set(game, pending);
    }
    return pending;
  }

  /**
   * One definition (`DestinyInventoryItemDefinition`, hash) from the table of the current
   * manifest version; the table is read once per version and kept while it is recently used.
   */
  async definition(game: string, entityType: string, hash: string): Promise<unknown> {
    const manifest = (await this.get(game)) as {
      version?: unknown;
      jsonWorldComponentContentPaths?: Record<string, Record<string, unknown>>;
    };
    const path = manifest?.jsonWorldComponentContentPaths?.[LANGUAGE]?.[entityType];
    if (typeof path !== 'string') {
      throw new AppError('NOT_FOUND', `The manifest has no table '${entityType}'`, { entityType });
    }
    const key = `${game} ${String(manifest.version)} ${entityType}`;
    let table = this.tables.get(key);
    if (table) {
      this.tables.delete(key); // re-inserted below: most recently used last
    } else {
      table = this.client.content(path, TABLE_MAX_BYTES) as Promise<Table>;
      table.catch(() => this.tables.delete(key));
    }
    this.tables.set(key, table);
    for (const old of this.tables.keys()) {
      if (this.tables.size <= TABLES_KEPT) break;
      this.tables.delete(old);
    }
    const data = await table;
    // Hashes are uint32 table keys; a signed int32 (as some clients send) names the same entry.
    const entry = data && typeof data === 'object' ? data[String(Number(hash) >>> 0)] : undefined;
    if (entry === undefined) {
      throw new AppError('NOT_FOUND', `No ${entityType} with hash ${hash}`, { entityType, hash });
    }
    return entry;
  }

  private async refresh(game: string, cachedVersion?: string, cachedBody?: string): Promise<unknown> {
    let fresh: { version?: unknown };
    try {
      fresh = await this.client.get<{ version?: unknown }>({
        path: [game, 'Manifest'],
      });
    } catch (error) {
      if (cachedBody === undefined) throw error;
      this.log.warn({ err: error, game }, 'manifest check failed; serving the cached version');
      return JSON.parse(cachedBody) as unknown;
    }
    const now = this.clock.now().toISOString();
    const version = typeof fresh?.version === 'string' ? fresh.version : '';
    if (version && version === cachedVersion) {
      await this.store.touchManifest(game, version, now);
    } else if (version) {
      await this.store.replaceManifest({
        game,
        version,
        body: JSON.stringify(fresh),
        fetched_at: now,
        checked_at: now,
      });
    }
    return fresh;
  }
}
