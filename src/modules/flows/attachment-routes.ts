import multipart from '@fastify/multipart';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { AppError, validationError } from '../../core/errors.js';
import { principalOf } from '../../core/http/auth-hook.js';
import type { DocumentsApi } from '../documents/index.js';
import type { FlowService } from './flow-service.js';
import { fileInput, multipartTotalBytes, readMultipartFiles } from './flowise/store-files.js';
import { withFlowiseErrors } from './schemas.js';
import type { UpsertFile } from './upsert-service.js';

const tags = ['Flows (Flowise API)'];
// Each call may read up to twice a file's limit into memory: the per-endpoint limit applies.
const flow = { auth: { service: 'flow', endpointLimit: true }, errorFormat: 'flowise' } as const;
/** Files one call reads; the text all of them give back, at most. */
const MAX_FILES = 10;
const MAX_TEXT = 5_000_000;

const Attachment = Type.Object(
  { name: Type.String(), mimeType: Type.String(), size: Type.Integer(), content: Type.String() },
  { additionalProperties: false },
);

/**
 * Flowise's attachments: the text of uploaded files (PDF through the knowledge base's extraction; text,
 * CSV, JSON, Markdown, HTML), or their bytes as base64, for the client to put in the chat's next
 * prediction as Flowise's widget does. Nothing is stored; the chatflow must be the caller's.
 */
export function attachmentRoutes(
  app: FastifyInstance,
  deps: { flows: FlowService; documents: DocumentsApi | null; maxFileBytes: number },
): void {
  app.register(async (scope) => {
    await scope.register(multipart, {
      limits: { fileSize: deps.maxFileBytes, files: MAX_FILES, fields: 5, fieldSize: 1_000, parts: 20 },
    });
    scope.withTypeProvider<TypeBoxTypeProvider>().post(
      '/api/v1/attachments/:chatflowId/:chatId',
      {
        config: flow,
        bodyLimit: MAX_FILES * deps.maxFileBytes + 65_536,
        schema: {
          tags,
          summary: "The text of files for a chat's context (multipart `files`; `base64=true`: their bytes)",
          params: Type.Object({
            chatflowId: Type.String({ minLength: 1, maxLength: 100 }),
            chatId: Type.String({ minLength: 1, maxLength: 200 }),
          }),
          // The parts are read in the handler (the multipart plugin leaves the body unset): documented only.
          consumes: ['multipart/form-data'],
          body: Type.Unknown({
            description: `multipart/form-data: one part \`files\` per file (at most ${MAX_FILES}); \`base64\` = "true" answers their bytes`,
          }),
          response: withFlowiseErrors({ 200: Type.Array(Attachment) }),
        },
      },
      async (request) => {
        const principal = principalOf(request);
        await deps.flows.load(principal.accountId, request.params.chatflowId);
        if (!request.isMultipart())
          throw validationError('Send the files as multipart/form-data', [
            { field: 'files', message: 'is required' },
          ]);
        const { files, base64 } = await readFiles(request, multipartTotalBytes(deps.maxFileBytes));
        if (files.length === 0)
          throw validationError('No files', [{ field: 'files', message: 'is required' }]);
        const out = [];
        let total = 0;
        for (const [i, file] of files.entries()) {
          const size = Buffer.byteLength(file.data, 'base64');
          const content = base64 ? file.data : await textOf(principal, file, i, deps.documents);
          total += content.length;
          if (total > MAX_TEXT)
            throw new AppError('PAYLOAD_TOO_LARGE', `The files' content is over ${MAX_TEXT} characters`, {
              limit: MAX_TEXT,
            });
          out.push({ name: file.name, mimeType: file.type, size, content });
        }
        return out;
      },
    );
  });
}

async function textOf(
  principal: ReturnType<typeof principalOf>,
  file: UpsertFile,
  index: number,
  documents: DocumentsApi | null,
): Promise<string> {
  const input = fileInput(file, `files[${index}]`);
  if (input.source === 'text' || input.source === 'markdown') return input.content;
  if (!documents)
    throw new AppError('SERVICE_UNAVAILABLE', 'The knowledge base is not enabled on this server');
  return documents.extract(principal, input);
}

async function readFiles(
  request: FastifyRequest,
  totalLimit: number,
): Promise<{ files: UpsertFile[]; base64: boolean }> {
  let base64 = false;
  const files = await readMultipartFiles(request, totalLimit, (name, value) => {
    if (name === 'base64') base64 = value === 'true';
  });
  return { files, base64 };
}
