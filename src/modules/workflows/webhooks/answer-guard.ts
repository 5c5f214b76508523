/**
 * What a workflow's webhook answer may not do to the platform's own origin, which every account's
 * webhooks share with the portal (docs/decisions.md, "Webhook answers are sandboxed").
 */

/**
 * n8n's sandbox for webhook answers (its `getWebhookSandboxCSP`): a page a workflow serves runs in an
 * opaque origin, so its scripts cannot read the portal's session or call the API as the viewer.
 */
export const WEBHOOK_SANDBOX_CSP =
  'sandbox allow-downloads allow-forms allow-modals allow-orientation-lock allow-pointer-lock allow-popups ' +
  'allow-presentation allow-scripts allow-top-navigation allow-top-navigation-by-user-activation ' +
  'allow-top-navigation-to-custom-protocols';

/** Cookies the platform sets on its origin: the portal's session, the OAuth flows' browser bindings. */
const PLATFORM_COOKIE = /^(platform_session$|game_oauth_|cred_oauth_)/i;

/**
 * Whether a Set-Cookie value would set one of the platform's cookies (a fixed session, a forged
 * OAuth binding): such a header is dropped from a workflow's answer.
 */
export function setsPlatformCookie(setCookie: string): boolean {
  const eq = setCookie.indexOf('=');
  const name = (eq === -1 ? setCookie : setCookie.slice(0, eq)).trim();
  return PLATFORM_COOKIE.test(name.replace(/^__(Host|Secure)-/i, ''));
}
