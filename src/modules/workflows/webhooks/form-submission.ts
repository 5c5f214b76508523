import type { FormFieldInfo, FormInfo, Json } from '../engine/index.js';

/** A submission's value per field, as the page posts it (`field-{index}`) or a JSON caller (by label). */
export type FormValues = Array<string[] | undefined>;

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

/** A JSON object keyed by label (a hidden field by its name): text, a number or a list of text. */
export function valuesFromJson(form: FormInfo, body: unknown): FormValues {
  const object = body !== null && typeof body === 'object' && !Array.isArray(body) ? body : {};
  return form.fields.map((f) => {
    const key = f.type === 'hiddenField' ? f.name : f.label;
    if (!Object.hasOwn(object, key)) return undefined;
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
): { json: Record<string, Json> } | { problems: FieldProblem[] } {
  const json: Record<string, Json> = {};
  const problems: FieldProblem[] = [];
  form.fields.forEach((field, i) => {
    const given = (values[i] ?? []).filter((v) => v !== '');
    const result = fieldValue(field, given);
    if ('message' in result) problems.push({ field: i, label: field.label, message: result.message });
    else json[field.type === 'hiddenField' ? field.name : field.label] = result.value;
  });
  if (problems.length > 0) return { problems };
  json.submittedAt = meta.submittedAt;
  json.formMode = meta.formMode;
  return { json };
}

function fieldValue(field: FormFieldInfo, given: string[]): { value: Json } | { message: string } {
  if (given.some((v) => v.length > MAX_VALUE_CHARS))
    return { message: `Enter at most ${MAX_VALUE_CHARS} characters` };
  const list = field.type === 'checkbox' || (field.type === 'dropdown' && field.multiselect);
  if (given.length === 0) {
    if (field.type === 'hiddenField') return { value: field.value };
    if (field.required) return { message: 'This field is required' };
    return { value: list ? [] : '' };
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
      return { value: list ? given : first };
    }
    default:
      return { value: first };
  }
}
