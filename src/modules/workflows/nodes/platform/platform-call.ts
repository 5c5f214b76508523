import { Type } from 'typebox';
import { type NodeExecutionContext, NodeOperationError } from '../../engine/node-type.js';
import type { Json } from '../../engine/types.js';

/**
 * How nodes reach another service of the platform: over HTTP at its configured URL (`$env.<URL name>`,
 * this server by default) with a credential holding a platform key, exactly as an outside caller would,
 * so the key's scopes, limits and usage apply.
 */
export interface PlatformService {
  /** Service id of the keys it takes, e.g. `docproc`. */
  service: string;
  /** How messages name it, e.g. `document service`. */
  label: string;
  /** The `$env` variable holding its base URL, e.g. `DOCPROC_URL`. */
  urlEnv: string;
}

/** The parameters every such node has (TypeBox fields, spread into its schema). */
export const PlatformCallFields = {
  /** Credential (name or id) whose `{token}` is a platform key of the service. */
  credential: Type.String({ minLength: 1 }),
  /** Base URL of the service; default its `$env` URL. */
  baseUrl: Type.Optional(Type.String({ pattern: '^https?://' })),
  timeout: Type.Integer({ minimum: 1, maximum: 300_000, default: 120_000 }),
};

export type PlatformCallParams = { credential: string; baseUrl?: string; timeout: number };

/** `POST {base}{path}` with a JSON body; the parsed answer, or a NodeOperationError with the service's message. */
export function platformPost<P>(
  ctx: NodeExecutionContext<P>,
  target: PlatformService,
  p: PlatformCallParams,
  path: string,
  body: unknown,
): Promise<Json> {
  return platformCall(ctx, target, p, { method: 'POST', path, body });
}

/** One call: `body` undefined sends none. `action` names what was refused in the error message. */
export async function platformCall<P>(
  ctx: NodeExecutionContext<P>,
  target: PlatformService & { tokenHint?: string },
  p: PlatformCallParams,
  call: { method: 'GET' | 'POST'; path: string; body?: unknown; action?: string },
): Promise<Json> {
  const base = p.baseUrl ?? ctx.deps.env[target.urlEnv];
  if (!base) {
    throw new NodeOperationError(`No ${target.label}: set ${target.urlEnv} or the baseUrl parameter`);
  }
  const cred = await ctx.credential(p.credential);
  const token = cred.token ?? cred.value;
  if (!token) {
    throw new NodeOperationError(
      `The credential holds no token (${target.tokenHint ?? `a platform key of the ${target.service} service`})`,
    );
  }
  const withBody = call.body !== undefined;
  const res = await ctx.deps.http({
    method: call.method,
    url: `${base.replace(/\/+$/, '')}${call.path}`,
    headers: {
      authorization: `Bearer ${token}`,
      ...(withBody ? { 'content-type': 'application/json' } : {}),
    },
    ...(withBody ? { body: JSON.stringify(call.body) } : {}),
    timeoutMs: p.timeout,
    credentialHeaders: ['authorization'],
  });
  let parsed: Json = null;
  try {
    parsed = JSON.parse(res.body) as Json;
  } catch {
    // reported below with the status
  }
  if (res.status < 200 || res.status >= 300) {
    const message =
      parsed && typeof parsed === 'object' && !Array.isArray(parsed) && typeof parsed.message === 'string'
        ? parsed.message
        : `status ${res.status}`;
    throw new NodeOperationError(
      `The ${target.label} refused${call.action ? ` ${call.action}` : ''}: ${message}`,
      { description: res.body.slice(0, 1000) },
    );
  }
  return parsed;
}
