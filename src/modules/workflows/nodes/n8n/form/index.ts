import { Type } from 'typebox';
import { isExpression } from '../../../engine/expressions.js';
import { defineNode, NodeOperationError } from '../../../engine/node-type.js';
import type { FormInfo, Json, ValidationProblem } from '../../../engine/types.js';
import { FormFieldsParameter, formFieldProblems, formFieldsOf } from '../form-trigger/index.js';

/**
 * n8n's Form node (v1, "n8n Form"): the pages after a Form Trigger. `page` pauses the execution until
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
    limitType: any(),
    resumeAmount: any(),
    resumeUnit: any(),
    maxDateAndTime: any(),
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
        // n8n's custom styling: accepted, not applied (the page allows only its own nonce'd style).
        customCss: Type.Optional(Type.String({ maxLength: 100_000 })),
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
}

const SAFE_URL = /^https?:\/\/[^\s]+$/i;

export const n8nFormNode = defineNode({
  type: 'n8n-nodes-base.form',
  versions: [1],
  schema: FormParameters,
  check(p): ValidationProblem[] {
    const problems: ValidationProblem[] =
      p.operation === 'page' ? formFieldProblems(p.formFields.values, 'parameters.formFields.values') : [];
    if (p.operation === 'page' && p.defineForm === 'json')
      problems.push({
        path: 'parameters.defineForm',
        message: "'json' forms are not served here: define the fields below (formFields)",
      });
    if (p.limitWaitTime)
      problems.push({
        path: 'parameters.limitWaitTime',
        message: 'a form page waits for its submission only (no time limit) here',
      });
    if (p.operation === 'completion' && (p.respondWith === 'showText' || p.respondWith === 'returnBinary'))
      problems.push({
        path: 'parameters.respondWith',
        message: `'${p.respondWith}' is not served here: show the completion screen or redirect`,
      });
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
    let waiting: FormWaitingContext;
    if (p.operation === 'completion') {
      if (p.respondWith === 'redirect' && !SAFE_URL.test(p.redirectUrl))
        throw new NodeOperationError(`Form: the redirect URL '${p.redirectUrl}' is not an http or https URL`);
      if (p.respondWith !== 'text' && p.respondWith !== 'redirect')
        throw new NodeOperationError(`Form: '${p.respondWith}' is not served here`);
      waiting = {
        operation: 'completion',
        form: {
          title: p.options.formTitle || p.completionTitle,
          description: p.completionTitle,
          buttonLabel: '',
          fields: [],
          submittedText: p.completionMessage,
        },
        ...(p.respondWith === 'redirect' ? { redirectUrl: p.redirectUrl } : {}),
      };
    } else {
      if (p.defineForm === 'json') throw new NodeOperationError("Form: 'json' forms are not served here");
      const problems = formFieldProblems(p.formFields.values, 'formFields');
      if (problems.length > 0)
        throw new NodeOperationError(`Form: ${problems[0]?.path} ${problems[0]?.message}`);
      waiting = {
        operation: 'page',
        form: {
          title: p.options.formTitle ?? '',
          description: p.options.formDescription ?? '',
          buttonLabel: p.options.buttonLabel || 'Submit',
          fields: formFieldsOf(p.formFields.values),
          submittedText: '',
        },
      };
    }
    ctx.context.formWaiting = waiting as unknown as Json;
    return { kind: 'wait', waitTill: null };
  },
});
