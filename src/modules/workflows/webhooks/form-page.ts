import { randomBytes } from 'node:crypto';
import type { FormFieldInfo, FormInfo } from '../engine/index.js';
import type { FieldProblem, FormValues } from './form-submission.js';

/** `&<>"'` as entities: every text of the page (labels, titles, values) is the workflow author's or the caller's. */
export function escapeHtml(text: string): string {
  return text.replace(
    /[&<>"']/g,
    (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] as string,
  );
}

/** A page and the headers that keep it inert: no script at all, styles only by this response's nonce. */
export interface FormPage {
  html: string;
  headers: Record<string, string>;
}

/**
 * The page's own look. Its values are n8n's form CSS variables (`--color-submit-btn-bg`, `--font-family`…,
 * with this page's defaults), so an n8n `customCss` that sets them (n8n's editor starts from that list)
 * restyles this page as it does n8n's.
 */
const STYLE = `body{font-family:var(--font-family,system-ui,sans-serif);background:var(--color-background,#f5f5f7);margin:0;padding:var(--padding-container-top,2rem) 1rem}
main{max-width:var(--container-width,36rem);margin:auto;background:var(--color-card-bg,#fff);border-radius:var(--border-radius-card,8px);padding:var(--padding-card,2rem);box-shadow:var(--box-shadow-card,0 1px 4px #0002)}
h1{color:var(--color-header,inherit)}p{font-size:var(--font-size-paragraph,inherit)}
label{display:block;font-weight:600;margin:1rem 0 .3rem;color:var(--color-label,inherit);font-size:var(--font-size-label,inherit)}
input,textarea,select{width:100%;box-sizing:border-box;padding:.5rem;font:inherit;border:1px solid var(--color-input-border,#8a8a8a);border-radius:var(--border-radius-input,4px);color:var(--color-input-text,inherit)}
.choice{display:flex;gap:.5rem;align-items:center;font-weight:400}.choice input{width:auto}
.error{color:var(--color-error,#b00020);margin:.3rem 0 0}
button{margin-top:1.5rem;padding:.6rem 1.2rem;font:inherit;border:0;border-radius:var(--border-radius-input,4px);background:var(--color-submit-btn-bg,#2b6cb0);color:var(--color-submit-btn-text,#fff)}
.attribution{text-align:center;margin-top:1rem;font-size:var(--font-size-link,.8rem);color:var(--color-link,#6b6b6b)}`;

/** The line under a page while `appendAttribution` holds (n8n's "Form automated with n8n"). */
export const FORM_ATTRIBUTION = 'Form automated by a workflow';

/**
 * Author CSS as the text of a `<style>` element: every `<` that could open markup (`</style`, `<!--`, a
 * tag) becomes the CSS escape `\3C `, which CSS reads as the same character, so the text can never end
 * the element; `<` before a space or `=` stays (media-query ranges: `(width < 600px)`).
 */
export function cssText(css: string): string {
  return css.replace(/<(?![\s=])/g, '\\3C ');
}

/** What a page carries besides its body: the author's CSS (after the page's own) and the attribution line. */
export interface PageLook {
  customCss?: string | undefined;
  appendAttribution?: boolean | undefined;
}

/** A nonce'd style element holding `css` (nothing for none). */
export const styleElement = (nonce: string, css: string | undefined) =>
  css ? `<style nonce="${nonce}">${cssText(css)}</style>` : '';

function page(title: string, body: string, look: PageLook = {}): FormPage {
  const nonce = randomBytes(16).toString('base64');
  // n8n's default: the attribution is shown unless the option is false.
  const attribution =
    look.appendAttribution === false ? '' : `<p class="attribution">${escapeHtml(FORM_ATTRIBUTION)}</p>`;
  const html = `<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>${escapeHtml(title)}</title><style nonce="${nonce}">${STYLE}</style>${styleElement(nonce, look.customCss)}</head><body><main>${body}</main>${attribution}</body></html>`;
  return {
    html,
    headers: {
      'content-type': 'text/html; charset=utf-8',
      'content-security-policy': `default-src 'none'; style-src 'nonce-${nonce}'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'`,
      'x-content-type-options': 'nosniff',
      'referrer-policy': 'no-referrer',
      'cache-control': 'no-store',
    },
  };
}

const lookOf = (form: FormInfo): PageLook => ({
  customCss: form.customCss,
  appendAttribution: form.appendAttribution,
});

function input(field: FormFieldInfo, i: number, given: string[]): string {
  const name = `field-${i}`;
  const id = `f${i}`;
  const required = field.required ? ' required' : '';
  const placeholder = field.placeholder ? ` placeholder="${escapeHtml(field.placeholder)}"` : '';
  const value = escapeHtml(given[0] ?? '');
  switch (field.type) {
    case 'textarea':
      return `<textarea id="${id}" name="${name}"${placeholder}${required}>${value}</textarea>`;
    case 'dropdown': {
      const multiple = field.multiselect ? ' multiple' : '';
      const empty = field.multiselect ? '' : '<option value=""></option>';
      const options = field.options
        .map((o) => `<option${given.includes(o) ? ' selected' : ''}>${escapeHtml(o)}</option>`)
        .join('');
      return `<select id="${id}" name="${name}"${multiple}${required}>${empty}${options}</select>`;
    }
    case 'checkbox':
    case 'radio':
      return field.options
        .map(
          (o, k) =>
            `<label class="choice"><input type="${field.type}" name="${name}" value="${escapeHtml(o)}"${given.includes(o) ? ' checked' : ''}${field.type === 'radio' && field.required && k === 0 ? ' required' : ''}>${escapeHtml(o)}</label>`,
        )
        .join('');
    case 'file': {
      // A browser sends the chosen files again only if chosen again: nothing is pre-filled.
      const multiple = field.multipleFiles ? ' multiple' : '';
      const accept = field.accept ? ` accept="${escapeHtml(field.accept)}"` : '';
      return `<input id="${id}" type="file" name="${name}"${multiple}${accept}${required}>`;
    }
    default: {
      const type = field.type === 'text' ? 'text' : field.type;
      return `<input id="${id}" type="${type}" name="${name}" value="${value}"${placeholder}${required}>`;
    }
  }
}

/** n8n's `defaultValue`: what the page shows first (checkboxes: comma-separated options). */
function defaultsOf(field: FormFieldInfo): string[] {
  const given = field.defaultValue ?? '';
  if (given === '') return [];
  return field.type === 'checkbox' ? given.split(',').map((v) => v.trim()) : [given];
}

/** The form as n8n's page shows it; after a refused submission, with the values given and each field's problem. */
export function formPage(form: FormInfo, values: FormValues = [], problems: FieldProblem[] = []): FormPage {
  const fields = form.fields
    .map((field, i) => {
      if (field.type === 'hiddenField')
        return `<input type="hidden" name="field-${i}" value="${escapeHtml(field.value)}">`;
      const problem = problems.find((p) => p.field === i);
      const label = `<label for="f${i}">${escapeHtml(field.label)}${field.required ? ' *' : ''}</label>`;
      const error = problem ? `<p class="error" role="alert">${escapeHtml(problem.message)}</p>` : '';
      return label + input(field, i, values[i] ?? defaultsOf(field)) + error;
    })
    .join('');
  const description = form.description ? `<p>${escapeHtml(form.description)}</p>` : '';
  // Files go up as n8n's page sends every submission: multipart (the other pages post a plain form).
  const enctype = form.fields.some((f) => f.type === 'file') ? ' enctype="multipart/form-data"' : '';
  return page(
    form.title || 'Form',
    `<h1>${escapeHtml(form.title)}</h1>${description}<form method="post" accept-charset="utf-8"${enctype}>${fields}<button type="submit">${escapeHtml(form.buttonLabel)}</button></form>`,
    lookOf(form),
  );
}

/** The page after a submission (n8n's "Form Submitted"). */
export function submittedPage(form: FormInfo): FormPage {
  return page(
    form.title || 'Form',
    `<h1>Form Submitted</h1><p>${escapeHtml(form.submittedText)}</p>`,
    lookOf(form),
  );
}

/** An n8n Form node's ending page: its heading and text (n8n's completionTitle and completionMessage). */
export function completionPage(
  title: string,
  heading: string,
  message: string,
  look: PageLook = {},
): FormPage {
  const text = message ? `<p>${escapeHtml(message)}</p>` : '';
  return page(title || heading || 'Form', `<h1>${escapeHtml(heading)}</h1>${text}`, look);
}

/**
 * n8n's `showText` ending: the node's `responseText` (HTML) as the page. Served as a sandboxed
 * document (an opaque origin: no script, no form, no cookie of this site) with no fetches but inline
 * styles and images inline or over https, so the workflow's HTML cannot act for the site.
 */
export function responseTextPage(html: string): FormPage {
  return {
    html,
    headers: {
      'content-type': 'text/html; charset=utf-8',
      'content-security-policy':
        "sandbox; default-src 'none'; style-src 'unsafe-inline'; img-src data: https:; form-action 'none'; base-uri 'none'; frame-ancestors 'none'",
      'x-content-type-options': 'nosniff',
      'referrer-policy': 'no-referrer',
      'cache-control': 'no-store',
    },
  };
}

/** The page shown while the execution runs on to its next form page: it reloads itself (no script). */
export function nextPagePending(): FormPage {
  const pending = page('Form', '<p>One moment…</p>', { appendAttribution: false });
  pending.html = pending.html.replace('<head>', '<head><meta http-equiv="refresh" content="1">');
  return pending;
}
