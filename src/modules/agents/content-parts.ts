import { type Static, Type } from 'typebox';
import { type AppError, validationError } from '../../core/errors.js';
import type { ChatMessage, FileInput } from '../llm/index.js';

/**
 * Messages with images and files, as OpenAI's Chat Completions (`text`, `image_url`, `file`), its
 * Responses API (`input_text`, `input_image`, `input_file`) and Ollama (`images: [base64]`) carry
 * them, reduced to what the gateway speaks: the text, base64 images and documents (PDF) on the message.
 * They come inline (`data:` URLs) only: fetching a caller's URL would make the platform an open proxy,
 * and the gateway's OpenAI surface decided the same. Text files are read into the text (every model
 * reads that); PDFs go to models whose registry entry lists `file`; other files are refused.
 */

/** Decoded bytes of one image or file, and of all of one message's. */
export const MAX_PART_BYTES = 5 * 1024 * 1024;
export const MAX_MESSAGE_BYTES = 10 * 1024 * 1024;
export const MAX_IMAGES = 10;
export const MAX_FILES = 10;
/**
 * A message's text with its text files read in, at most: the transcript keeps it and every later turn
 * sends it again, so a 10 MB text file would weigh on each of them.
 */
export const MAX_MESSAGE_TEXT = 100_000;
/** A message route's body: the decoded limit in base64 (4/3) with room for the rest. */
export const MESSAGE_BODY_LIMIT = Math.ceil((MAX_MESSAGE_BYTES * 4) / 3) + 1024 * 1024;

const IMAGE_TYPES = new Set(['image/png', 'image/jpeg', 'image/gif', 'image/webp']);
/** Documents a model reads whole: what both OpenAI's `file` part and Anthropic's `document` take. */
const DOCUMENT_TYPES = new Set(['application/pdf']);
const TEXT_FILE = /^(text\/[a-z0-9.+-]+|application\/(json|xml|x-ndjson|yaml|x-yaml))$/;
const DATA_URL = /^data:([a-z0-9.+-]+\/[a-z0-9.+-]+)(?:;[a-z0-9-]+=[^;,]*)*;base64,/i;
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

export const ContentPart = Type.Union([
  Type.Object({ type: Type.Enum(['text', 'input_text'] as const), text: Type.String({ maxLength: 32_000 }) }),
  Type.Object({
    type: Type.Literal('image_url'),
    image_url: Type.Object({ url: Type.String(), detail: Type.Optional(Type.String()) }),
  }),
  Type.Object({
    type: Type.Literal('input_image'),
    image_url: Type.String(),
    detail: Type.Optional(Type.String()),
  }),
  Type.Object({
    type: Type.Literal('file'),
    file: Type.Object({ file_data: Type.String(), filename: Type.Optional(Type.String({ maxLength: 255 })) }),
  }),
  Type.Object({
    type: Type.Literal('input_file'),
    file_data: Type.String(),
    filename: Type.Optional(Type.String({ maxLength: 255 })),
  }),
]);

/** Which part a refusal names: its field (`content[1]`, `images[0]`) and its type (`input_file`). */
export interface PartRef {
  field: string;
  type: string;
}

export interface FileRef extends PartRef {
  mediaType: string;
}

/** What a message's parts come to: the text the model reads, its images (base64, no data: prefix), its documents. */
export interface MessageContent {
  text: string;
  images: string[];
  files: FileInput[];
  /** The first image's part: named when a model refuses images. */
  firstImage?: PartRef;
  /** The first document's part and type: named when a model refuses files. */
  firstFile?: FileRef;
  /** One line per image and document for the stored transcript (type and size, never the bytes). */
  notes: string[];
}

const problem = (field: string, message: string): AppError =>
  validationError('Invalid message content', [{ field, message }]);

/** The decoded size of base64 text, after checking it is base64. */
function decodedBytes(data: string, field: string): number {
  if (data.length % 4 !== 0 || !BASE64.test(data)) throw problem(field, 'is not valid base64');
  const padding = data.endsWith('==') ? 2 : data.endsWith('=') ? 1 : 0;
  return (data.length / 4) * 3 - padding;
}

