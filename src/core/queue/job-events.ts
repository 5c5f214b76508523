import type { JobObserver, JobSettled } from './job-queue.js';

/**
 * The jobs of one platform, for whoever listens: each queue reports to `observe`, the metrics
 * registry subscribes. Listeners come and go with the registries (tests build many per process).
 */
export class JobEvents {
  private readonly listeners = new Set<JobObserver>();

  /** The observer to give a queue. */
  readonly observe: JobObserver = (event: JobSettled) => {
    for (const listener of this.listeners) listener(event);
  };

  /** Returns the unsubscriber. */
  subscribe(listener: JobObserver): () => void {
    this.listeners.add(listener);
    return () => {
      this.listeners.delete(listener);
    };
  }
}
