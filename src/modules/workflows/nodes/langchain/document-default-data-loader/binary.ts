import { parse } from 'csv-parse/sync';
import { NodeOperationError } from '../../../engine/node-type.js';
import type { BinaryData, Json } from '../../../engine/types.js';
import { assertSize, FILE_LIMITS } from '../../n8n/file-helpers/limits.js';
import { extractPdf } from '../../n8n/file-helpers/pdf.js';
import { unzipBounded } from '../../n8n/file-helpers/zip-bounds.js';
import type { AiDocument } from '../ai-parts.js';
import { jsonStrings, textDocument } from '../documents.js';

/**
 * n8n's binary loaders (N8nBinaryLoader) of the Default Data Loader: `auto` picks by the file's MIME
 * type; PDF through the documents module's PDF worker, CSV as LangChain's CSVLoader writes rows, DOCX's
 * paragraphs as mammoth's raw text, JSON as LangChain's JSONLoader (with its pointers), text as it is.
 * EPUB is refused by name.
 */
export const BINARY_LOADERS = [
  'auto',
  'pdfLoader',
  'csvLoader',
  'epubLoader',
  'docxLoader',
  'textLoader',
  'jsonLoader',
] as const;
export type BinaryLoader = (typeof BINARY_LOADERS)[number];

const DOCX = 'application/vnd.openxmlformats-officedocument.wordprocessingml.document';

export interface BinaryLoadOptions {
  /** PDF: one document a page (n8n's default), else one for the file. */
  splitPages?: boolean;
  /** CSV: the column whose value is each row's document, and the separator. */
  column?: string;
  separator?: string;
  /** JSON: comma-separated JSON pointers whose strings are the documents. */
  pointers?: string;
}

/** The loader `auto` uses for a file: by MIME type, then by extension; anything else is read as text. */
function detected(file: BinaryData): Exclude<BinaryLoader, 'auto'> {
  const mime = file.mimeType.toLowerCase().split(';')[0]?.trim() ?? '';
  const ext = (file.fileExtension ?? file.fileName?.split('.').pop() ?? '').toLowerCase();
  if (mime === 'application/pdf' || ext === 'pdf') return 'pdfLoader';
  if (mime === 'text/csv' || ext === 'csv') return 'csvLoader';
  if (mime === 'application/epub+zip' || ext === 'epub') return 'epubLoader';
  if (mime === DOCX || ext === 'docx') return 'docxLoader';
  if (mime === 'application/json' || ext === 'json') return 'jsonLoader';
  return 'textLoader';
}

export async function loadBinary(
  file: BinaryData,
  loader: BinaryLoader,
  o: BinaryLoadOptions,
): Promise<AiDocument[]> {
  const kind = loader === 'auto' ? detected(file) : loader;
  const bytes = Buffer.from(file.data, 'base64');
  const blob = (blobType: string, extra: Record<string, Json> = {}) => ({
    source: 'blob',
    blobType,
    ...extra,
  });
  switch (kind) {
    case 'pdfLoader': {
      const pdf = await extractPdf(bytes, { joinPages: false });
      const pages = pdf.text as string[];
      const info = { version: pdf.version, info: pdf.info, metadata: pdf.metadata, totalPages: pages.length };
      if (o.splitPages === false)
        return [
          { pageContent: pages.join('\n\n'), metadata: blob('application/pdf', { pdf: info as Json }) },
        ];
      return pages.map((text, i) => ({
        pageContent: text,
        metadata: blob('application/pdf', { pdf: info as Json, loc: { pageNumber: i + 1 } }),
      }));
    }
    case 'csvLoader':
      return csvDocuments(text(bytes, 'CSV file'), o);
    case 'docxLoader':
      return [{ pageContent: docxText(bytes), metadata: blob(DOCX) }];
    case 'jsonLoader': {
      let json: unknown;
      try {
        json = JSON.parse(text(bytes, 'JSON file'));
      } catch {
        throw new NodeOperationError('The JSON file does not parse');
      }
      const pointers = (o.pointers ?? '')
        .split(',')
        .map((p) => p.trim())
        .filter((p) => p !== '');
      const strings =
        pointers.length === 0 ? jsonStrings(json) : pointers.flatMap((p) => jsonStrings(atPointer(json, p)));
      return strings.map((s, i) => ({
        pageContent: s,
        metadata: blob('application/json', { line: i + 1 }),
      }));
    }
    case 'epubLoader':
      throw new NodeOperationError(
        "The EPUB loader is not supported here: convert the book to text or PDF, or pick 'textLoader'",
      );
    default:
      return [textDocument(text(bytes, 'text file'), file.mimeType || 'text/plain')];
  }
}