function dataUrl(url: string, field: string): { mediaType: string; data: string } {
  const match = DATA_URL.exec(url);
  if (!match)
    throw problem(
      field,
      /^https?:/i.test(url)
        ? 'must be a data: URL; the platform does not fetch images or files from URLs'
        : 'must be a base64 data: URL',
    );
  return { mediaType: (match[1] as string).toLowerCase(), data: url.slice(match[0].length) };
}

/** The image type of base64 bytes by their signature (Ollama's `images` carry no type). */
function sniffImage(data: string): string | undefined {
  const head = Buffer.from(data.slice(0, 16), 'base64');
  if (head[0] === 0x89 && head[1] === 0x50) return 'image/png';
  if (head[0] === 0xff && head[1] === 0xd8) return 'image/jpeg';
  if (head.subarray(0, 3).toString('latin1') === 'GIF') return 'image/gif';
  if (head.subarray(8, 12).toString('latin1') === 'WEBP') return 'image/webp';
  return undefined;
}

class Collector {
  readonly texts: string[] = [];
  readonly images: string[] = [];
  readonly files: FileInput[] = [];
  readonly notes: string[] = [];
  firstImage: MessageContent['firstImage'];
  firstFile: FileRef | undefined;
  private bytes = 0;

  private count(bytes: number, field: string): void {
    if (bytes > MAX_PART_BYTES)
      throw problem(field, `is ${bytes} bytes decoded; a part may have at most ${MAX_PART_BYTES}`);
    this.bytes += bytes;
    if (this.bytes > MAX_MESSAGE_BYTES)
      throw problem(field, `brings the message to over ${MAX_MESSAGE_BYTES} bytes of images and files`);
  }

  image(data: string, mediaType: string | undefined, field: string, type: string): void {
    const kind = mediaType ?? sniffImage(data);
    if (!kind || !IMAGE_TYPES.has(kind))
      throw problem(field, `must be a PNG, JPEG, GIF or WebP image${kind ? ` (not ${kind})` : ''}`);
    const bytes = decodedBytes(data, field);
    this.count(bytes, field);
    if (this.images.length >= MAX_IMAGES)
      throw problem(field, `is one image too many: a message may have at most ${MAX_IMAGES}`);
    this.images.push(data);
    this.firstImage ??= { field, type };
    this.notes.push(`[image: ${kind}, ${bytes} bytes]`);
  }

  file(url: string, filename: string | undefined, field: string, type: string): void {
    const { mediaType, data } = dataUrl(url, field);
    if (IMAGE_TYPES.has(mediaType)) {
      this.image(data, mediaType, field, type);
      return;
    }
    if (DOCUMENT_TYPES.has(mediaType)) {
      const bytes = decodedBytes(data, field);
      this.count(bytes, field);
      if (this.files.length >= MAX_FILES)
        throw problem(field, `is one file too many: a message may have at most ${MAX_FILES}`);
      const name = filename ?? 'file';
      this.files.push({ mediaType, data, ...(filename !== undefined ? { filename } : {}) });
      this.firstFile ??= { field, type, mediaType };
      this.notes.push(fileNote(name, mediaType, bytes));
      return;
    }
    if (!TEXT_FILE.test(mediaType))
      throw problem(
        field,
        `is a ${mediaType} file; accepted are PDF (application/pdf), text files (text/*, JSON, XML, YAML) and images`,
      );
    this.count(decodedBytes(data, field), field);
    const name = filename ?? 'file';
    this.texts.push(`--- ${name} (${mediaType}) ---\n${Buffer.from(data, 'base64').toString('utf8')}`);
  }
}

type Part = Static<typeof ContentPart>;

/**
 * A message's content (a string or parts) and Ollama-style `images`, checked and reduced; `field`
 * names the content in errors (`content`, `input[2].content`).
 */
