import { zipSync } from 'fflate';
import { Type } from 'typebox';
import { Value } from 'typebox/value';
import { isExpression } from '../../../engine/expressions.js';
import { defineNode, NodeOperationError } from '../../../engine/node-type.js';
import {
  DEFAULT_MAX_WAIT_MS,
  type FormInfo,
  type Item,
  type Json,
  type ValidationProblem,
  type WorkflowNode,
} from '../../../engine/types.js';
import {
  type FieldParams,
  FormField,
  FormFieldsParameter,
  formFieldProblems,
  formFieldsOf,
} from '../form-trigger/index.js';

/**
 * n8n's Form node ("n8n Form", v1, 2.3, 2.4 and 2.5: the versions n8n keeps aligned with its trigger's;
 * from 2.4 a field's `fieldName` names its value): the pages after a Form Trigger. `page` pauses the execution until
 * its page at `/form-waiting/{executionId}` is submitted (the fields become the item, as the trigger's);
 * `completion` pauses until its page is shown, then passes its input on. The page's form (its
 * expressions resolved for the first item) is kept in the node's context for the page routes.
 */
const any = () => Type.Optional(Type.Unknown());

const FormParameters = Type.Object(
  {
    triggerNotice: any(),
    operation: Type.Enum(['page', 'completion'] as const, { default: 'page' }),
    defineForm: Type.Enum(['fields', 'json'] as const, { default: 'fields' }),
    jsonOutput: Type.Optional(Type.String({ maxLength: 100_000 })),
    formFields: FormFieldsParameter,
    limitWaitTime: Type.Boolean({ default: false }),
    limitType: Type.Enum(['afterTimeInterval', 'atSpecifiedTime'] as const, { default: 'afterTimeInterval' }),
    resumeAmount: Type.Number({ minimum: 0, default: 1 }),
    resumeUnit: Type.Enum(['minutes', 'hours', 'days'] as const, { default: 'hours' }),
    maxDateAndTime: Type.Optional(Type.String()),
    respondWith: Type.Enum(['text', 'redirect', 'showText', 'returnBinary'] as const, { default: 'text' }),
    redirectUrl: Type.String({ default: '', maxLength: 2_000 }),
    completionTitle: Type.String({ default: '', maxLength: 500 }),
    completionMessage: Type.String({ default: '', maxLength: 10_000 }),
    responseText: Type.Optional(Type.String({ maxLength: 100_000 })),
    inputDataFieldName: Type.Optional(Type.String({ maxLength: 200 })),
    options: Type.Object(
      {
        formTitle: Type.Optional(Type.String({ maxLength: 500 })),
        formDescription: Type.Optional(Type.String({ maxLength: 10_000 })),
        buttonLabel: Type.Optional(Type.String({ maxLength: 200 })),
        // n8n's custom styling: after the page's own style, in a nonce'd style element (`<` escaped).
        customCss: Type.Optional(Type.String({ maxLength: 100_000 })),
        // n8n's pages take the attribution line from the Form Trigger's option; this one, when set, wins.
        appendAttribution: Type.Optional(Type.Boolean()),
      },
      { additionalProperties: false, default: {} },
    ),
  },
  { additionalProperties: false },
);

/** What the page routes read from the paused node's context (the resumer's `FormWaitingContext`). */
interface FormWaitingContext {
  operation: 'page' | 'completion';
  form: FormInfo;
  redirectUrl?: string;
  responseText?: string;
  download?: { data: string; mimeType: string; fileName: string };
}

/** The largest file a `returnBinary` ending serves (it is kept in the run's state while it waits). */
export const MAX_FORM_DOWNLOAD_BYTES = 16 * 1024 * 1024;

const UNIT_MS = { minutes: 60_000, hours: 3_600_000, days: 86_400_000 } as const;

/**
 * `limitWaitTime`: when the page stops waiting for its submission (n8n's Wait rule: the execution then
 * goes on with the page's input), bounded by the longest wait (WORKFLOW_MAX_WAIT_SECONDS); null: no limit.
 */
