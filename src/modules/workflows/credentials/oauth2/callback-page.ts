/**
 * The page the consent's browser lands on: connected or failed, in the platform's words only (no
 * provider or author text beyond an escaped OAuth error code), no script, a CSP that allows nothing.
 */
export interface CallbackPage {
  ok: boolean;
  status: number;
  /** What the page says (also the message of the JSON error a non-browser caller gets). */
  message: string;
  html: string;
  headers: Record<string, string>;
}

export const PAGE_STYLE =
  'body{font-family:system-ui,sans-serif;max-width:32rem;margin:4rem auto;padding:0 1rem;color:#222}h1{font-size:1.3rem}';

export function callbackPage(ok: boolean, message: string, status = ok ? 200 : 400): CallbackPage {
  const title = ok ? 'Connected' : 'Connection failed';
  const html = `<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>${title}</title><style>${PAGE_STYLE}</style></head><body><h1>${title}</h1><p>${escapeHtml(message)}</p><p>You can close this window.</p></body></html>`;
  return {
    ok,
    status,
    message,
    html,
    headers: {
      'content-type': 'text/html; charset=utf-8',
      'content-security-policy':
        "default-src 'none'; style-src 'unsafe-inline'; form-action 'none'; base-uri 'none'; frame-ancestors 'none'",
      'x-content-type-options': 'nosniff',
      'referrer-policy': 'no-referrer',
      'cache-control': 'no-store',
    },
  };
}

export function escapeHtml(text: string): string {
  return text.replace(
    /[&<>"']/g,
    (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] as string,
  );
}
