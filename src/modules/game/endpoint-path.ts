import { AppError } from '../../core/errors.js';

const PREFIX = '/game/';

/**
 * The segments of a request path after `/game/`, each decoded on its own from the raw URL (so
 * `%2F` stays inside its segment), the trailing slash of the upstream's form dropped.
 */
export function endpointSegments(rawUrl: string): string[] {
  const path = rawUrl.split('?')[0] ?? '';
  const rest = path.startsWith(PREFIX) ? path.slice(PREFIX.length) : path.replace(/^\/+/, '');
  const parts = rest.split('/');
  if (parts.at(-1) === '') parts.pop();
  return parts.map((part) => {
    try {
      return decodeURIComponent(part);
    } catch {
      throw new AppError('VALIDATION_ERROR', 'The path holds a malformed percent-encoding', {
        fields: [{ field: 'params.*', message: 'malformed percent-encoding' }],
      });
    }
  });
}
