import { Counter, Gauge, type Registry } from 'prom-client';
import type { RedisHealth } from '../queue/redis-health.js';

/**
 * Redis as this process sees it: up or not (the health probe), and the rate-limit hits it counted
 * in its own memory because Redis did not answer (the limiters fail open to per-process counts).
 */
export function registerRedisMetrics(registry: Registry, health: RedisHealth): void {
  new Gauge({
    name: 'platform_redis_up',
    help: 'Whether Redis answers this process (1) or not (0), by its PING probe',
    registers: [registry],
    collect() {
      this.set(health.status === 'up' ? 1 : 0);
    },
  });
  let reported = 0;
  new Counter({
    name: 'platform_rate_limit_local_total',
    help: 'Rate-limit hits counted in this process only, because Redis did not answer',
    registers: [registry],
    collect() {
      const now = health.localLimitHits;
      if (now > reported) this.inc(now - reported);
      reported = now;
    },
  });
}
