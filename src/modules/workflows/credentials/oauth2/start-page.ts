import { escapeHtml, PAGE_STYLE } from './callback-page.js';

/** What the confirmation names: who asks, for which credential, and where the browser goes. */
export interface StartPageFacts {
  account: string;
  credential: string;
  /** The provider's host (the authorize URL's): where consent is given. */
  host: string;
  /** The authorize URL's origin: the one place the form may lead besides this platform. */
  providerOrigin: string;
  ticket: string;
  /** Where the form posts (this route, under PUBLIC_URL's path). */
  action: string;
}

/**
 * The page a consent link asked for with an API key shows first: an API key says nothing about the
 * person opening the link, so the page says whose credential the grant will land in and where it is
 * given, and only a click (a POST) goes on. A link scanner's GET spends nothing. No script, no author
 * HTML (names are escaped), a CSP that lets the form lead only here and to the provider, no framing.
 */
export function startPage(facts: StartPageFacts): { html: string; headers: Record<string, string> } {
  const account = escapeHtml(facts.account);
  const credential = escapeHtml(facts.credential);
  const host = escapeHtml(facts.host);
  const html = `<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>Connect an OAuth2 credential</title><style>${PAGE_STYLE}</style></head><body><h1>Connect an OAuth2 credential</h1><p>The account <strong>${account}</strong> asks you to connect its credential <strong>${credential}</strong> at <strong>${host}</strong>.</p><p>If you continue, ${host} asks you to grant access. What you grant is stored in that account's credential, and its workflows can then act as you at ${host}. Continue only if you asked for this link yourself and trust that account.</p><form method="post" action="${escapeHtml(facts.action)}"><input type="hidden" name="ticket" value="${escapeHtml(facts.ticket)}"><button type="submit">Continue to ${host}</button></form></body></html>`;
  return {
    html,
    headers: {
      'content-type': 'text/html; charset=utf-8',
      'content-security-policy': `default-src 'none'; style-src 'unsafe-inline'; form-action 'self' ${facts.providerOrigin}; base-uri 'none'; frame-ancestors 'none'`,
      'x-frame-options': 'DENY',
      'x-content-type-options': 'nosniff',
      // The form's POST carries this origin (checked); no Referer (the ticket is in this URL) leaves it.
      'referrer-policy': 'same-origin',
      'cache-control': 'no-store',
    },
  };
}
