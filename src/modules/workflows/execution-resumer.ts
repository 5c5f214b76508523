import type { FastifyRequest } from 'fastify';
import { AppError, notFound } from '../../core/errors.js';
import type { JobQueue } from '../../core/queue/index.js';
import type { Json } from './engine/index.js';
import type { ExecutionJob } from './execution-runner.js';
import type { ExecutionStore } from './execution-store.js';

const SECRET_HEADERS = new Set([
  'authorization',
  'cookie',
  'x-api-key',
  'x-workflow-api-key',
  'proxy-authorization',
]);

/** Resumes executions paused at a `wait` node set to resume by its URL. */
export class ExecutionResumer {
  constructor(
    private readonly executions: ExecutionStore,
    private readonly queue: JobQueue<ExecutionJob>,
  ) {}

  async resumeByWebhook(executionId: string, request: FastifyRequest): Promise<void> {
    const row = await this.executions.get(executionId);
    // Only waits without a time resume by URL; anything else looks the same as unknown.
    if (row?.status !== 'waiting') throw notFound('EXECUTION_NOT_FOUND', 'Waiting execution', executionId);
    if (row.wait_till !== null) {
      throw new AppError('CONFLICT', 'This execution resumes at a set time, not by its URL', {
        executionId,
        waitTill: row.wait_till,
      });
    }
    const headers: Record<string, Json> = {};
    for (const [name, value] of Object.entries(request.headers)) {
      if (!SECRET_HEADERS.has(name) && value !== undefined)
        headers[name] = Array.isArray(value) ? value : String(value);
    }
    const json: Record<string, Json> = {
      headers,
      query: { ...(request.query as Record<string, Json>) },
      body: (request.body ?? {}) as Json,
    };
    await this.queue.add(`${executionId}:resume:webhook`, {
      executionId,
      kind: 'resume',
      resumeItems: [{ json }],
    });
  }
}
