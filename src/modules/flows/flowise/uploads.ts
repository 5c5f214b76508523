import { validationError } from '../../../core/errors.js';
import type { Problem } from '../definition.js';

/** What a prediction's `uploads` give the model: images for the question, files' text for the context. */
export interface ReadUploads {
  images: string[];
  text: string;
}

/** The text of uploaded files a prediction puts in its context, at most. */
const MAX_FILE_TEXT = 200_000;
const TEXT_TYPES = /^(text\/|application\/(json|xml|x-yaml|yaml|csv|markdown|x-markdown)\b)/;
const DATA_URL = /^data:([^;,]*)(;[^,]*)?,/;

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * Flowise's prediction `uploads` (`{data, type, name, mime}`): an image file (`type: file`, a data URL)
 * goes to the model with the question when the chatflow's chat model allows image uploads; a text
 * file to read whole (`type: file:full`) joins the context. Image URLs, audio, PDFs and the rest are
 * refused by name (a 400, never ignored).
 */
export function readUploads(uploads: readonly unknown[], options: { images: boolean }): ReadUploads {
  const problems: Problem[] = [];
  const images: string[] = [];
  const texts: string[] = [];
  for (const [i, upload] of uploads.entries()) {
    const field = `uploads[${i}]`;
    if (!isObject(upload) || typeof upload.data !== 'string' || typeof upload.type !== 'string') {
      problems.push({ field, message: 'must be {data, type, name, mime}' });
      continue;
    }
    const name = typeof upload.name === 'string' ? upload.name.slice(0, 300) : `upload ${i}`;
    const match = DATA_URL.exec(upload.data);
    const mime = (typeof upload.mime === 'string' ? upload.mime : (match?.[1] ?? '')).toLowerCase();
    if (upload.type === 'url' || upload.type === 'audio') {
      problems.push({
        field: `${field}.type`,
        message: `'${upload.type}' uploads are not read here: send images and text files as data URLs`,
      });
      continue;
    }
    if (!match?.[2]?.includes('base64')) {
      problems.push({ field: `${field}.data`, message: 'must be a base64 data URL (data:<mime>;base64,…)' });
      continue;
    }
    const payload = upload.data.slice(match[0].length).replace(/,filename:.*$/s, '');
    if (mime.startsWith('image/') && upload.type === 'file') {
      if (!options.images) {
        problems.push({
          field,
          message: "this chatflow's chat model does not accept images (allowImageUploads is off)",
        });
        continue;
      }
      images.push(payload);
      continue;
    }
    if ((upload.type === 'file:full' || upload.type === 'file') && TEXT_TYPES.test(mime)) {
      texts.push(`[${name}]\n${Buffer.from(payload, 'base64').toString('utf8')}`);
      continue;
    }
    problems.push({
      field,
      message: `'${name}' (${mime || 'no type'}): only images and text files are read; load other files with the vector upsert`,
    });
  }
  const text = texts.join('\n\n');
  if (text.length > MAX_FILE_TEXT)
    problems.push({ field: 'uploads', message: `the files' text is over ${MAX_FILE_TEXT} characters` });
  if (problems.length > 0) throw validationError('Invalid uploads', problems);
  return { images, text };
}