function text(bytes: Buffer, what: string): string {
  assertSize(what, bytes.length, FILE_LIMITS.textBytes);
  return bytes.toString('utf8').replace(/^\uFEFF/, '');
}

/** RFC 6901: `/a/0/b`, `~1` for `/` and `~0` for `~`; a missing path gives nothing. */
function atPointer(json: unknown, pointer: string): unknown {
  if (pointer === '' || pointer === '/') return json;
  let at: unknown = json;
  for (const raw of pointer.replace(/^\//, '').split('/')) {
    const key = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    if (at === null || typeof at !== 'object') return undefined;
    at = (at as Record<string, unknown>)[key];
  }
  return at;
}

/** LangChain's CSVLoader: a row is `header: value` lines, or the value of `column`; `line` its row. */
function csvDocuments(source: string, o: BinaryLoadOptions): AiDocument[] {
  let rows: Array<Record<string, string>>;
  try {
    rows = parse(source, {
      delimiter: o.separator || ',',
      columns: true,
      to: FILE_LIMITS.rows + 1,
      relax_column_count: true,
      skip_empty_lines: true,
      bom: true,
    }) as Array<Record<string, string>>;
  } catch (error) {
    throw new NodeOperationError(`The CSV file does not parse: ${(error as Error).message}`);
  }
  if (rows.length > FILE_LIMITS.rows)
    throw new NodeOperationError(`The CSV file has more than ${FILE_LIMITS.rows} rows`);
  const column = o.column?.trim();
  if (column && rows.length > 0 && !(column in (rows[0] as object)))
    throw new NodeOperationError(`Column ${column} not found in CSV file.`);
  return rows.map((row, i) => ({
    pageContent: column
      ? String(row[column] ?? '')
      : Object.entries(row)
          .map(([k, v]) => `${k.trim()}: ${String(v ?? '').trim()}`)
          .join('\n'),
    metadata: { source: 'blob', blobType: 'text/csv', line: i + 1 },
  }));
}

const XML_ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };

/** The WordprocessingML tags that make raw text; `(?=[\s/>])` keeps `w:tabs`, `w:pStyle`… out. */
const DOCX_TAG = /<(\/?)w:(p|pPr|t|tab|br|cr)(?=[\s/>])([^<>]*)>/g;

/**
 * A DOCX file's text, as mammoth's raw text: each paragraph's runs (`w:t`, tabs, breaks) followed by a
 * blank line. Read from `word/document.xml` with a bound on what the zip inflates to, in one pass over
 * its tags (no pattern that rescans: a file of unclosed elements costs the same as a good one).
 */
export function docxText(bytes: Buffer): string {
  const [entry] = unzipBounded(bytes, 'DOCX file', (name) => name === 'word/document.xml');
  if (!entry) throw new NodeOperationError('The DOCX file has no word/document.xml');
  const xml = Buffer.from(entry.bytes).toString('utf8');
  const paragraphs: string[] = [];
  let out = '';
  let inParagraph = false;
  // Paragraph properties hold tab stops (`<w:tabs><w:tab …/>`), not text.
  let inProperties = 0;
  let textFrom = -1;
  for (const m of xml.matchAll(DOCX_TAG)) {
    const [tag, close, name, attributes = ''] = m;
    const empty = attributes.endsWith('/');
    if (name === 'p') {
      if (close || empty || inParagraph) {
        if (inParagraph || empty) paragraphs.push(out);
        out = '';
      }
      inParagraph = !close && !empty;
    } else if (name === 'pPr') {
      if (!empty) inProperties = Math.max(0, inProperties + (close ? -1 : 1));
    } else if (inProperties > 0) {
      // a tab stop, not a tab
    } else if (name === 't') {
      if (close && textFrom >= 0) out += xml.slice(textFrom, m.index);
      textFrom = close || empty ? -1 : m.index + tag.length;
    } else if (!close) out += name === 'tab' ? '\t' : '\n';
  }
  if (inParagraph) paragraphs.push(out);
  return paragraphs
    .map((p) => `${p.replace(/&(amp|lt|gt|quot|apos|#\d+|#x[0-9a-f]+);/gi, entity)}\n\n`)
    .join('');
}

function entity(whole: string, name: string): string {
  if (/^#x/i.test(name)) return safeCodePoint(Number.parseInt(name.slice(2), 16), whole);
  if (name.startsWith('#')) return safeCodePoint(Number(name.slice(1)), whole);
  return XML_ENTITIES[name.toLowerCase()] ?? whole;
}

const safeCodePoint = (n: number, whole: string) =>
  Number.isInteger(n) && n >= 0 && n <= 0x10ffff ? String.fromCodePoint(n) : whole;
