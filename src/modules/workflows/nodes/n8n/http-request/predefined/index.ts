import { AUTHORIZATION_TYPES } from './authorization.js';
import { BASIC_TYPES } from './basic.js';
import { KEY_HEADER_TYPES } from './key-header.js';
import { QUERY_TYPES } from './query.js';
import type { Apply, Target } from './types.js';

export type { Target } from './types.js';

/**
 * n8n's "predefined credential types" the HTTP Request node (v1–v4) and tool can use here: each as
 * n8n's credential class authenticates a request (its `authenticate`), for the non-OAuth service
 * credentials the templates use whose authentication is a header, a query parameter or basic auth.
 * Other types need a token flow (OAuth2, Google's service account) and are refused at save, naming these.
 */
const PREDEFINED: Record<string, Apply> = {
  ...AUTHORIZATION_TYPES,
  ...KEY_HEADER_TYPES,
  ...QUERY_TYPES,
  ...BASIC_TYPES,
};

export const PREDEFINED_CREDENTIAL_TYPES = Object.keys(PREDEFINED);

export const isPredefinedType = (type: unknown): type is string =>
  typeof type === 'string' && Object.hasOwn(PREDEFINED, type);

export function applyPredefined(
  type: string,
  data: Record<string, string>,
  to: Target,
  need: (field: string) => string,
): void {
  if (isPredefinedType(type)) PREDEFINED[type]?.(data, to, need);
}

/**
 * What the credential sends that is none of its fields as stored: basic auth's `user:password` (whose
 * base64 is in the header). The redaction searches these besides the fields themselves.
 */
export function predefinedSecrets(type: string, data: Record<string, string>): string[] {
  const out: string[] = [];
  const skip = () => {};
  const need = (field: string) => {
    const v = data[field];
    if (typeof v !== 'string') throw new Error(field);
    return v;
  };
  try {
    applyPredefined(
      type,
      data,
      { header: skip, plain: skip, query: skip, has: () => false, basic: (u, p) => out.push(`${u}:${p}`) },
      need,
    );
  } catch {
    // A field is missing: the request fails on it before anything is sent.
  }
  return out;
}

/** Why a type the templates use is not served: n8n's class gets a token before the request. */
function whyNot(type: string): string {
  if (type === 'googleApi')
    return ": n8n's Google service account signs a JWT and trades it for a token first, which is not available here";
  if (/oauth2/i.test(type)) return ': an OAuth2 credential needs a token flow, which is not available here';
  return '';
}

/** The save-time refusal of a predefined credential type not served, naming those that are. */
export const predefinedRefusal = (type: unknown): string => {
  const name = typeof type === 'string' ? type : '';
  return `predefined credential type '${name}' is not available here${whyNot(name)} (served: ${PREDEFINED_CREDENTIAL_TYPES.join(', ')}); use authentication 'genericCredentialType' with a generic auth type`;
};