export function messageContent(
  content: string | readonly Part[] | readonly Record<string, unknown>[],
  images: readonly string[] = [],
  field = 'content',
  imagesField = 'images',
): MessageContent {
  const c = new Collector();
  if (typeof content === 'string') c.texts.push(content);
  else
    for (const [i, raw] of content.entries()) {
      const part = raw as Record<string, unknown>;
      const at = `${field}[${i}]`;
      const type = String(part.type);
      if (type === 'text' || type === 'input_text' || type === 'output_text') {
        if (typeof part.text !== 'string') throw problem(`${at}.text`, 'must be a string');
        c.texts.push(part.text);
      } else if (type === 'image_url' || type === 'input_image') {
        const url =
          type === 'image_url' ? (part.image_url as { url?: unknown } | undefined)?.url : part.image_url;
        if (typeof url !== 'string') throw problem(`${at}.image_url`, 'must be a data: URL');
        const { mediaType, data } = dataUrl(url, `${at}.image_url`);
        c.image(data, mediaType, `${at}.image_url`, type);
      } else if (type === 'file' || type === 'input_file') {
        const file = (type === 'file' ? part.file : part) as { file_data?: unknown; filename?: unknown };
        if (typeof file?.file_data !== 'string')
          throw problem(`${at}.file_data`, 'must be a data: URL (file ids are not supported)');
        c.file(file.file_data, typeof file.filename === 'string' ? file.filename : undefined, at, type);
      } else throw problem(`${at}.type`, `'${type}' parts are not supported`);
    }
  for (const [i, data] of images.entries()) c.image(data, undefined, `${imagesField}[${i}]`, 'images');
  const text = c.texts.filter((t) => t !== '').join('\n\n');
  if (text.length > MAX_MESSAGE_TEXT)
    throw problem(
      field,
      `holds ${text.length} characters with its files read in; at most ${MAX_MESSAGE_TEXT}`,
    );
  return {
    text,
    images: c.images,
    files: c.files,
    notes: c.notes,
    ...(c.firstImage ? { firstImage: c.firstImage } : {}),
    ...(c.firstFile ? { firstFile: c.firstFile } : {}),
  };
}

/** A document's line in the transcript: its name, type and size. */
const fileNote = (name: string, mediaType: string, bytes: number): string =>
  `[file: ${name.replace(/[\]\n\r]/g, '_')}, ${mediaType}, ${bytes} bytes]`;

const article = (word: string): string => (/^[aeiou]/.test(word) ? 'an' : 'a');

/** What a model reads besides text, for a refusal: `text only`, `text and image`. */
const reads = (inputs: readonly string[]): string => {
  const rest = inputs.filter((i) => i !== 'text');
  return rest.length === 0 ? 'text only' : `text and ${rest.join(' and ')}`;
};

/**
 * The 400 for the first image or document a model does not read (its registry entry lists no
 * `image` / `file` input), naming the model, the part and what the model takes; null when it reads them.
 */
export function partsRefused(
  model: string,
  inputs: readonly string[],
  seen: { firstImage?: PartRef; firstFile?: FileRef },
): AppError | null {
  if (seen.firstImage && !inputs.includes('image')) return imagesRefused(model, seen.firstImage, inputs);
  const file = seen.firstFile;
  if (!file || inputs.includes('file')) return null;
  return validationError(`Model '${model}' does not accept files`, [
    {
      field: file.field,
      message: `is ${article(file.type)} ${file.type} part (${file.mediaType}), but model '${model}' takes ${reads(inputs)} (its registry entry lists no 'file' input)`,
    },
  ]);
}

/** The 400 for images sent to a model whose registry entry does not list `image` in its inputs. */
function imagesRefused(model: string, first: PartRef, inputs: readonly string[]): AppError {
  return validationError(`Model '${model}' does not accept images`, [
    {
      field: first.field,
      message: `is ${article(first.type)} ${first.type} part, but model '${model}' takes ${reads(inputs)} (its registry entry lists no 'image' input)`,
    },
  ]);
}

/** A message as the transcript keeps it: its images and documents as notes (type and size), never their bytes. */
export function withoutAttachments(message: ChatMessage): ChatMessage {
  if (!message.images?.length && !message.files?.length) return message;
  const { images, files, ...rest } = message;
  const notes = [
    ...(images ?? []).map(
      (data) => `[image: ${sniffImage(data) ?? 'image'}, ${decodedBytes(data, 'images')} bytes]`,
    ),
    ...(files ?? []).map((f) => fileNote(f.filename ?? 'file', f.mediaType, decodedBytes(f.data, 'files'))),
  ];
  return { ...rest, content: [rest.content, ...notes].filter((t) => t !== '').join('\n') };
}
