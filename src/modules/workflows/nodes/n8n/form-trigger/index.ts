import { type Static, Type } from 'typebox';
import { isValidCidr } from '../../../../../core/http/ip-rules.js';
import { isExpression } from '../../../engine/expressions.js';
import { defineNode, output } from '../../../engine/node-type.js';
import { withDefaults } from '../../../engine/parameters.js';
import {
  credentialRefOf,
  type FormFieldInfo,
  type FormFieldType,
  type FormInfo,
  type ValidationProblem,
  type WorkflowNode,
} from '../../../engine/types.js';
import { trimSlashes, type WebhookNodeInfo } from '../../../engine/webhook-nodes.js';
import { WebhookParameters, type WebhookParams } from '../../platform/webhook/index.js';

/**
 * n8n's Form Trigger, every version n8n accepts: v1 (its page under `/webhook/{path}/n8n-form`, as n8n
 * 1.x served it) and v2–v2.6 (a page at `/form/{path}`, `/form-test/{path}` while listening). A
 * submission starts the workflow with one item, the fields by label (n8n 2.4+: by `fieldName` when set)
 * plus `submittedAt` and `formMode`, as n8n's; a file field's uploads become the item's binary data.
 */

const FIELD_TYPES = [
  'text',
  'textarea',
  'number',
  'email',
  'password',
  'date',
  'dropdown',
  'checkbox',
  'radio',
  'hiddenField',
  'file',
  // n8n knows it; it is refused at save with a reason (check), not as unknown.
  'html',
] as const;

const any = () => Type.Optional(Type.Unknown());

const FormField = Type.Object(
  {
    fieldLabel: Type.String({ default: '', maxLength: 500 }),
    fieldType: Type.Enum(FIELD_TYPES, { default: 'text' }),
    fieldName: Type.Optional(Type.String({ maxLength: 200 })),
    fieldValue: Type.Optional(Type.String({ maxLength: 10_000 })),
    placeholder: Type.Optional(Type.String({ maxLength: 500 })),
    defaultValue: Type.Optional(Type.String({ maxLength: 10_000 })),
    requiredField: Type.Optional(Type.Boolean()),
    fieldOptions: Type.Optional(
      Type.Object(
        { values: Type.Array(Type.Object({ option: Type.String({ maxLength: 500 }) }), { maxItems: 500 }) },
        { additionalProperties: false },
      ),
    ),
    multiselect: Type.Optional(Type.Boolean()),
    limitSelection: Type.Optional(Type.Enum(['exact', 'range', 'unlimited'] as const)),
    numberOfSelections: Type.Optional(Type.Integer({ minimum: 1, maximum: 500 })),
    minSelections: Type.Optional(Type.Integer({ minimum: 0, maximum: 500 })),
    maxSelections: Type.Optional(Type.Integer({ minimum: 1, maximum: 500 })),
    multipleFiles: Type.Optional(Type.Boolean()),
    acceptFileTypes: Type.Optional(Type.String({ maxLength: 1_000 })),
    // n8n's editor notices (no value of their own) and the date format of n8n's older descriptions.
    formatDate: any(),
    multiselectLegacyNotice: any(),
    // The html field's options (the type is refused at save; check names the type, not these).
    html: any(),
    elementName: any(),
  },
  { additionalProperties: false },
);

export const FormFieldsParameter = Type.Object(
  { values: Type.Array(FormField, { maxItems: 200, default: [] }) },
  { additionalProperties: false, default: { values: [] } },
);

const PATH = Type.String({ minLength: 1, maxLength: 300, pattern: "^/?[A-Za-z0-9._~@!$&'()*+,;=/-]+$" });

const RespondWithOptions = Type.Object(
  {
    values: Type.Object(
      {
        respondWith: Type.Optional(Type.Enum(['text', 'redirect'] as const)),
        formSubmittedText: Type.Optional(Type.String({ maxLength: 10_000 })),
        redirectUrl: Type.Optional(Type.String({ maxLength: 2_000 })),
      },
      { additionalProperties: false },
    ),
  },
  { additionalProperties: false },
);

