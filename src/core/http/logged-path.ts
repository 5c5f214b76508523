/**
 * Path segments that carry a secret: Flowise's `GET /api/v1/chatflows/apikey/{apikey}` names an API key
 * in its path. Logs keep the path, never the key.
 */
const SECRET_SEGMENTS: RegExp[] = [/^(\/api\/v1\/chatflows\/apikey\/)[^/]+/];

/** A request URL as logs keep it: without its query string (webhook secrets, OAuth codes) or secret segments. */
export function loggedPath(url: string): string {
  const q = url.indexOf('?');
  let path = q < 0 ? url : url.slice(0, q);
  for (const pattern of SECRET_SEGMENTS) path = path.replace(pattern, '$1[redacted]');
  return path;
}
