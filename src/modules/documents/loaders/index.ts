/** One entry point from a load request (source + url/content) to a `LoadedDocument`. */
import { AppError, assertNever, validationError } from '../../../core/errors.js';
import type { OutboundHttp } from '../../../core/http/outbound.js';
import type { DocumentSource, LoadedDocument } from '../types.js';
import { decodeText, fetchDocument, requireHttpUrl, sniffKind, tooLarge } from './fetch-url.js';
import { htmlToDocument } from './html.js';
import { type PdfOptions, pdfToDocument } from './pdf.js';
import { textDocument } from './text.js';

export type { PdfOptions };

export interface LoadInput {
  source: DocumentSource;
  url?: string;
  content?: string;
  title?: string;
}

export interface WorkspacePage {
  title: string;
  markdown: string;
}

export interface LoaderDeps {
  /** The guarded outbound client (private-address guard, redirects, size and time limits). */
  fetch: OutboundHttp;
  /** Largest document accepted, inline or fetched, in bytes (decoded bytes for base64 PDFs). */
  maxBytes: number;
  /** Time limit of a URL fetch. */
  timeoutMs: number;
  pdf: PdfOptions;
  /** Reads a workspace page; absent when the caller has no workspace credential. */
  workspace?: (pageId: string) => Promise<WorkspacePage>;
  /** Normalises a text or Markdown document (the module runs large ones in a CPU worker). */
  text?: (text: string, mimeType: 'text/plain' | 'text/markdown') => Promise<LoadedDocument>;
}

const inlineText = async (text: string, mimeType: 'text/plain' | 'text/markdown') =>
  textDocument(text, mimeType);

export async function loadDocument(input: LoadInput, deps: LoaderDeps): Promise<LoadedDocument> {
  const doc = await loadBySource(input, deps);
  if (doc.pages.every((p) => p.text.trim() === '')) {
    throw new AppError('UNPROCESSABLE', 'the document has no text');
  }
  const given = input.title?.trim();
  return given ? { ...doc, title: given } : doc;
}

async function loadBySource(input: LoadInput, deps: LoaderDeps): Promise<LoadedDocument> {
  const { source } = input;
  switch (source) {
    case 'text':
    case 'markdown': {
      const content = required(input.content, 'content', source);
      checkSize(content, deps.maxBytes);
      return (deps.text ?? inlineText)(content, source === 'text' ? 'text/plain' : 'text/markdown');
    }
    case 'html': {
      const content = required(input.content, 'content', source);
      checkSize(content, deps.maxBytes);
      return htmlToDocument(content, input.url, deps.pdf.timeoutMs);
    }
    case 'pdf': {
      if (present(input.content)) return pdfToDocument(decodeBase64(input.content, deps.maxBytes), deps.pdf);
      const raw = required(input.url, 'url', source, 'content (base64) or url is required');
      const { bytes } = await fetchDocument(requireHttpUrl(raw, 'url'), deps);
      return pdfToDocument(bytes, deps.pdf);
    }
    case 'url':
      return loadUrl(requireHttpUrl(required(input.url, 'url', source), 'url'), deps);
    case 'workspace': {
      const pageId = present(input.content)
        ? input.content.trim()
        : required(input.url, 'content', source, 'content (or url) must hold the page id').trim();
      if (deps.workspace === undefined) {
        throw new AppError('UNPROCESSABLE', 'There is no workspace credential to read the page with');
      }
      const page = await deps.workspace(pageId);
      checkSize(page.markdown, deps.maxBytes);
      const doc = await (deps.text ?? inlineText)(page.markdown, 'text/markdown');
      return { ...doc, title: page.title.trim() || doc.title };
    }
    default:
      return assertNever(source);
  }
}

async function loadUrl(url: URL, deps: LoaderDeps): Promise<LoadedDocument> {
  const fetched = await fetchDocument(url, deps);
  const kind = sniffKind(fetched, url);
  switch (kind) {
    case 'pdf':
      return pdfToDocument(fetched.bytes, deps.pdf);
    case 'html':
      return htmlToDocument(decodeText(fetched, kind), url.toString(), deps.pdf.timeoutMs);
    case 'markdown':
      return (deps.text ?? inlineText)(decodeText(fetched, kind), 'text/markdown');
    case 'text':
      return (deps.text ?? inlineText)(decodeText(fetched, kind), 'text/plain');
    default:
      return assertNever(kind);
  }
}

const present = (value: string | undefined): value is string => value !== undefined && value.trim() !== '';

function required(
  value: string | undefined,
  field: string,
  source: DocumentSource,
  message?: string,
): string {
  if (present(value)) return value;
  const why = message ?? `${field} is required`;
  throw validationError(`${why} for source '${source}'`, [{ field, message: why }]);
}

function checkSize(text: string, maxBytes: number): void {
  // Length first: a string's UTF-8 size is at most 3 bytes per UTF-16 unit and at least one.
  if (text.length > maxBytes || (text.length * 3 > maxBytes && Buffer.byteLength(text, 'utf8') > maxBytes)) {
    throw tooLarge(maxBytes);
  }
}

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/** Strict base64 (line breaks allowed, as MIME wraps it; a `data:` prefix allowed), size-checked first. */
function decodeBase64(content: string, maxBytes: number): Buffer {
  const b64 = content.replace(/^data:[\w.+-]+\/[\w.+-]+;base64,/i, '').replace(/[\r\n\t ]+/g, '');
  if (b64 === '' || b64.length % 4 !== 0 || !BASE64.test(b64)) {
    throw new AppError('UNPROCESSABLE', 'content is not valid base64', { field: 'content' });
  }
  const padding = b64.endsWith('==') ? 2 : b64.endsWith('=') ? 1 : 0;
  if ((b64.length / 4) * 3 - padding > maxBytes) throw tooLarge(maxBytes);
  return Buffer.from(b64, 'base64');
}
