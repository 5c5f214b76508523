/** OpenAI's `/v1/files` and `/v1/batches` bodies and answers (their API reference's shapes). */
import { Type } from 'typebox';
import { BATCH_ENDPOINTS } from './batches/batch-input.js';
import { UPLOAD_PURPOSES } from './batches/files-service.js';

const Id = Type.String({ minLength: 1, maxLength: 200 });
const Seconds = Type.Integer();
const NullableSeconds = Type.Union([Type.Integer(), Type.Null()]);

export const FileParams = Type.Object({ file_id: Id });
export const BatchParams = Type.Object({ batch_id: Id });

/** The multipart upload, as the route reads it before validation (`file` is the part's bytes). */
export const FileUploadBody = Type.Object({
  purpose: Type.String({ description: `One of ${UPLOAD_PURPOSES.join(', ')}` }),
  file: Type.Unsafe<{ filename: string; data: Buffer }>(
    Type.Unknown({ description: 'The file (multipart part `file`), JSONL for purpose batch' }),
  ),
});

export const FileObject = Type.Object({
  id: Type.String(),
  object: Type.Literal('file'),
  bytes: Type.Integer(),
  created_at: Seconds,
  filename: Type.String(),
  purpose: Type.String(),
  status: Type.String(),
  expires_at: Type.Null(),
  status_details: Type.Null(),
});

export const FileList = Type.Object({
  object: Type.Literal('list'),
  data: Type.Array(FileObject),
  first_id: Type.Union([Type.String(), Type.Null()]),
  last_id: Type.Union([Type.String(), Type.Null()]),
  has_more: Type.Boolean(),
});

export const FileListQuery = Type.Object({
  purpose: Type.Optional(Type.String({ maxLength: 50 })),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 10_000 })),
  order: Type.Optional(Type.Enum(['asc', 'desc'] as const)),
  after: Type.Optional(Id),
});

export const FileDeleted = Type.Object({
  id: Type.String(),
  object: Type.Literal('file'),
  deleted: Type.Boolean(),
});

export const FileContent = Type.Unknown({ description: "The file's bytes (JSONL for batch files)" });

export const BatchCreateBody = Type.Object(
  {
    input_file_id: Id,
    endpoint: Type.String({ description: `One of ${BATCH_ENDPOINTS.join(', ')}` }),
    completion_window: Type.String({ description: '"24h"' }),
    metadata: Type.Optional(
      Type.Union([
        Type.Record(Type.String({ maxLength: 64 }), Type.String({ maxLength: 512 }), { maxProperties: 16 }),
        Type.Null(),
      ]),
    ),
  },
  { additionalProperties: true },
);

export const NoBody = Type.Union([Type.Object({}), Type.Null()], { description: 'No body' });

const BatchErrors = Type.Object({
  object: Type.String(),
  data: Type.Array(
    Type.Object({
      code: Type.String(),
      message: Type.String(),
      param: Type.Union([Type.String(), Type.Null()]),
      line: Type.Union([Type.Integer(), Type.Null()]),
    }),
  ),
});

export const BatchObject = Type.Object({
  id: Type.String(),
  object: Type.Literal('batch'),
  endpoint: Type.String(),
  errors: Type.Union([BatchErrors, Type.Null()]),
  input_file_id: Type.String(),
  completion_window: Type.String(),
  status: Type.String(),
  output_file_id: Type.Union([Type.String(), Type.Null()]),
  error_file_id: Type.Union([Type.String(), Type.Null()]),
  created_at: Seconds,
  in_progress_at: NullableSeconds,
  expires_at: Seconds,
  finalizing_at: NullableSeconds,
  completed_at: NullableSeconds,
  failed_at: NullableSeconds,
  expired_at: NullableSeconds,
  cancelling_at: NullableSeconds,
  cancelled_at: NullableSeconds,
  request_counts: Type.Object({ total: Type.Integer(), completed: Type.Integer(), failed: Type.Integer() }),
  metadata: Type.Union([Type.Record(Type.String(), Type.String()), Type.Null()]),
});

export const BatchList = Type.Object({
  object: Type.Literal('list'),
  data: Type.Array(BatchObject),
  first_id: Type.Union([Type.String(), Type.Null()]),
  last_id: Type.Union([Type.String(), Type.Null()]),
  has_more: Type.Boolean(),
});

export const BatchListQuery = Type.Object({
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100 })),
  /** Not in OpenAI's batches list (always newest first, the default here); as on its files list. */
  order: Type.Optional(Type.Enum(['asc', 'desc'] as const)),
  after: Type.Optional(Id),
});
