import { type Static, Type } from 'typebox';
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
 * n8n's Form Trigger (v2–v2.3): a page at `/form/{path}` (`/form-test/{path}` while listening) whose
 * submission starts the workflow with one item, the fields by label plus `submittedAt` and `formMode`,
 * as n8n's. File fields are refused at save (the page posts a plain form, not multipart uploads).
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
  // n8n knows these; they are refused at save with a reason (check), not as unknown.
  'file',
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
    requiredField: Type.Optional(Type.Boolean()),
    fieldOptions: Type.Optional(
      Type.Object(
        { values: Type.Array(Type.Object({ option: Type.String({ maxLength: 500 }) }), { maxItems: 500 }) },
        { additionalProperties: false },
      ),
    ),
    multiselect: Type.Optional(Type.Boolean()),
    // Options of the field types refused at save (check names the type, not these).
    acceptFileTypes: any(),
    multipleFiles: any(),
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

const FormTriggerParameters = Type.Object(
  {
    path: Type.Optional(PATH),
    authentication: Type.Enum(['none', 'basicAuth'] as const, { default: 'none' }),
    formTitle: Type.String({ default: '', maxLength: 500 }),
    formDescription: Type.String({ default: '', maxLength: 10_000 }),
    formFields: FormFieldsParameter,
    responseMode: Type.Enum(['onReceived', 'lastNode', 'responseNode'] as const, { default: 'onReceived' }),
    options: Type.Object(
      {
        path: Type.Optional(PATH),
        buttonLabel: Type.Optional(Type.String({ maxLength: 200 })),
        appendAttribution: Type.Optional(Type.Boolean()),
        formSubmittedText: Type.Optional(Type.String({ maxLength: 10_000 })),
        respondWithOptions: Type.Optional(
          Type.Object(
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
          ),
        ),
      },
      { additionalProperties: false, default: {} },
    ),
  },
  { additionalProperties: false },
);

type Params = Static<typeof FormTriggerParameters>;
export type FieldParams = Static<typeof FormField>;

/** One field as n8n's editor stores it (`formFields.values[i]`; a Form page's JSON-defined fields too). */
export { FormField };

const SUBMITTED_TEXT = 'Your response has been recorded';

/** The fields as the page and the submission check read them. */
export function formFieldsOf(values: readonly FieldParams[]): FormFieldInfo[] {
  return values.map((f) => ({
    label: f.fieldLabel,
    type: f.fieldType as FormFieldType,
    required: f.requiredField === true,
    placeholder: f.placeholder ?? '',
    options: (f.fieldOptions?.values ?? []).map((o) => o.option),
    multiselect: f.multiselect === true,
    name: f.fieldName ?? f.fieldLabel,
    value: f.fieldValue ?? '',
  }));
}

/** Field problems n8n's editor would not let through, or that the page cannot serve. */
export function formFieldProblems(values: readonly FieldParams[], at: string): ValidationProblem[] {
  const problems: ValidationProblem[] = [];
  const labels = new Set<string>();
  values.forEach((f, i) => {
    const path = `${at}[${i}]`;
    if (f.fieldType === 'file' || f.fieldType === 'html')
      problems.push({
        path: `${path}.fieldType`,
        message: `'${f.fieldType}' fields are not served here: the page posts a plain form (no uploads, no custom HTML)`,
      });
    const key = f.fieldType === 'hiddenField' ? (f.fieldName ?? f.fieldLabel) : f.fieldLabel;
    if (key === '' || isExpression(key))
      problems.push({
        path: `${path}.fieldLabel`,
        message: 'must be fixed text: it names the submitted value',
      });
    else if (labels.has(key))
      problems.push({ path: `${path}.fieldLabel`, message: `'${key}' is used twice` });
    labels.add(key);
    if (
      ['dropdown', 'radio', 'checkbox'].includes(f.fieldType) &&
      (f.fieldOptions?.values ?? []).length === 0
    )
      problems.push({ path: `${path}.fieldOptions`, message: 'needs at least one option' });
  });
  return problems;
}

function formOf(p: Params): FormInfo {
  const respond = p.options.respondWithOptions?.values;
  return {
    title: p.formTitle,
    description: p.formDescription,
    buttonLabel: p.options.buttonLabel || 'Submit',
    fields: formFieldsOf(p.formFields.values),
    submittedText: respond?.formSubmittedText ?? p.options.formSubmittedText ?? SUBMITTED_TEXT,
  };
}

function parseFormTrigger(node: WorkflowNode): WebhookNodeInfo[] {
  const p = withDefaults(FormTriggerParameters, node.parameters) as Params;
  const path = trimSlashes(p.options.path ?? p.path ?? node.webhookId ?? node.id);
  // Form fields are few and short: a submission is bounded well below a webhook's default.
  const defaults = withDefaults(WebhookParameters, {
    path,
    options: { bodyLimitBytes: 262_144 },
  }) as WebhookParams;
  const credentials = node.credentials ?? {};
  const form = formOf(p);
  return (['GET', 'POST'] as const).map((httpMethod) => ({
    nodeName: node.name,
    nodeId: node.id,
    path,
    dynamicPrefix: null,
    httpMethod,
    authentication: p.authentication,
    credentialId:
      p.authentication === 'basicAuth'
        ? (credentialRefOf(credentials.httpBasicAuth) ?? credentialRefOf(Object.values(credentials)[0]))
        : null,
    responseMode: p.responseMode,
    responseCode: 200,
    responseData: 'firstEntryJson',
    options: {
      ...defaults.options,
      dedupeKey: null,
      ipAllowList: null,
      binaryBody: 'never',
      binaryPropertyName: null,
      rawBodyAs: 'json',
    },
    responseBinaryPropertyName: 'data',
    form,
  }));
}

export const formTriggerNode = defineNode({
  type: 'n8n-nodes-base.formTrigger',
  versions: [2, 2.1, 2.2, 2.3],
  schema: FormTriggerParameters,
  trigger: true,
  webhook: { parse: parseFormTrigger },
  check(p) {
    const problems = formFieldProblems(p.formFields.values, 'parameters.formFields.values');
    for (const [name, value] of [
      ['path', p.path],
      ['options.path', p.options.path],
      ['formTitle', p.formTitle],
    ] as const)
      if (isExpression(value))
        problems.push({ path: `parameters.${name}`, message: 'must be fixed: it shapes the form page' });
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