const FormTriggerParameters = Type.Object(
  {
    path: Type.Optional(PATH),
    authentication: Type.Enum(['none', 'basicAuth', 'n8nUserAuth'] as const, { default: 'none' }),
    requireExecuteAccess: Type.Optional(Type.Boolean()),
    formTitle: Type.String({ default: '', maxLength: 500 }),
    formDescription: Type.String({ default: '', maxLength: 10_000 }),
    formFields: FormFieldsParameter,
    responseMode: Type.Enum(['onReceived', 'lastNode', 'responseNode'] as const, { default: 'onReceived' }),
    formNotice: any(),
    addFormPage: any(),
    options: Type.Object(
      {
        path: Type.Optional(PATH),
        buttonLabel: Type.Optional(Type.String({ maxLength: 200 })),
        appendAttribution: Type.Optional(Type.Boolean()),
        /** Comma-separated addresses or CIDR ranges; others get 403 (empty: everyone). */
        ipWhitelist: Type.Optional(Type.String({ maxLength: 4_000 })),
        ignoreBots: Type.Optional(Type.Boolean()),
        includeUserInOutput: Type.Optional(Type.Boolean()),
        useWorkflowTimezone: Type.Optional(Type.Boolean()),
        // n8n's custom styling: after the page's own style, in a nonce'd style element (`<` escaped).
        customCss: Type.Optional(Type.String({ maxLength: 100_000 })),
        showHeaders: Type.Optional(Type.Boolean()),
        formSubmittedText: Type.Optional(Type.String({ maxLength: 10_000 })),
        respondWithOptions: Type.Optional(RespondWithOptions),
      },
      { additionalProperties: false, default: {} },
    ),
  },
  { additionalProperties: false },
);

/**
 * v1 (n8n 1.x's first Form Trigger): no authentication, its page under `/webhook/`. Without a path
 * (exports carry none) n8n serves it at the node's webhook id (a full-path webhook's `path || webhookId`).
 */
const FormTriggerV1Parameters = Type.Object(
  {
    path: Type.Optional(PATH),
    formTitle: Type.String({ default: '', maxLength: 500 }),
    formDescription: Type.String({ default: '', maxLength: 10_000 }),
    formFields: FormFieldsParameter,
    responseMode: Type.Enum(['onReceived', 'lastNode', 'responseNode'] as const, { default: 'onReceived' }),
    options: Type.Object(
      {
        ipWhitelist: Type.Optional(Type.String({ maxLength: 4_000 })),
        formSubmittedText: Type.Optional(Type.String({ maxLength: 10_000 })),
      },
      { additionalProperties: false, default: {} },
    ),
  },
  { additionalProperties: false },
);

type Params = Static<typeof FormTriggerParameters>;
type V1Params = Static<typeof FormTriggerV1Parameters>;
export type FieldParams = Static<typeof FormField>;

/** One field as n8n's editor stores it (`formFields.values[i]`; a Form page's JSON-defined fields too). */
export { FormField };

const SUBMITTED_TEXT = 'Your response has been recorded';
/** n8n 1.x's path suffix of a v1 form (FORM_TRIGGER_PATH_IDENTIFIER). */
export const V1_FORM_SUFFIX = 'n8n-form';

/**
 * An expression without `{{ }}` (`=Apply now`, what n8n's editor stores when a text field is switched to
 * expression mode) evaluates to its text: read so where the page is built without an evaluation.
 */
export function literalText<T>(value: T): T | string {
  return typeof value === 'string' && value.startsWith('=') && !value.includes('{{') ? value.slice(1) : value;
}

/** n8n's `getFieldIdentifier`: from version 2.4 a field's `fieldName` names its value, else its label. */
function keyOf(f: FieldParams, version: number): string {
  if (version >= 2.4 && f.fieldName) return f.fieldName;
  if (f.fieldType === 'hiddenField') return f.fieldName ?? f.fieldLabel;
  return f.fieldLabel;
}

function selectionBounds(f: FieldParams): { min: number | null; max: number | null } {
  if (f.fieldType !== 'checkbox') return { min: null, max: null };
  if (f.limitSelection === 'exact') return { min: f.numberOfSelections ?? 1, max: f.numberOfSelections ?? 1 };
  if (f.limitSelection === 'range') return { min: f.minSelections ?? 0, max: f.maxSelections ?? 1 };
  return { min: null, max: null };
}

/** The fields as the page and the submission check read them (`version`: the node's typeVersion). */
export function formFieldsOf(values: readonly FieldParams[], version = 1): FormFieldInfo[] {
  return values.map((given) => {
    const f = { ...given, fieldLabel: literalText(given.fieldLabel) };
    const bounds = selectionBounds(f);
    return {
      label: f.fieldLabel,
      type: f.fieldType as FormFieldType,
      required: f.requiredField === true,
      placeholder: f.placeholder ?? '',
      options: (f.fieldOptions?.values ?? []).map((o) => o.option),
      multiselect: f.multiselect === true,
      name: f.fieldName ?? f.fieldLabel,
      value: f.fieldValue ?? '',
      key: keyOf(f, version),
      defaultValue: f.defaultValue ?? '',
      // n8n's default for a file field is several files.
      multipleFiles: f.fieldType === 'file' && f.multipleFiles !== false,
      accept: f.acceptFileTypes ?? '',
      minSelections: bounds.min,
      maxSelections: bounds.max,
    };
  });
}

