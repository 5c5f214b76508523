import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { Type } from 'typebox';
import { AppError } from '../../core/errors.js';
import { principalOf } from '../../core/http/auth-hook.js';
import { clientGone, sendLines } from '../../core/http/stream-reply.js';
import { holdStreamSlot } from '../../core/http/stream-slots.js';
import type { ModelPreset } from './model-file.js';
import { MAX_BLOB_BYTES, type ModelManagement, parseModelfile } from './model-management.js';
import { optionsFromOllama } from './ollama-format.js';
import {
  BlobParams,
  OllamaCopyBody,
  OllamaCreateBody,
  type OllamaCreateBodyT,
  OllamaModelBody,
  OllamaStatusResponse,
  withOllamaErrors,
} from './ollama-schemas.js';

const tags = ['Language models: Ollama API'];
/** An answer with no body (Ollama's copy, delete and blob routes). */
const EMPTY = Type.Unknown({ description: 'No body' });
/** Changing the registry is an administrator's: `llm:admin` (Admin and Owner keys, or a Custom scope). */
const admin = { auth: { service: 'llm', operation: 'admin' }, errorFormat: 'ollama' } as const;

const refused = (field: string, message: string) =>
  new AppError('VALIDATION_ERROR', `Invalid body: body.${field} ${message}`, {
    fields: [{ field: `body.${field}`, message }],
  });

/** Fields of `/api/create` that name weights or files: the gateway serves no weights, so it refuses them. */
const WEIGHT_FIELDS = ['files', 'adapters', 'quantize'] as const;

/** The base and preset of a create body (its own fields, or a legacy Modelfile's). */
function createOf(body: OllamaCreateBodyT): { from: string; preset: ModelPreset } {
  for (const field of WEIGHT_FIELDS)
    if (body[field] !== undefined)
      throw refused(field, 'is not supported: the gateway serves no model weights');
  if (body.template !== undefined)
    throw refused('template', "is not supported: a prompt template is the Ollama server's");
  if (body.messages?.length) throw refused('messages', 'are not kept by this gateway');
  if (body.license !== undefined) throw refused('license', 'is not kept by this gateway');
  const file = body.modelfile !== undefined ? parseModelfile(body.modelfile) : { parameters: {} };
  const from = body.from ?? file.from;
  if (!from) throw refused('from', 'is required (the model this one is made from)');
  const preset: ModelPreset = {};
  const system = body.system ?? file.system;
  if (system !== undefined) preset.system = system;
  const parameters = { ...file.parameters, ...body.parameters };
  if (Object.keys(parameters).length) preset.options = optionsFromOllama(parameters);
  return { from, preset };
}

/**
 * Progress as NDJSON (the first line read before the headers: a refusal is still a 4xx). A stream's
 * slot is taken before that line is asked for: refused, the work (a pull from the registry) is ended
 * unstarted instead of left waiting at its first line.
 */
async function progress(
  reply: FastifyReply,
  lines: AsyncGenerator<Record<string, unknown>>,
  stream: boolean,
): Promise<FastifyReply> {
  if (stream) {
    try {
      holdStreamSlot(reply.request, reply);
    } catch (error) {
      await lines.return(undefined).catch(() => undefined);
      throw error;
    }
  }
  const first = await lines.next();
  if (!stream) {
    let last = first.done ? { status: 'success' } : first.value;
    for await (const line of lines) last = line;
    return reply.send(last);
  }
  async function* ndjson(): AsyncGenerator<string> {
    try {
      if (!first.done) yield `${JSON.stringify(first.value)}\n`;
      for await (const line of lines) yield `${JSON.stringify(line)}\n`;
    } catch (error) {
      yield `${JSON.stringify({ error: error instanceof Error ? error.message : 'the pull failed' })}\n`;
    }
  }
  return sendLines(reply, 'application/x-ndjson', ndjson());
}

async function* statusLines(...statuses: string[]): AsyncGenerator<Record<string, unknown>> {
  for (const status of statuses) yield { status };
}

