/**
 * OpenAI's `/v1/files` and `/v1/batches` (thin: the services hold the logic). Per account: another
 * account's file or batch is a 404. Errors are OpenAI's body, as on the other OpenAI paths.
 */
import multipart from '@fastify/multipart';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { AppError } from '../../core/errors.js';
import { principalOf } from '../../core/http/auth-hook.js';
import type { BatchCreate, BatchService } from './batches/batch-service.js';
import { type FilesService, MAX_FILE_BYTES } from './batches/files-service.js';
import {
  BatchCreateBody,
  BatchList,
  BatchListQuery,
  BatchObject,
  BatchParams,
  FileContent,
  FileDeleted,
  FileList,
  FileListQuery,
  FileObject,
  FileParams,
  FileUploadBody,
  NoBody,
} from './openai-files-schemas.js';
import { withOpenAiErrors } from './openai-schemas.js';

const tags = ['Language models: OpenAI API'];
const call = { auth: { service: 'llm' }, errorFormat: 'openai' } as const;
/** Room for the multipart framing and the purpose field around the file. */
const FRAMING_BYTES = 64 * 1024;

const tooLarge = () =>
  new AppError('PAYLOAD_TOO_LARGE', `Files are at most ${MAX_FILE_BYTES} bytes`, { limit: MAX_FILE_BYTES });

/** The upload form: `purpose` and one `file`; any other field is refused by name, never dropped. */
async function readUpload(request: FastifyRequest): Promise<Record<string, unknown>> {
  if (!request.isMultipart())
    throw new AppError(
      'UNSUPPORTED_MEDIA_TYPE',
      'Upload a file as multipart/form-data (fields file and purpose)',
    );
  const body: Record<string, unknown> = {};
  for await (const part of request.parts()) {
    if (part.type === 'file') {
      if (part.fieldname !== 'file' || body.file !== undefined) {
        part.file.resume();
        throw new AppError(
          'VALIDATION_ERROR',
          `Invalid body: body.${part.fieldname} is not a field of an upload`,
          {
            fields: [{ field: `body.${part.fieldname}`, message: 'one file, in the field file' }],
          },
        );
      }
      const data = await part.toBuffer().catch((error: unknown) => {
        throw (error as { code?: string }).code === 'FST_REQ_FILE_TOO_LARGE' ? tooLarge() : error;
      });
      body.file = { filename: part.filename || 'file', data };
    } else if (part.fieldname === 'purpose') body.purpose = String(part.value);
    else
      throw new AppError('VALIDATION_ERROR', `Invalid body: body.${part.fieldname} is not supported`, {
        fields: [{ field: `body.${part.fieldname}`, message: 'is not supported' }],
      });
  }
  if (body.file === undefined)
    throw new AppError('VALIDATION_ERROR', 'Invalid body: body.file is required', {
      fields: [{ field: 'body.file', message: 'is required' }],
    });
  return body;
}

export function openAiFilesRoutes(app: FastifyInstance, files: FilesService, batches: BatchService): void {
  const r = app.withTypeProvider<TypeBoxTypeProvider>();

  // Multipart only on the upload: the parser is registered in this route's scope alone.
  app.register(async (scope) => {
    await scope.register(multipart, {
      limits: { fileSize: MAX_FILE_BYTES, files: 1, fields: 4, fieldSize: 1_000, parts: 5 },
    });
    scope.withTypeProvider<TypeBoxTypeProvider>().post(
      '/v1/files',
      {
        config: call,
        // A declared size over the bound is refused before a byte of the body is read.
        onRequest: async (request) => {
          const declared = Number(request.headers['content-length'] ?? 0);
          if (declared > MAX_FILE_BYTES + FRAMING_BYTES) throw tooLarge();
        },
        preValidation: async (request) => {
          request.body = (await readUpload(request)) as typeof request.body;
        },
        schema: {
          tags,
          summary: `Upload a file (purpose batch or user_data; at most ${MAX_FILE_BYTES} bytes)`,
          body: FileUploadBody,
          response: withOpenAiErrors({ 200: FileObject }),
        },
      },
      async (request) =>
        files.upload(principalOf(request), {
          purpose: request.body.purpose,
          filename: request.body.file.filename,
          data: request.body.file.data,
        }),
    );
  });

  r.get(
    '/v1/files',
    {
      config: call,
      schema: {
        tags,
        summary: "The account's files, newest first",
        querystring: FileListQuery,
        response: withOpenAiErrors({ 200: FileList }),
      },
    },
    async (request) => files.list(principalOf(request), request.query),
  );

  r.get(
    '/v1/files/:file_id',
    {
      config: call,
      schema: {
        tags,
        summary: 'One file',
        params: FileParams,
        response: withOpenAiErrors({ 200: FileObject }),
      },
    },
    async (request) => files.get(principalOf(request), request.params.file_id),
  );

  r.get(
    '/v1/files/:file_id/content',
    {
      config: call,
      schema: {
        tags,
        summary: "A file's bytes",
        params: FileParams,
        response: withOpenAiErrors({ 200: FileContent }),
      },
    },
    async (request, reply) => {
      const data = await files.content(principalOf(request), request.params.file_id);
      return reply.type('application/octet-stream').send(data);
    },
  );

  r.delete(
    '/v1/files/:file_id',
    {
      config: call,
      schema: {
        tags,
        summary: 'Delete a file',
        params: FileParams,
        response: withOpenAiErrors({ 200: FileDeleted }),
      },
    },
    async (request) => files.delete(principalOf(request), request.params.file_id),
  );

  r.post(
    '/v1/batches',
    {
      config: call,
      schema: {
        tags,
        summary: 'Run a JSONL file of /v1/chat/completions or /v1/embeddings requests on the job queue',
        body: BatchCreateBody,
        response: withOpenAiErrors({ 200: BatchObject }),
      },
    },
    async (request) => batches.create(principalOf(request), request.body as BatchCreate),
  );

  r.get(
    '/v1/batches',
    {
      config: call,
      schema: {
        tags,
        summary: "The account's batches, newest first",
        querystring: BatchListQuery,
        response: withOpenAiErrors({ 200: BatchList }),
      },
    },
    async (request) => batches.list(principalOf(request), request.query),
  );

  r.get(
    '/v1/batches/:batch_id',
    {
      config: call,
      schema: {
        tags,
        summary: 'One batch',
        params: BatchParams,
        response: withOpenAiErrors({ 200: BatchObject }),
      },
    },
    async (request) => batches.get(principalOf(request), request.params.batch_id),
  );

  r.post(
    '/v1/batches/:batch_id/cancel',
    {
      config: call,
      schema: {
        tags,
        summary: 'Cancel a batch (at once if not started; else cancelling until its requests under way end)',
        params: BatchParams,
        body: NoBody,
        response: withOpenAiErrors({ 200: BatchObject }),
      },
    },
    async (request) => batches.cancel(principalOf(request), request.params.batch_id),
  );
}
