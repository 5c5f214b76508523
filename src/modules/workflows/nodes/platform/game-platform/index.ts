import { Type } from 'typebox';
import { GAME_ENDPOINTS, type GameEndpoint } from '../../../../game/index.js';
import { defineNode, NodeOperationError, output } from '../../../engine/node-type.js';
import type { Item, Json } from '../../../engine/types.js';
import { PlatformCallFields, platformCall } from '../platform-call.js';

const OPERATIONS = GAME_ENDPOINTS.map((e) => e.name);
const BY_NAME = new Map<string, GameEndpoint>(GAME_ENDPOINTS.map((e) => [e.name, e]));

/** This server's own `/game` routes, with the caller's key or customer token. */
const GAME = {
  service: 'game',
  label: 'game platform',
  urlEnv: 'PUBLIC_URL',
  tokenHint: 'a platform key or customer token for game',
};

const Scalar = Type.Union([Type.String(), Type.Number(), Type.Boolean()]);

const GamePlatformParameters = Type.Object({
  /** The endpoint, by its bungie-api-ts function name (docs/game-endpoints.md lists them). */
  operation: Type.Enum(OPERATIONS as [string, ...string[]]),
  /** The endpoint's path parameters, e.g. `{ membershipType: 3, destinyMembershipId: "4611…" }`. */
  pathParams: Type.Optional(Type.Record(Type.String(), Scalar)),
  /** Its query parameters; a list (components) as an array or comma-separated. */
  query: Type.Optional(Type.Record(Type.String(), Type.Union([Scalar, Type.Array(Scalar)]))),
  /** The request body of a POST endpoint (its bungie-api-ts request type). */
  body: Type.Optional(Type.Unknown()),
  ...PlatformCallFields,
});

/** The platform path and query of an operation, each path value one encoded segment. */
function requestOf(
  endpoint: GameEndpoint,
  pathParams: Record<string, string | number | boolean>,
  query: Record<string, unknown>,
): string {
  const path = endpoint.path.replace(/\{(\w+)\}/g, (_m, name: string) => {
    const value = pathParams[name];
    if (value === undefined)
      throw new NodeOperationError(`${endpoint.name} needs the path parameter '${name}'`);
    return encodeURIComponent(String(value));
  });
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) {
    if (value !== undefined && value !== null)
      search.set(name, Array.isArray(value) ? value.join(',') : String(value));
  }
  const qs = search.toString();
  return `/game${path}${qs ? `?${qs}` : ''}`;
}

/**
 * Calls one endpoint of the game platform through this platform's `/game` routes, as an outside
 * caller would: the credential's key or customer token (its scopes, its connected game account),
 * at `$env.PUBLIC_URL` unless `baseUrl` says otherwise. One call per item; the output is the
 * upstream Response, unwrapped.
 */
export const gamePlatformNode = defineNode({
  type: 'n8n-nodes-platform.gamePlatform',
  schema: GamePlatformParameters,
  async execute(ctx) {
    const out: Item[] = [];
    const items = ctx.items.length > 0 ? ctx.items : [{ json: {} }];
    for (let i = 0; i < items.length; i++) {
      const p = await ctx.params(i);
      const endpoint = BY_NAME.get(p.operation);
      if (!endpoint) throw new NodeOperationError(`Unknown game-platform operation '${p.operation}'`);
      const parsed = await platformCall(ctx, GAME, p, {
        method: endpoint.method,
        path: requestOf(endpoint, p.pathParams ?? {}, p.query ?? {}),
        body: endpoint.method === 'POST' ? p.body : undefined,
        action: endpoint.name,
      });
      const json =
        parsed && typeof parsed === 'object' && !Array.isArray(parsed) ? parsed : { response: parsed };
      out.push({ json: json as Record<string, Json> });
    }
    return output(out);
  },
});