export function ollamaManageRoutes(app: FastifyInstance, management: ModelManagement): void {
  const r = app.withTypeProvider<TypeBoxTypeProvider>();

  r.post(
    '/api/pull',
    {
      config: admin,
      schema: {
        tags,
        summary: 'Pull a model onto the Ollama server that serves it (registers a new one)',
        body: OllamaModelBody,
        response: withOllamaErrors({ 200: OllamaStatusResponse }),
      },
    },
    async (request, reply) => {
      const name = request.body.model ?? request.body.name;
      if (!name) throw refused('model', 'is required');
      return progress(
        reply,
        management.pull(principalOf(request).accountId, name, clientGone(reply)),
        request.body.stream ?? true,
      );
    },
  );

  r.post(
    '/api/create',
    {
      config: admin,
      schema: {
        tags,
        summary: 'Make a model from a registry model with a SYSTEM prompt and PARAMETERs',
        body: OllamaCreateBody,
        response: withOllamaErrors({ 200: OllamaStatusResponse }),
      },
    },
    async (request, reply) => {
      const { from, preset } = createOf(request.body);
      await management.create(principalOf(request).accountId, request.body.model, from, preset);
      return progress(
        reply,
        statusLines('using existing model', 'writing manifest', 'success'),
        request.body.stream ?? true,
      );
    },
  );

  r.post(
    '/api/copy',
    {
      config: admin,
      schema: {
        tags,
        summary: 'Copy a model under another name',
        body: OllamaCopyBody,
        response: withOllamaErrors({ 200: EMPTY }),
      },
    },
    async (request, reply) => {
      await management.copy(principalOf(request).accountId, request.body.source, request.body.destination);
      return reply.code(200).send(undefined);
    },
  );

  r.delete(
    '/api/delete',
    {
      config: admin,
      schema: {
        tags,
        summary: 'Delete a model made through this API',
        body: OllamaModelBody,
        response: withOllamaErrors({ 200: EMPTY }),
      },
    },
    async (request, reply) => {
      const name = request.body.model ?? request.body.name;
      if (!name) throw refused('model', 'is required');
      await management.remove(principalOf(request).accountId, name);
      return reply.code(200).send(undefined);
    },
  );

  r.post(
    '/api/push',
    {
      config: admin,
      schema: {
        tags,
        summary: 'Not served: there is no model registry to push to (always 400)',
        body: OllamaModelBody,
        response: withOllamaErrors({ 200: OllamaStatusResponse }),
      },
    },
    async () => {
      throw new AppError(
        'VALIDATION_ERROR',
        'push is not supported: this gateway has no model registry to push to (push from the Ollama server)',
        {},
      );
    },
  );

  r.head(
    '/api/blobs/:digest',
    {
      config: admin,
      schema: {
        tags,
        summary: 'Whether a blob is here (404 when not)',
        params: BlobParams,
        response: withOllamaErrors({ 200: EMPTY }),
      },
    },
    async (request, reply) => {
      const found = await management.hasBlob(principalOf(request).accountId, request.params.digest);
      return reply.code(found ? 200 : 404).send(undefined);
    },
  );

  // Blobs are raw bytes: read as a buffer, bounded, on this route only.
  app.register(async (scope) => {
    scope.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: MAX_BLOB_BYTES }, (_req, body, done) =>
      done(null, body),
    );
    scope.withTypeProvider<TypeBoxTypeProvider>().post(
      '/api/blobs/:digest',
      {
        config: admin,
        bodyLimit: MAX_BLOB_BYTES,
        schema: {
          tags,
          summary: `Upload a blob (at most ${MAX_BLOB_BYTES} bytes)`,
          params: BlobParams,
          body: Type.Unknown({
            description: "The blob's bytes, any content type; its sha256 must be the digest",
          }),
          response: withOllamaErrors({ 201: EMPTY }),
        },
      },
      async (request, reply) => {
        const body = request.body;
        if (!Buffer.isBuffer(body)) throw refused('', 'must be the blob’s bytes');
        await management.putBlob(principalOf(request).accountId, request.params.digest, body);
        return reply.code(201).send(undefined);
      },
    );
  });
}
