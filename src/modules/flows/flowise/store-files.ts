import type { MultipartFile } from '@fastify/multipart';
import type { FastifyRequest } from 'fastify';
import { AppError, validationError } from '../../../core/errors.js';
import { assertSafeBody } from '../../../core/http/json-body.js';
import type { IngestInput } from '../../documents/index.js';
import type { UpsertFile } from '../upsert-service.js';

/** A document store upsert as the route reads it: JSON, or multipart turned into the same shape. */
export interface StoreUpsert {
  docId?: string;
  metadata?: Record<string, unknown>;
  replaceExisting?: boolean;
  loader?: { name: string; config: { text?: string } & Record<string, unknown> };
  splitter?: { name?: string; config?: { chunkSize?: number } & Record<string, unknown> };
  files?: UpsertFile[];
}

/** Flowise's file loader nodes by what they read. */
const LOADER_BY_KIND: Record<string, string> = {
  pdf: 'pdfFile',
  csv: 'csvFile',
  json: 'jsonFile',
  html: 'textFile',
  markdown: 'textFile',
  text: 'textFile',
};
const DATA_URL = /^data:([^;,]*);base64,([A-Za-z0-9+/=]*)(?:,filename:(.*))?$/s;

type FileKind = 'pdf' | 'csv' | 'json' | 'html' | 'markdown' | 'text';

/** What a file is, by extension then media type; null when no loader reads it. */
export function kindOfFile(file: Pick<UpsertFile, 'name' | 'type'>): FileKind | null {
  const name = file.name.toLowerCase();
  const type = file.type.toLowerCase().split(';')[0]?.trim() ?? '';
  if (name.endsWith('.pdf') || type === 'application/pdf') return 'pdf';
  if (name.endsWith('.csv') || type === 'text/csv') return 'csv';
  if (name.endsWith('.json') || name.endsWith('.jsonl') || type === 'application/json') return 'json';
  if (name.endsWith('.html') || name.endsWith('.htm') || type === 'text/html') return 'html';
  if (name.endsWith('.md') || name.endsWith('.markdown') || type === 'text/markdown') return 'markdown';
  if (name.endsWith('.txt') || type.startsWith('text/')) return 'text';
  return null;
}

/** The knowledge base's loader for a kind: CSV and JSON are read as their text, as Flowise's loaders do. */
const sourceOf = (kind: FileKind): IngestInput['source'] =>
  kind === 'pdf' ? 'pdf' : kind === 'html' ? 'html' : kind === 'markdown' ? 'markdown' : 'text';

export const loaderNameOf = (file: UpsertFile | undefined): string => {
  const kind = file ? kindOfFile(file) : null;
  return kind ? (LOADER_BY_KIND[kind] ?? 'textFile') : 'plainText';
};

/** A file as the input the knowledge base ingests; a type no loader reads is a 400 naming it. */
export function fileInput(
  file: UpsertFile,
  field: string,
): Pick<IngestInput, 'source' | 'content' | 'title'> {
  const kind = kindOfFile(file);
  if (!kind)
    throw validationError(`File '${file.name}' is of a type no loader reads`, [
      {
        field,
        message: `'${file.name}' (${file.type || 'no type'}): send PDF, text, CSV, JSON, Markdown or HTML`,
      },
    ]);
  const source = sourceOf(kind);
  return {
    source,
    content: source === 'pdf' ? file.data : Buffer.from(file.data, 'base64').toString('utf8'),
    title: file.name,
  };
}

/**
 * The documents one upsert loads: the multipart files, or the data-URL files of the loader's config
 * (`pdfFile`, `txtFile`, `csvFile`, `jsonFile`… as Flowise's UI sends them), else `config.text`.
 */
export function storeInputs(b: StoreUpsert, topic: string, chunkSize: number | undefined): IngestInput[] {
  const files = [...(b.files ?? [])];
  for (const [key, value] of Object.entries(b.loader?.config ?? {})) {
    if (typeof value !== 'string' || !value.startsWith('data:')) continue;
    const match = DATA_URL.exec(value);
    if (!match)
      throw validationError('Invalid file', [
        { field: `loader.config.${key}`, message: 'must be a base64 data URL (data:<mime>;base64,…)' },
      ]);
    files.push({ name: match[3]?.trim() || key, type: match[1] ?? '', data: match[2] ?? '' });
  }
  const common = {
    topic,
    ...(chunkSize !== undefined ? { chunkSize } : {}),
  };
  if (files.length > 0)
    return files.map((file, i) => {
      const input = fileInput(file, `files[${i}]`);
      return {
        ...common,
        ...input,
        metadata: { ...b.metadata, loader: b.loader?.name ?? loaderNameOf(file), fileName: file.name },
      };
    });
  const text = b.loader?.config.text;
  if (text === undefined)
    throw validationError('Nothing to load', [
      { field: 'loader.config', message: 'send text, a data-URL file, or multipart files' },
    ]);
  const name = b.loader?.name ?? 'plainText';
  return [
    { ...common, source: 'text', content: text, title: name, metadata: { ...b.metadata, loader: name } },
  ];
}

