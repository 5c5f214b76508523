import { randomUUID } from 'node:crypto';
import { AppError } from '../../../core/errors.js';
import { binaryOf, fileNameFromDisposition } from '../engine/binary.js';
import type { BinaryData, Json, WebhookNodeInfo } from '../engine/index.js';

/** At most this many files in one multipart body (each is a binary property of the trigger item). */
const MAX_FILES = 100;

/**
 * n8n's webhook bodies as binary data: uploaded files of a multipart body (n8n's names: the field,
 * `field0`, `field1` … when repeated, or `{binaryPropertyName}{n}`), a body the route did not parse
 * (v2; every body with v1's `binaryData`), and `rawBody` as binary `data`. The route read the bytes
 * already, within the webhook's body limit.
 */
export async function webhookBinary(
  hook: WebhookNodeInfo,
  rawBody: Buffer,
  contentType: string | undefined,
  parsed: unknown,
  contentDisposition: string | undefined,
): Promise<{ body?: Json; binary?: Record<string, BinaryData> }> {
  const { binaryBody, binaryPropertyName, rawBodyAs, rawBody: keepRaw } = hook.options;
  if (binaryBody === 'never' && rawBodyAs === 'json') return {};
  const type = (contentType ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
  if (type === 'multipart/form-data') return multipart(rawBody, contentType ?? '', binaryPropertyName);
  const unparsed = parsed === null || parsed === undefined;
  if (
    rawBody.length > 0 &&
    (binaryBody === 'always' || (binaryBody === 'unparsed' && unparsed && !keepRaw))
  ) {
    // n8n names a file it cannot name from the request by a random id.
    const name = fileNameFromDisposition(contentDisposition) ?? randomUUID();
    const file = binaryOf(rawBody, contentType || 'application/octet-stream', name);
    return { body: {}, binary: { [binaryPropertyName ?? 'data']: file } };
  }
  if (keepRaw && rawBodyAs === 'binary')
    return {
      binary: { data: { data: rawBody.toString('base64'), mimeType: contentType || 'application/json' } },
    };
  return {};
}

async function multipart(
  raw: Buffer,
  contentType: string,
  prefix: string | null,
): Promise<{ body: Json; binary?: Record<string, BinaryData> }> {
  let form: FormData;
  try {
    form = await new Response(raw, { headers: { 'content-type': contentType } }).formData();
  } catch {
    throw new AppError('VALIDATION_ERROR', 'The multipart body cannot be read (bad boundary or parts)', {});
  }
  const body: Record<string, Json> = {};
  const files = new Map<string, File[]>();
  for (const [name, value] of form.entries()) {
    if (typeof value === 'string') {
      const earlier = body[name];
      body[name] =
        earlier === undefined ? value : Array.isArray(earlier) ? [...earlier, value] : [earlier, value];
      continue;
    }
    const list = files.get(name) ?? [];
    list.push(value);
    files.set(name, list);
  }
  const total = [...files.values()].reduce((n, list) => n + list.length, 0);
  if (total === 0) return { body };
  if (total > MAX_FILES)
    throw new AppError('VALIDATION_ERROR', `A multipart body may hold at most ${MAX_FILES} files`, {});
  const binary: Record<string, BinaryData> = {};
  let count = 0;
  for (const [field, list] of files) {
    const base = field.endsWith('[]') ? field.slice(0, -2) : field;
    for (const [index, file] of list.entries()) {
      const name = prefix !== null ? `${prefix}${count}` : list.length > 1 ? `${base}${index}` : base;
      binary[name] = binaryOf(
        Buffer.from(await file.arrayBuffer()),
        file.type || 'application/octet-stream',
        file.name || undefined,
      );
      count++;
    }
  }
  return { body, binary };
}