/** Field problems n8n's editor would not let through, or that the page cannot serve. */
export function formFieldProblems(
  values: readonly FieldParams[],
  at: string,
  version = 1,
  /**
   * The node evaluates its fields when it runs and checks them again then (the n8n Form node's page):
   * a label given as an expression is known only then, as in n8n.
   */
  evaluatedAtRun = false,
): ValidationProblem[] {
  const problems: ValidationProblem[] = [];
  const keys = new Set<string>();
  values.forEach((given, i) => {
    const f = { ...given, fieldLabel: literalText(given.fieldLabel) };
    const path = `${at}[${i}]`;
    if (f.fieldType === 'html')
      problems.push({
        path: `${path}.fieldType`,
        message: "'html' fields are not served here: the page shows no author HTML (its policy allows none)",
      });
    const key = keyOf(f, version);
    if (evaluatedAtRun && isExpression(key)) return;
    if (key === '' || isExpression(key))
      problems.push({
        path: `${path}.fieldLabel`,
        message: 'must be fixed text: it names the submitted value',
      });
    else if (keys.has(key)) problems.push({ path: `${path}.fieldLabel`, message: `'${key}' is used twice` });
    keys.add(key);
    if (
      ['dropdown', 'radio', 'checkbox'].includes(f.fieldType) &&
      (f.fieldOptions?.values ?? []).length === 0
    )
      problems.push({ path: `${path}.fieldOptions`, message: 'needs at least one option' });
    if (isExpression(f.acceptFileTypes ?? ''))
      problems.push({ path: `${path}.acceptFileTypes`, message: 'must be fixed: the page shows it' });
  });
  problems.push(...binaryClashes(values, at, version));
  return problems;
}

/** n8n's binary property of a file field's uploads: its key with `\W` → `_` (`_0`, `_1`… for several). */
export const binaryBaseOf = (key: string) => key.replace(/\W/g, '_');

/**
 * File fields whose uploads would land on one binary property: n8n lets the later one overwrite the
 * earlier silently (`CV file` and `CV-file` are both `CV_file`; `Scan_0` is the first of several
 * `Scan` files). Refused here, naming both fields.
 */
function binaryClashes(values: readonly FieldParams[], at: string, version: number): ValidationProblem[] {
  const files = values.flatMap((f, i) => {
    const key = keyOf(f, version);
    return f.fieldType === 'file' && key !== '' && !isExpression(key)
      ? [{ i, key, base: binaryBaseOf(key), several: f.multipleFiles !== false }]
      : [];
  });
  const problems: ValidationProblem[] = [];
  for (const later of files)
    for (const earlier of files) {
      if (earlier.i >= later.i) break;
      const numbered = (of: typeof later, other: typeof later) =>
        of.several && new RegExp(`^${of.base}_\\d+$`).test(other.base);
      if (earlier.key === later.key) continue; // already refused as a key used twice
      if (earlier.base === later.base || numbered(earlier, later) || numbered(later, earlier)) {
        problems.push({
          path: `${at}[${later.i}].fieldLabel`,
          message: `'${later.key}' would store its files under the same binary property as '${earlier.key}' ('${later.base}'): rename one of them`,
        });
        break;
      }
    }
  return problems;
}

function formOf(p: Params | V1Params, version: number): FormInfo {
  const options = p.options as Params['options'];
  const respond = options.respondWithOptions?.values;
  return {
    title: literalText(p.formTitle),
    description: literalText(p.formDescription),
    buttonLabel: options.buttonLabel || 'Submit',
    fields: formFieldsOf(p.formFields.values, version),
    submittedText: respond?.formSubmittedText ?? options.formSubmittedText ?? SUBMITTED_TEXT,
    showHeaders: options.showHeaders === true,
    // n8n: off by default at v2 (and v1), on above it.
    useWorkflowTimezone: options.useWorkflowTimezone ?? version > 2,
    ...(options.customCss ? { customCss: options.customCss } : {}),
    // n8n: shown unless false.
    appendAttribution: options.appendAttribution !== false,
    ignoreBots: options.ignoreBots === true,
  };
}

/** n8n's `ipWhitelist`: comma-separated entries, blanks ignored. */
function allowListOf(text: string | undefined): string[] | null {
  const list = (text ?? '')
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '');
  return list.length > 0 ? list : null;
}