/**
 * The most a multipart request's files may hold together: twice one file's limit. The plugin bounds each
 * file and their number, not their sum (nor the route's bodyLimit), and every file is held in memory with
 * its base64 copy.
 */
export const multipartTotalBytes = (maxFileBytes: number): number => 2 * maxFileBytes;

const tooLargeTogether = (limit: number) =>
  new AppError('PAYLOAD_TOO_LARGE', `The files are over ${limit} bytes together`, { limit });

/**
 * A file part's bytes, refused (413) the moment it passes the plugin's per-file limit or the request's
 * total: the plugin's `toBuffer` reads a truncated file to its end before saying so, which let a
 * client stream any size for as long as the request's time limit.
 */
function readFilePart(part: MultipartFile, room: number, limit: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let done = false;
    const fail = (error: unknown) => {
      if (done) return;
      done = true;
      chunks.length = 0;
      part.file.removeAllListeners('data');
      reject(error);
    };
    part.file.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > room) return fail(tooLargeTogether(limit));
      chunks.push(chunk);
    });
    part.file.once('limit', () =>
      fail(
        new AppError(
          'PAYLOAD_TOO_LARGE',
          `File '${part.filename || part.fieldname}' is over the size limit`,
          {
            file: part.filename || part.fieldname,
          },
        ),
      ),
    );
    part.file.once('error', fail);
    part.file.once('end', () => {
      if (done) return;
      done = true;
      resolve(Buffer.concat(chunks));
    });
    // The plugin ends a file of a request that was cut off by destroying it without an error.
    part.file.once('close', () =>
      fail(new AppError('VALIDATION_ERROR', 'The upload ended before its file did')),
    );
  });
}

/**
 * A multipart request's files (bounded together by `totalLimit`) in order; every other field goes to
 * `onField` as text. Every Flowise upload route reads through this.
 */
export async function readMultipartFiles(
  request: FastifyRequest,
  totalLimit: number,
  onField: (name: string, value: string) => void,
): Promise<UpsertFile[]> {
  const files: UpsertFile[] = [];
  let total = 0;
  for await (const part of request.parts()) {
    if (part.type === 'file') {
      const data = await readFilePart(part, totalLimit - total, totalLimit);
      total += data.length;
      files.push({
        name: part.filename || part.fieldname,
        type: part.mimetype ?? '',
        data: data.toString('base64'),
      });
    } else onField(part.fieldname, typeof part.value === 'string' ? part.value : String(part.value));
  }
  return files;
}

/**
 * A form field holding JSON, with the checks a JSON body gets (nesting, NUL, prototype keys): parsed
 * alone it skipped them, and a document's metadata nested 49,000 deep failed later as a 500.
 */
export function jsonField(name: string, value: string): unknown {
  let parsed: unknown;
  try {
    parsed = JSON.parse(value) as unknown;
  } catch {
    throw validationError(`${name} must be JSON`, [{ field: name, message: 'must be a JSON object' }]);
  }
  try {
    assertSafeBody(parsed);
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    throw validationError(`${name} is not acceptable JSON: ${message}`, [{ field: name, message }]);
  }
  return parsed;
}

export async function readStoreMultipart(
  request: FastifyRequest,
  totalLimit: number,
): Promise<Record<string, unknown>> {
  const body: Record<string, unknown> = {};
  const files = await readMultipartFiles(request, totalLimit, (fieldname, value) => {
    if (fieldname === 'docId') body.docId = value;
    else if (fieldname === 'replaceExisting') body.replaceExisting = value === 'true';
    else if (['loader', 'splitter', 'metadata'].includes(fieldname))
      body[fieldname] = jsonField(fieldname, value);
  });
  if (files.length > 0) body.files = files;
  return body;
}
