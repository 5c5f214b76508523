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
  name: string;
  /** JSON `ManagedSpec` (managed-models.ts): no keys, only names of configured models. */
  spec: string;
  created_at: Timestamp;
}

/** A blob uploaded through `/api/blobs/:digest`, by its sha256 digest. */
export interface LlmBlobsTable {
  digest: string;
  size: number;
  data: Buffer;
  created_at: Timestamp;
}

declare module '../../core/db/types.js' {
  interface Database {
    llm_models: LlmModelsTable;
    llm_blobs: LlmBlobsTable;
    llm_requests: LlmRequestsTable;
    llm_usage_daily: LlmUsageDailyTable;
  }
}