function waitLimit(
  p: {
    limitWaitTime: boolean;
    limitType: 'afterTimeInterval' | 'atSpecifiedTime';
    resumeAmount: number;
    resumeUnit: keyof typeof UNIT_MS;
    maxDateAndTime?: string | undefined;
  },
  now: number,
  maxWaitMs: number,
): Date | null {
  if (!p.limitWaitTime) return null;
  const at =
    p.limitType === 'atSpecifiedTime'
      ? Date.parse(p.maxDateAndTime ?? '')
      : now + p.resumeAmount * UNIT_MS[p.resumeUnit];
  if (Number.isNaN(at)) throw new NodeOperationError(`Form: '${p.maxDateAndTime ?? ''}' is not a date`);
  if (at - now > maxWaitMs)
    throw new NodeOperationError(
      `Form: the time limit is beyond the longest wait allowed (${Math.floor(maxWaitMs / 1000)} s, WORKFLOW_MAX_WAIT_SECONDS)`,
    );
  return new Date(at);
}

/**
 * The file a `returnBinary` ending serves: the first input item's binary property (n8n's default
 * `data`). n8n's comma-separated names (several files, each downloaded by its page's script) are one
 * zip here: a page without script starts one download.
 */
function downloadOf(item: Item | undefined, field: string | undefined) {
  const names = (field ?? '')
    .split(',')
    .map((name) => name.trim())
    .filter(Boolean);
  if (names.length === 0) names.push('data');
  const files = names.map((name) => {
    const binary = item?.binary?.[name];
    if (!binary)
      throw new NodeOperationError(`Form: the input item has no binary property '${name}' to return`);
    return { name, binary };
  });
  const size = files.reduce((n, f) => n + Math.ceil((f.binary.data.length * 3) / 4), 0);
  if (size > MAX_FORM_DOWNLOAD_BYTES)
    throw new NodeOperationError(
      `Form: the file${files.length > 1 ? 's' : ''} '${names.join("', '")}' ${files.length > 1 ? 'are' : 'is'} larger than ${MAX_FORM_DOWNLOAD_BYTES / 1024 / 1024} MB, the most an ending serves`,
    );
  const [first] = files;
  if (files.length === 1 && first)
    return {
      data: first.binary.data,
      mimeType: first.binary.mimeType,
      fileName: first.binary.fileName ?? first.name,
    };
  // Entry names are uploaders' file names: only their last segment, no `..`, no control characters, so
  // unzipping the download cannot write outside its folder. A null-prototype map keeps `__proto__` a name.
  const entries: Record<string, Uint8Array> = Object.create(null);
  for (const { name, binary } of files) {
    const safe = zipEntryName(binary.fileName || name);
    let entry = safe;
    for (let n = 1; entry in entries; n++) entry = `${n}-${safe}`;
    entries[entry] = Buffer.from(binary.data, 'base64');
  }
  return {
    data: Buffer.from(zipSync(entries, { level: 0 })).toString('base64'),
    mimeType: 'application/zip',
    fileName: 'files.zip',
  };
}

/** A file name as a zip entry: its last path segment, without control characters, never `.` or `..`. */
export function zipEntryName(name: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is removed
  const last = (name.split(/[\\/]/).pop() ?? '').replace(/[\u0000-\u001f\u007f]/g, '').trim();
  return last === '' || last === '.' || last === '..' ? 'file' : last.slice(0, 200);
}

/**
 * What n8n's Form node reads of the Form Trigger before it (`$('trigger').params.options`): its
 * `appendAttribution` (shown unless false) and `useWorkflowTimezone` (unset: on from trigger v2.1).
 */
function triggerOptions(parents: readonly WorkflowNode[]) {
  const trigger = parents.find((n) => n.type === 'n8n-nodes-base.formTrigger');
  const options = (trigger?.parameters?.options ?? {}) as Record<string, unknown>;
  const zoned = options.useWorkflowTimezone;
  return {
    appendAttribution: options.appendAttribution !== false,
    useWorkflowTimezone:
      zoned === undefined ? trigger !== undefined && (trigger.typeVersion ?? 1) > 2 : zoned === true,
  };
}

const SAFE_URL = /^https?:\/\/[^\s]+$/i;

const JsonFields = Type.Array(FormField, { maxItems: 200 });

/**
 * `defineForm: json`: the fields as a JSON array in n8n's field shape (`[{ "fieldLabel": "Name",
 * "requiredField": true }]`), checked as the editor's fields are; a problem is thrown with its place.
 */
export function jsonFormFields(text: unknown): FieldParams[] {
  let raw: unknown;
  try {
    raw = typeof text === 'string' ? JSON.parse(text) : text;
  } catch {
    throw new NodeOperationError('Form: the form fields JSON is not valid JSON');
  }
  if (!Array.isArray(raw))
    throw new NodeOperationError('Form: the form fields JSON must be an array of fields');
  const fields = raw.map((f) => Value.Default(FormField, structuredClone(f)));
  if (!Value.Check(JsonFields, fields)) {
    const [error] = [...Value.Errors(JsonFields, fields)];
    throw new NodeOperationError(
      `Form: the form fields JSON: ${error?.instancePath || '(root)'} ${error?.message ?? 'is not valid'}`,
    );
  }
  return fields as FieldParams[];
}

