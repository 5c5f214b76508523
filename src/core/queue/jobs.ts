import { Type } from 'typebox';
import { defineJob } from './job-definition.js';

/*
 * The job catalogue: every kind of queued job, declared once (trigger.dev's `workerCatalog`). Its
 * queue, payload schema, timeout and attempts live here; `createQueue(jobs.x, …)` takes an entry,
 * enqueuers and workers are typed from it, and every payload read back from Redis (or the
 * in-process queue) is checked against its schema before a handler sees it.
 *
 * Payload schemas allow properties they do not name: a job queued by an older version of the
 * platform still runs after an upgrade. Their types are the modules' job types (ExecutionJob,
 * ProcessJob), so a field is added here, once.
 */

type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };

/** n8n's item as a resume call hands it over (modules/workflows/engine `Item`). */
const Item = Type.Object({
  // Read back with JSON.parse, so its values are JSON: checked as an object, typed as JSON.
  json: Type.Unsafe<{ [key: string]: JsonValue }>(Type.Record(Type.String(), Type.Unknown())),
  binary: Type.Optional(
    Type.Record(
      Type.String(),
      Type.Object({
        data: Type.String(),
        mimeType: Type.String(),
        fileName: Type.Optional(Type.String()),
        fileExtension: Type.Optional(Type.String()),
        fileType: Type.Optional(
          Type.Union([
            Type.Literal('image'),
            Type.Literal('video'),
            Type.Literal('audio'),
            Type.Literal('text'),
            Type.Literal('json'),
            Type.Literal('pdf'),
          ]),
        ),
        fileSize: Type.Optional(Type.String()),
      }),
    ),
  ),
  pairedItem: Type.Optional(Type.Object({ item: Type.Integer(), input: Type.Optional(Type.Integer()) })),
});

const Id = Type.String({ minLength: 1, maxLength: 200 });

export const jobs = {
  /** Runs (or resumes) one workflow execution; the execution's state is on its row. */
  workflowExecution: defineJob({
    name: 'workflow-executions',
    payload: Type.Object({
      executionId: Id,
      kind: Type.Union([Type.Literal('start'), Type.Literal('resume')]),
      /**
       * Whose execution: the queue serves accounts round-robin with a slot cap each. Jobs queued
       * before this field existed share one group ('').
       */
      accountId: Type.Optional(Type.String()),
      /** Items of a resume-URL call; absent when the wait time came. */
      resumeItems: Type.Optional(Type.Array(Item)),
    }),
    // A backstop, not a limit on workflows (theirs is `settings.executionTimeout`): a run that
    // waits is saved and frees its slot, so only a hung run holds one this long.
    timeoutMs: 24 * 3_600_000,
    // A run that fails records its error on the execution; a run cut short by a dependency's
    // fault is taken up again by the module's maintenance, not by the queue.
    attempts: 1,
  }),
  /** Chunks, embeds and indexes one document; its parameters are also on its row (recovery). */
  documentProcessing: defineJob({
    name: 'document-processing',
    payload: Type.Object({
      documentId: Id,
      accountId: Id,
      operations: Type.Array(
        Type.Union([Type.Literal('chunk'), Type.Literal('embed'), Type.Literal('index')]),
      ),
      chunkSize: Type.Integer({ minimum: 1 }),
      chunkOverlap: Type.Integer({ minimum: 0 }),
      embeddingModel: Type.String(),
      /** The key charged for the embeddings (its models and token budget); null or absent: the account. */
      payerKeyId: Type.Optional(Type.Union([Type.String(), Type.Null()])),
    }),
    // Each step is bounded on its own (CPU_TASK_TIMEOUT_MS, LLM_TIMEOUT_MS per embedding batch);
    // a large document makes many batches.
    timeoutMs: 3_600_000,
    // A failure is recorded on the document (status failed, with its reason); the caller retries.
    attempts: 1,
  }),
  /** Runs one OpenAI batch (`/v1/batches`): its lines, output and error files are on its rows. */
  llmBatch: defineJob({
    name: 'llm-batches',
    payload: Type.Object({ batchId: Id, accountId: Id }),
    // OpenAI's completion window is 24 h; each request is bounded on its own (the model's timeout).
    timeoutMs: 24 * 3_600_000,
    // A run that fails records why on the batch; a run cut short by a restart is queued again at boot.
    attempts: 1,
  }),
  /** Runs one background agent turn (`background: true`); its input and principal are on its run's row. */
  agentRun: defineJob({
    name: 'agent-runs',
    payload: Type.Object({ runId: Id, accountId: Id }),
    // A backstop: each model call is bounded (the model's timeout) and a turn makes at most
    // `maxToolCalls` rounds of them.
    timeoutMs: 30 * 60_000,
    // A turn that fails records why on its run. A worker that dies mid-run leaves it in_progress:
    // the queue's stalled-job check or the restart's recovery hands it over, and the run's own
    // `attempts` (not the queue's) decides between running it again once and marking it failed.
    attempts: 1,
  }),
} as const;
