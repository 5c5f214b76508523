import { DateTime } from 'luxon';
import { AppError } from '../../../core/errors.js';
import { binaryOf } from '../engine/binary.js';
import type { BinaryData, FormFieldInfo, FormInfo, Json } from '../engine/index.js';

/** A submission's value per field, as the page posts it (`field-{index}`) or a JSON caller (by label). */
export type FormValues = Array<string[] | undefined>;

/** A file uploaded to a file field (a multipart part with a file name). */
export interface UploadedFile {
  fileName: string;
  mimeType: string;
  bytes: Buffer;
}

/** A submission's files per field (file fields only; the others stay undefined). */
export type FormFiles = Array<UploadedFile[] | undefined>;

/** The item's key of a field (a page stored before keys were kept: the label, a hidden field's name). */
const keyOf = (f: FormFieldInfo) => f.key ?? (f.type === 'hiddenField' ? f.name : f.label);

/** At most this many files in one submission (each is a binary property of the item). */
export const MAX_FORM_FILES = 100;
/** At most this many parts (values and files) in one multipart submission: a form has a few dozen fields. */
export const MAX_FORM_PARTS = 2_000;

/** What a field is told when its value does not do (shown next to it on the page). */
export interface FieldProblem {
  field: number;
  label: string;
  message: string;
}

const EMAIL = /^[^\s@]{1,64}@[^\s@]{1,255}\.[^\s@]{1,63}$/;
const DATE = /^\d{4}-\d{2}-\d{2}$/;
/** One field's value: longer text than this is refused rather than carried into the execution. */
const MAX_VALUE_CHARS = 10_000;

/** The page's own post (`application/x-www-form-urlencoded`): every value of `field-{i}`. */
export function valuesFromForm(form: FormInfo, raw: Buffer): FormValues {
  const params = new URLSearchParams(raw.toString('utf8'));
  return form.fields.map((_f, i) => {
    const all = params.getAll(`field-${i}`);
    return all.length > 0 ? all : undefined;
  });
}

/**
 * n8n's own post (`multipart/form-data`, as its page's script and a `fetch` with `FormData` send it):
 * text parts of `field-{i}` are values, parts with a file name are files of a file field. The body was
 * read within its bound before; an empty file part (a browser's file input left empty) is no file.
 */
export async function submissionFromMultipart(
  form: FormInfo,
  raw: Buffer,
  contentType: string,
): Promise<{ values: FormValues; files: FormFiles }> {
  let data: FormData;
  try {
    data = await new Response(raw, { headers: { 'content-type': contentType } }).formData();
  } catch {
    throw new AppError('VALIDATION_ERROR', 'The multipart body cannot be read (bad boundary or parts)', {});
  }
  const values: FormValues = form.fields.map(() => undefined);
  const files: FormFiles = form.fields.map(() => undefined);
  let count = 0;
  let parts = 0;
  for (const [name, value] of data.entries()) {
    if (++parts > MAX_FORM_PARTS)
      throw new AppError('VALIDATION_ERROR', `A form submission may hold at most ${MAX_FORM_PARTS} parts`, {
        limit: MAX_FORM_PARTS,
      });
    const index = /^field-(\d{1,4})$/.exec(name)?.[1];
    const i = index === undefined ? -1 : Number(index);
    const field = form.fields[i];
    if (!field) continue;
    if (typeof value === 'string') {
      if (field.type !== 'file') {
        const list = values[i] ?? [];
        list.push(value);
        values[i] = list;
      }
      continue;
    }
    if (field.type !== 'file' || (value.name === '' && value.size === 0)) continue;
    if (++count > MAX_FORM_FILES)
      throw new AppError('VALIDATION_ERROR', `A form submission may hold at most ${MAX_FORM_FILES} files`, {
        limit: MAX_FORM_FILES,
      });
    const list = files[i] ?? [];
    list.push({
      fileName: value.name || 'file',
      mimeType: value.type || 'application/octet-stream',
      bytes: Buffer.from(await value.arrayBuffer()),
    });
    files[i] = list;
  }
  return { values, files };
}

/** A JSON object keyed by label (a hidden field by its name): text, a number or a list of text. */
export function valuesFromJson(form: FormInfo, body: unknown): FormValues {
  const object = body !== null && typeof body === 'object' && !Array.isArray(body) ? body : {};
  return form.fields.map((f) => {
    const key = keyOf(f);
    if (f.type === 'file' || !Object.hasOwn(object, key)) return undefined;
    const value = (object as Record<string, unknown>)[key];
    if (value === null || value === undefined) return undefined;
    const list = Array.isArray(value) ? value : [value];
    return list.map((v) => (typeof v === 'string' ? v : JSON.stringify(v)));
  });
}

/**
 * The trigger's item as n8n's Form Trigger makes it (each field by label, `submittedAt`, `formMode`), or
 * what is wrong with each field. Values are checked as n8n's page checks them before it posts.
 */