function parseFormTrigger(node: WorkflowNode): WebhookNodeInfo[] {
  const version = node.typeVersion ?? 1;
  const v1 = version < 2;
  const p = withDefaults(v1 ? FormTriggerV1Parameters : FormTriggerParameters, node.parameters) as Params;
  const base = trimSlashes(
    v1 ? p.path || node.webhookId || node.id : (p.options.path ?? p.path ?? node.webhookId ?? node.id),
  );
  const path = v1 ? `${base}/${V1_FORM_SUFFIX}` : base;
  // Form fields are few and short: a submission is bounded well below a webhook's default (uploads of
  // a file field are bounded apart, by FORM_UPLOAD_MAX_BYTES, where the body is read).
  const defaults = withDefaults(WebhookParameters, {
    path,
    options: { bodyLimitBytes: 262_144 },
  }) as WebhookParams;
  const credentials = node.credentials ?? {};
  const form = { ...formOf(p, version), ...(v1 ? { servedAtWebhook: true } : {}) };
  const authentication = v1 ? 'none' : p.authentication === 'basicAuth' ? 'basicAuth' : 'none';
  return (['GET', 'POST'] as const).map((httpMethod) => ({
    nodeName: node.name,
    nodeId: node.id,
    path,
    dynamicPrefix: null,
    httpMethod,
    authentication,
    credentialId:
      authentication === 'basicAuth'
        ? (credentialRefOf(credentials.httpBasicAuth) ?? credentialRefOf(Object.values(credentials)[0]))
        : null,
    responseMode: p.responseMode,
    responseCode: 200,
    responseData: 'firstEntryJson',
    options: {
      ...defaults.options,
      dedupeKey: null,
      ipAllowList: allowListOf(p.options.ipWhitelist),
      binaryBody: 'never',
      binaryPropertyName: null,
      rawBodyAs: 'json',
    },
    responseBinaryPropertyName: 'data',
    form,
  }));
}

function ipProblems(allowed: string | undefined): ValidationProblem[] {
  if (allowed === undefined) return [];
  if (isExpression(allowed))
    return [{ path: 'parameters.options.ipWhitelist', message: 'must be fixed: it guards the form' }];
  const bad = (allowListOf(allowed) ?? []).filter((entry) => !isValidCidr(entry));
  return bad.length > 0
    ? [
        {
          path: 'parameters.options.ipWhitelist',
          message: `${bad.map((b) => `'${b.slice(0, 60)}'`).join(', ')} is not an IP address or CIDR range`,
        },
      ]
    : [];
}

/** n8n's Form Trigger v1 (n8n 1.x): `/webhook/{path}/n8n-form`, fields by label, no authentication. */
export const formTriggerV1Node = defineNode({
  type: 'n8n-nodes-base.formTrigger',
  versions: [1],
  schema: FormTriggerV1Parameters,
  trigger: true,
  webhook: { parse: parseFormTrigger },
  check(p) {
    const problems = formFieldProblems(p.formFields.values, 'parameters.formFields.values', 1);
    for (const [name, value] of [
      ['path', p.path],
      ['formTitle', literalText(p.formTitle)],
    ] as const)
      if (isExpression(value))
        problems.push({ path: `parameters.${name}`, message: 'must be fixed: it shapes the form page' });
    problems.push(...ipProblems(p.options.ipWhitelist));
    return problems;
  },
  async execute(ctx) {
    return output(ctx.items);
  },
});

export const formTriggerNode = defineNode({
  type: 'n8n-nodes-base.formTrigger',
  versions: [2, 2.1, 2.2, 2.3, 2.4, 2.5, 2.6],
  schema: FormTriggerParameters,
  trigger: true,
  webhook: { parse: parseFormTrigger },
  check(p, _limits) {
    // The version is not among check's arguments: keys are checked as 2.4+ names them when a visible
    // field has a fieldName (n8n's editor shows that name from 2.4 only).
    const named = p.formFields.values.some((f) => f.fieldName && f.fieldType !== 'hiddenField');
    const problems = formFieldProblems(p.formFields.values, 'parameters.formFields.values', named ? 2.4 : 2);
    for (const [name, value] of [
      ['path', p.path],
      ['options.path', p.options.path],
      ['formTitle', literalText(p.formTitle)],
      ['options.customCss', p.options.customCss],
      ['options.appendAttribution', p.options.appendAttribution],
      ['options.ignoreBots', p.options.ignoreBots],
    ] as const)
      if (isExpression(value))
        problems.push({ path: `parameters.${name}`, message: 'must be fixed: it shapes the form page' });
    problems.push(...ipProblems(p.options.ipWhitelist));
    if (p.authentication === 'n8nUserAuth')
      problems.push({
        path: 'parameters.authentication',
        message: "n8n's user sign-in is not served here: use basicAuth (an httpBasicAuth credential) or none",
      });
    if (p.options.respondWithOptions?.values.respondWith === 'redirect')
      problems.push({
        path: 'parameters.options.respondWithOptions',
        message: 'redirecting after a submission is not served here: answer with text',
      });
    return problems;
  },
  async execute(ctx) {
    return output(ctx.items);
  },
});