export const n8nFormNode = defineNode({
  type: 'n8n-nodes-base.form',
  versions: [1, 2.3, 2.4, 2.5],
  schema: FormParameters,
  check(p): ValidationProblem[] {
    // check has no version: keys as 2.4+ names them when a visible field has a fieldName.
    const keyVersion = (fields: readonly FieldParams[]) =>
      fields.some((f) => f.fieldName && f.fieldType !== 'hiddenField') ? 2.4 : 1;
    const problems: ValidationProblem[] =
      p.operation === 'page' && p.defineForm === 'fields'
        ? formFieldProblems(
            p.formFields.values,
            'parameters.formFields.values',
            keyVersion(p.formFields.values),
            // Evaluated when the node runs (`ctx.params`) and checked again there.
            true,
          )
        : [];
    if (p.operation === 'page' && p.defineForm === 'json' && !isExpression(p.jsonOutput ?? '')) {
      try {
        const fields = jsonFormFields(p.jsonOutput ?? '[]');
        problems.push(...formFieldProblems(fields, 'parameters.jsonOutput', keyVersion(fields)));
      } catch (err) {
        problems.push({ path: 'parameters.jsonOutput', message: (err as Error).message });
      }
    }
    if (
      p.operation === 'completion' &&
      p.respondWith === 'redirect' &&
      !isExpression(p.redirectUrl) &&
      !SAFE_URL.test(p.redirectUrl)
    )
      problems.push({ path: 'parameters.redirectUrl', message: 'must be an http or https URL' });
    return problems;
  },
  async execute(ctx) {
    const p = await ctx.params(0);
    const trigger = triggerOptions(ctx.parentNodes?.() ?? []);
    const look = {
      ...(p.options.customCss ? { customCss: p.options.customCss } : {}),
      appendAttribution: p.options.appendAttribution ?? trigger.appendAttribution,
    };
    let waiting: FormWaitingContext;
    if (p.operation === 'completion') {
      if (p.respondWith === 'redirect' && !SAFE_URL.test(p.redirectUrl))
        throw new NodeOperationError(`Form: the redirect URL '${p.redirectUrl}' is not an http or https URL`);
      waiting = {
        operation: 'completion',
        form: {
          title: p.options.formTitle || p.completionTitle,
          description: p.completionTitle,
          buttonLabel: '',
          fields: [],
          submittedText: p.completionMessage,
          ...look,
        },
        ...(p.respondWith === 'redirect' ? { redirectUrl: p.redirectUrl } : {}),
        ...(p.respondWith === 'showText' ? { responseText: p.responseText ?? '' } : {}),
        ...(p.respondWith === 'returnBinary'
          ? { download: downloadOf(ctx.items[0], p.inputDataFieldName) }
          : {}),
      };
    } else {
      const version = ctx.node.typeVersion ?? 1;
      const values = p.defineForm === 'json' ? jsonFormFields(p.jsonOutput ?? '[]') : p.formFields.values;
      const problems = formFieldProblems(
        values,
        p.defineForm === 'json' ? 'jsonOutput' : 'formFields',
        version,
      );
      if (problems.length > 0)
        throw new NodeOperationError(`Form: ${problems[0]?.path} ${problems[0]?.message}`);
      waiting = {
        operation: 'page',
        form: {
          title: p.options.formTitle ?? '',
          description: p.options.formDescription ?? '',
          buttonLabel: p.options.buttonLabel || 'Submit',
          fields: formFieldsOf(values, version),
          submittedText: '',
          ...look,
          // n8n's Form node writes `submittedAt` as its trigger does: in the workflow's zone when the
          // trigger's useWorkflowTimezone holds (by default from trigger v2.1), else UTC.
          useWorkflowTimezone: trigger.useWorkflowTimezone,
          ...(trigger.useWorkflowTimezone && ctx.timezone ? { timezone: ctx.timezone } : {}),
        },
      };
    }
    ctx.context.formWaiting = waiting as unknown as Json;
    const maxWaitMs = ctx.deps.maxWaitMs ?? DEFAULT_MAX_WAIT_MS;
    return { kind: 'wait', waitTill: waitLimit(p, ctx.deps.now().getTime(), maxWaitMs) };
  },
});
