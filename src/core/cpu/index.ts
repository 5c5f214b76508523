import { availableParallelism } from 'node:os';
import type { Config } from '../../config.js';
import type { AppContext } from '../context.js';
import { CpuPool } from './cpu-pool.js';

export { CpuPool, CpuTaskError, cpuTask } from './cpu-pool.js';

const pools = new WeakMap<AppContext, CpuPool>();

/** CPU_WORKERS, or (0) one thread fewer than the machine has, at least 1 and at most 4. */
function cpuWorkers(config: Pick<Config, 'CPU_WORKERS'>): number {
  if (config.CPU_WORKERS > 0) return config.CPU_WORKERS;
  return Math.max(1, Math.min(4, availableParallelism() - 1));
}

/** The process's CPU pool (one per platform instance, ended when it closes); workers start on demand. */
export function cpuPoolOf(ctx: AppContext): CpuPool {
  let pool = pools.get(ctx);
  if (!pool) {
    pool = new CpuPool({
      workers: cpuWorkers(ctx.config),
      heapMb: ctx.config.CPU_WORKER_HEAP_MB,
      maxQueue: ctx.config.CPU_MAX_QUEUE,
    });
    pools.set(ctx, pool);
    const created = pool;
    ctx.onClose(() => created.close());
  }
  return pool;
}
