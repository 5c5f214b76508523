import type { NodeExecutionContext, NodeResult } from '../../../engine/node-type.js';
import { NodeOperationError } from '../../../engine/node-type.js';
import type { FormFieldInfo, Json } from '../../../engine/types.js';
import { DEFAULT_MAX_WAIT_MS } from '../../../engine/types.js';
import type { FormWaitingContext } from '../../../executions/resumer.js';
import { callBot, type TelegramBot } from './api.js';
import { ATTRIBUTION } from './body.js';
import type { TelegramParams } from './schema.js';

const UNIT_MS = { minutes: 60_000, hours: 3_600_000, days: 86_400_000 } as const;

/** n8n's free-text answer: one required textarea, its value under `text`. */
const RESPONSE_FIELD: FormFieldInfo = {
  label: 'Response',
  type: 'textarea',
  required: true,
  placeholder: '',
  options: [],
  multiselect: false,
  name: '',
  value: '',
  key: 'text',
  defaultValue: '',
  multipleFiles: false,
  accept: '',
  minSelections: null,
  maxSelections: null,
};

/**
 * n8n's Send and Wait for Response on Telegram: the message goes out with inline buttons linking to
 * the execution's signed page (`/form-waiting/{id}?signature=…`), and the execution waits. `approval`:
 * the links carry `approved=true|false` and resume with `{data: {approved}}`; `freeText`: the link
 * opens a page with one Response field, resuming with `{data: {text}}`. `limitWaitTime` ends the wait
 * (within WORKFLOW_MAX_WAIT_SECONDS); without it the execution waits for the answer, as a Wait node
 * resumed by its URL does.
 */
export async function sendAndWait(
  ctx: NodeExecutionContext<TelegramParams>,
  bot: TelegramBot,
  p: TelegramParams,
): Promise<NodeResult> {
  const resumeUrl = ctx.execution.resumeUrl;
  if (!resumeUrl.includes('/webhook-waiting/'))
    throw new NodeOperationError("Send and Wait needs the execution's resume URL (PUBLIC_URL)");
  const page = resumeUrl.replace('/webhook-waiting/', '/form-waiting/');
  const values = p.approvalOptions.values ?? {};
  const buttons =
    p.responseType === 'freeText'
      ? [{ text: p.options.messageButtonLabel || 'Respond', url: page }]
      : [
          ...(values.approvalType === 'double'
            ? [{ text: values.disapproveLabel || '❌ Decline', url: `${page}&approved=false` }]
            : []),
          { text: values.approveLabel || '✅ Approve', url: `${page}&approved=true` },
        ];
  let text = String(p.message ?? '').trim();
  if (p.options.appendAttribution !== false) text = `${text}\n\n_${ATTRIBUTION}_`;
  await callBot(bot, 'sendMessage', {
    chat_id: p.chatId,
    text,
    disable_web_page_preview: true,
    parse_mode: 'Markdown',
    reply_markup: { inline_keyboard: [buttons] },
  });
  const waiting: FormWaitingContext = {
    operation: p.responseType === 'freeText' ? 'page' : 'approval',
    form: {
      title: p.options.responseFormTitle ?? '',
      description:
        p.responseType === 'freeText' ? (p.options.responseFormDescription ?? '') : 'Got it, thanks',
      buttonLabel: p.options.responseFormButtonLabel || 'Submit',
      fields: p.responseType === 'freeText' ? [RESPONSE_FIELD] : [],
      submittedText: 'This page can be closed now',
      ...(p.options.responseFormCustomCss ? { customCss: p.options.responseFormCustomCss } : {}),
    },
    sendAndWait: true,
  };
  ctx.context.formWaiting = waiting as unknown as Json;
  return {
    kind: 'wait',
    waitTill: waitLimit(p, ctx.deps.now().getTime(), ctx.deps.maxWaitMs ?? DEFAULT_MAX_WAIT_MS),
  };
}

/** n8n's configureWaitTillDate: no limit waits for the answer only (still within the platform's bound). */
function waitLimit(p: TelegramParams, now: number, maxWaitMs: number): Date | null {
  const limit = p.options.limitWaitTime?.values;
  if (!limit) return null;
  const at =
    limit.limitType === 'atSpecifiedTime'
      ? Date.parse(limit.maxDateAndTime ?? '')
      : now + (limit.resumeAmount ?? 45) * UNIT_MS[limit.resumeUnit ?? 'minutes'];
  if (Number.isNaN(at)) throw new NodeOperationError(`'${limit.maxDateAndTime ?? ''}' is not a date`);
  if (at - now > maxWaitMs)
    throw new NodeOperationError(
      `The time limit is beyond the longest wait allowed (${Math.floor(maxWaitMs / 1000)} s, WORKFLOW_MAX_WAIT_SECONDS)`,
    );
  return new Date(at);
}
