import type { FastifyBaseLogger } from 'fastify';
import type { Clock } from '../../core/clock.js';
import type { GameClient } from './game-client.js';
import type { GameStore } from './store.js';

/** How long a cached manifest is served before the upstream version is checked again. */
const MANIFEST_CHECK_SECONDS = 300;

/**
 * The manifest of each game, cached in the database by its content version: served from the
 * cache between checks, replaced when the upstream version changes, served stale when the
 * upstream fails and a copy exists. One upstream fetch per game at a time in this process.
 */
export class ManifestCache {
  private readonly inflight = new Map<string, Promise<unknown>>();

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