export function formItem(
  form: FormInfo,
  values: FormValues,
  meta: { submittedAt: string; formMode: 'test' | 'production' },
  files: FormFiles = [],
): { json: Record<string, Json>; binary?: Record<string, BinaryData> } | { problems: FieldProblem[] } {
  // Keys are the author's labels: `__proto__` or `constructor` is a key like any other (own properties).
  const json: Record<string, Json> = {};
  const binary: Record<string, BinaryData> = {};
  const problems: FieldProblem[] = [];
  form.fields.forEach((field, i) => {
    if (field.type === 'file') {
      const result = fileValue(field, files[i] ?? []);
      if ('message' in result) {
        problems.push({ field: i, label: field.label, message: result.message });
        return;
      }
      // Refused at save; a page stored before that check must not let one field's files replace another's.
      const taken = Object.keys(result.binary).find((name) => Object.hasOwn(binary, name));
      if (taken !== undefined) {
        problems.push({
          field: i,
          label: field.label,
          message: `The files of this field would replace another field's ('${taken}'): the form needs distinct field names`,
        });
        return;
      }
      put(json, keyOf(field), result.value);
      for (const [name, data] of Object.entries(result.binary)) put(binary, name, data);
      return;
    }
    const posted = values[i];
    // As n8n: text and email values are trimmed; a field the post does not hold at all is null.
    const trim = field.type === 'text' || field.type === 'email';
    const given = (posted ?? []).map((v) => (trim ? v.trim() : v)).filter((v) => v !== '');
    const result = fieldValue(field, given, posted === undefined);
    if ('message' in result) problems.push({ field: i, label: field.label, message: result.message });
    else put(json, keyOf(field), result.value);
  });
  if (problems.length > 0) return { problems };
  json.submittedAt = meta.submittedAt;
  json.formMode = meta.formMode;
  return Object.keys(binary).length > 0 ? { json, binary } : { json };
}

/**
 * `object[key] = value` as an own property whatever the key: a plain assignment to `__proto__` would
 * set the prototype (or do nothing) and the value would be lost.
 */
function put<T>(object: Record<string, T>, key: string, value: T): void {
  Object.defineProperty(object, key, { value, enumerable: true, writable: true, configurable: true });
}

/**
 * n8n's `submittedAt`: `now` in UTC (ending in Z), or with the zone's offset when the form uses the
 * workflow's time zone (`useWorkflowTimezone`).
 */
export function submittedAtOf(now: Date, zone: string): string {
  if (zone === 'UTC') return now.toISOString();
  return DateTime.fromJSDate(now, { zone }).toISO() ?? now.toISOString();
}

/** `.jpg, .png` (n8n's accepted extensions; a media type such as `image/*` also works, as in a browser). */
function accepts(accept: string, file: UploadedFile): boolean {
  const entries = accept
    .split(',')
    .map((e) => e.trim().toLowerCase())
    .filter(Boolean);
  if (entries.length === 0) return true;
  const name = file.fileName.toLowerCase();
  const type = file.mimeType.toLowerCase();
  return entries.some((e) =>
    e.includes('/')
      ? e.endsWith('/*')
        ? type.startsWith(e.slice(0, -1))
        : type === e
      : name.endsWith(e.startsWith('.') ? e : `.${e}`),
  );
}

/**
 * A file field as n8n's Form Trigger makes it: each file a binary property named after the field
 * (`\W` → `_`; `_0`, `_1`… when several came), and in the JSON its `{filename, mimetype, size}` (a list
 * when the field takes several files); no file: null.
 */
function fileValue(
  field: FormFieldInfo,
  given: UploadedFile[],
): { value: Json; binary: Record<string, BinaryData> } | { message: string } {
  if (given.length === 0)
    return field.required ? { message: 'This field is required' } : { value: null, binary: {} };
  if (!field.multipleFiles && given.length > 1) return { message: 'Choose one file' };
  const refused = given.find((f) => !accepts(field.accept ?? '', f));
  if (refused)
    return { message: `'${refused.fileName.slice(0, 200)}' is not an accepted file type (${field.accept})` };
  const base = keyOf(field).replace(/\W/g, '_');
  const binary: Record<string, BinaryData> = {};
  const described = given.map((file, n) => {
    put(binary, given.length > 1 ? `${base}_${n}` : base, binaryOf(file.bytes, file.mimeType, file.fileName));
    return { filename: file.fileName, mimetype: file.mimeType, size: file.bytes.length };
  });
  const [one] = described;
  return { value: described.length === 1 && one && !field.multipleFiles ? one : described, binary };
}

function fieldValue(
  field: FormFieldInfo,
  given: string[],
  absent = false,
): { value: Json } | { message: string } {
  if (given.some((v) => v.length > MAX_VALUE_CHARS))
    return { message: `Enter at most ${MAX_VALUE_CHARS} characters` };
  const list = field.type === 'checkbox' || (field.type === 'dropdown' && field.multiselect);
  if (given.length === 0) {
    if (field.type === 'hiddenField') return { value: field.value };
    if (field.required) return { message: 'This field is required' };
    return { value: absent ? null : list ? [] : '' };
  }
  if (!list && given.length > 1) return { message: 'Give one value' };
  const first = given[0] as string;
  switch (field.type) {
    case 'number': {
      const n = Number(first);
      return first.trim() !== '' && Number.isFinite(n) ? { value: n } : { message: 'Enter a number' };
    }
    case 'email':
      return EMAIL.test(first) ? { value: first } : { message: 'Enter a valid email address' };
    case 'date':
      return DATE.test(first) && !Number.isNaN(Date.parse(first))
        ? { value: first }
        : { message: 'Enter a valid date (YYYY-MM-DD)' };
    case 'dropdown':
    case 'radio':
    case 'checkbox': {
      const unknown = given.find((v) => !field.options.includes(v));
      if (unknown !== undefined) return { message: 'Choose one of the options' };
      const { minSelections: min, maxSelections: max } = field;
      if (min != null && max != null && (given.length < min || given.length > max))
        return {
          message:
            min === max ? `Choose ${min} of the options` : `Choose between ${min} and ${max} of the options`,
        };
      return { value: list ? given : first };
    }
    default:
      return { value: first };
  }
}
