import { redactSecrets, valuesOf } from '../../../core/redact.js';
import { NodeOperationError } from '../engine/node-type.js';

/**
 * The secrets a credential injects into a request: its string values, and those inside an
 * httpCustomAuth `json` (headers, query, body) and an httpMultipleHeadersAuth `headers`, as sent.
 */
export function credentialSecrets(data: Record<string, unknown> | null | undefined): string[] {
  const out = valuesOf(data);
  for (const field of ['json', 'headers']) {
    const text = data?.[field];
    if (typeof text !== 'string') continue;
    try {
      collect(JSON.parse(text), out);
    } catch {
      // Not JSON: its whole text is already in the list.
    }
  }
  // A Basic header carries user:password in base64; redactSecrets also searches each value's base64.
  if (typeof data?.user === 'string' && typeof data.password === 'string')
    out.push(`${data.user}:${data.password}`);
  return out;
}

function collect(value: unknown, out: string[], depth = 0): void {
  if (depth > 5) return;
  if (typeof value === 'string') out.push(value);
  else if (value && typeof value === 'object')
    for (const v of Object.values(value)) collect(v, out, depth + 1);
}

/**
 * A node failure without the secrets its request carried: a server that echoes the Authorization
 * header (or a key in a query string) in its error body must not put it in the execution's error,
 * which every reader of the workflow's executions sees.
 */
export function withoutSecrets(error: unknown, secrets: readonly string[]): unknown {
  if (secrets.length === 0 || !(error instanceof Error)) return error;
  const message = redactSecrets(error.message, secrets);
  if (error instanceof NodeOperationError) {
    const description =
      error.description === undefined ? undefined : redactSecrets(error.description, secrets);
    if (message === error.message && description === error.description) return error;
    return new NodeOperationError(message, {
      ...(description !== undefined ? { description } : {}),
      ...(error.problems ? { problems: error.problems } : {}),
      ...(error.logs ? { logs: error.logs } : {}),
    });
  }
  if (message === error.message) return error;
  const clean = new Error(message);
  clean.name = error.name;
  return clean;
}
