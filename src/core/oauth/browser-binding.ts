/**
 * The cookie that binds an OAuth state to the browser that started the flow. One cookie per
 * flow (named after the state id) so two flows in one browser do not overwrite each other;
 * scoped to the callback path, HttpOnly, SameSite=Lax (sent on the top-level redirect back from
 * the provider, not on cross-site subrequests), Secure when the platform is served over https.
 * Each integration names its cookies with a prefix of its own (the game's, the credentials').
 */
const STATE_ID = /^[A-Za-z0-9_-]{1,64}$/;

export interface BindingCookieScope {
  /** Path of the callback as the browser sees it (PUBLIC_URL's path + the callback route). */
  path: string;
  secure: boolean;
  /** The cookie name's prefix, before the state id (`game_oauth_`). */
  prefix: string;
}

export function bindingCookie(
  stateId: string,
  nonce: string,
  maxAgeSeconds: number,
  scope: BindingCookieScope,
): string {
  return serialize(`${scope.prefix}${stateId}`, nonce, Math.max(0, Math.floor(maxAgeSeconds)), scope);
}

/** A Set-Cookie that removes the flow's cookie; null when the state cannot name one. */
export function clearedBindingCookie(stateId: string, scope: BindingCookieScope): string | null {
  return STATE_ID.test(stateId) ? serialize(`${scope.prefix}${stateId}`, '', 0, scope) : null;
}

/** The nonce this browser holds for the flow, from its Cookie header. */
export function bindingNonce(
  cookieHeader: string | undefined,
  stateId: string,
  prefix: string,
): string | undefined {
  if (!cookieHeader || !STATE_ID.test(stateId)) return undefined;
  const name = `${prefix}${stateId}`;
  for (const pair of cookieHeader.split(';')) {
    const eq = pair.indexOf('=');
    if (eq > 0 && pair.slice(0, eq).trim() === name) return pair.slice(eq + 1).trim() || undefined;
  }
  return undefined;
}

function serialize(name: string, value: string, maxAge: number, scope: BindingCookieScope): string {
  const attributes = [
    `${name}=${value}`,
    `Path=${scope.path}`,
    `Max-Age=${maxAge}`,
    'HttpOnly',
    'SameSite=Lax',
  ];
  if (scope.secure) attributes.push('Secure');
  return attributes.join('; ');
}
