import path from 'node:path';

const MIME: Record<string, string> = {
  txt: 'text/plain',
  csv: 'text/csv',
  json: 'application/json',
  xml: 'application/xml',
  html: 'text/html',
  pdf: 'application/pdf',
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  gif: 'image/gif',
  zip: 'application/zip',
  gz: 'application/gzip',
};

/** The MIME type of a downloaded file, from its extension (n8n's copyBinaryFile guesses the same way). */
export const mimeOf = (fileName: string) =>
  MIME[path.extname(fileName).slice(1).toLowerCase()] ?? 'application/octet-stream';
