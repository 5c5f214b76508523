import type { Bool, Timestamp } from '../../core/db/types.js';

/** One call to the gateway: who asked for what, who answered, and what it cost. */
export interface LlmRequestsTable {
  id: string;
  account_id: string;
  key_id: string | null;
  /** `chat`, `generate`, `embed` (Ollama) or `chat.completions`, `embeddings` (OpenAI). */
  endpoint: string;
  /** The model asked for. */
  model: string;
  /** The model that answered (a fallback, perhaps); null when none did. */
  answered_by: string | null;
  provider: string | null;
  stream: Bool;
  prompt_tokens: number | string;
  completion_tokens: number | string;
  tokens_estimated: Bool;
  latency_ms: number;
  ttft_ms: number | null;
  /** `success`, `error` or `canceled` (the client went away). */
  status: string;
  http_status: number;
  error_code: string | null;
  cached: Bool;
  fallbacks_tried: number;
  created_at: Timestamp;
}

/** Tokens per key, UTC day and answering model, for `GET /v1/usage`. */
export interface LlmUsageDailyTable {
  key_id: string;
  account_id: string;
  day: string;
  model: string;
  requests: number | string;
  prompt_tokens: number | string;
  completion_tokens: number | string;
  estimated_requests: number | string;
}

/** A model made through Ollama's management API (`/api/create`, `/copy`, `/pull`). */
export interface LlmModelsTable {
  /** The account that made the model; '' for one made before models belonged to accounts (shared). */
  account_id: string;
  name: string;
  /** JSON `ManagedSpec` (managed-models.ts): no keys, only names of configured models. */
  spec: string;
  created_at: Timestamp;
}

/** A blob uploaded through `/api/blobs/:digest`, by its sha256 digest. */
export interface LlmBlobsTable {
  account_id: string;
  digest: string;
  size: number;
  data: Buffer;
  created_at: Timestamp;
}

/** A file of OpenAI's `/v1/files`: an upload, or a batch's output or errors. Times in Unix seconds. */
export interface LlmFilesTable {
  id: string;
  account_id: string;
  /** `batch`, `user_data` (uploads) or `batch_output` (what a batch wrote). */
  purpose: string;
  filename: string;
  bytes: number;
  data: Buffer;
  created_at: number;
}

/** A batch of OpenAI's `/v1/batches`. Times in Unix seconds; `errors` and `metadata` are JSON. */
export interface LlmBatchesTable {
  id: string;
  account_id: string;
  /** The key whose models and token budget the batch's requests use (null: a session's). */
  key_id: string | null;
  endpoint: string;
  input_file_id: string;
  completion_window: string;
  /** OpenAI's: validating, in_progress, finalizing, completed, failed, cancelling, cancelled. */
  status: string;
  output_file_id: string | null;
  error_file_id: string | null;
  errors: string | null;
  metadata: string | null;
  total: number;
  completed: number;
  failed: number;
  created_at: number;
  in_progress_at: number | null;
  finalizing_at: number | null;
  completed_at: number | null;
  failed_at: number | null;
  cancelling_at: number | null;
  cancelled_at: number | null;
  expires_at: number;
}

declare module '../../core/db/types.js' {
  interface Database {
    llm_models: LlmModelsTable;
    llm_blobs: LlmBlobsTable;
    llm_files: LlmFilesTable;
    llm_batches: LlmBatchesTable;
    llm_requests: LlmRequestsTable;
    llm_usage_daily: LlmUsageDailyTable;
  }
}
