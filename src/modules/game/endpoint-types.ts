/** A path or query parameter of an upstream endpoint, as bungie-api-ts types it. */
export interface GameParam {
  name: string;
  /** `number` and `enum` are integers on the wire; int64 ids are strings upstream. */
  type: 'string' | 'number' | 'boolean' | 'enum';
  /** Enum values (numbers), for `enum`. */
  enum?: readonly number[];
  /** A list, sent comma-separated (e.g. components). */
  list?: boolean;
  /** Query parameters only: whether the caller must send it. */
  required?: boolean;
}

/** One endpoint of the game platform, generated from bungie-api-ts (see scripts/game-endpoints.mjs). */
export interface GameEndpoint {
  /** The bungie-api-ts function name, e.g. `transferItem`. */
  name: string;
  /** The bungie-api-ts area, e.g. `destiny2`. */
  area: string;
  method: 'GET' | 'POST';
  /** Upstream path template under the API root, with `{param}` segments and the trailing slash. */
  path: string;
  /** `stats`: the upstream serves it from its stats host (same path under GAME_API_URL here). */
  host?: 'stats';
  pathParams: readonly GameParam[];
  query: readonly GameParam[];
  /** The request type's name (a key of GAME_BODY_SCHEMAS), or null when the endpoint takes no body. */
  body: string | null;
  /** `required`: 401 GAME_AUTH_REQUIRED without a connection; `optional`: attached when connected. */
  oauth: 'required' | 'optional';
  /** The upstream OAuth scope the endpoint declares, when it declares one. */
  oauthScope: string | null;
  /** The platform scope: `game:read` or `game:write`. */
  access: 'read' | 'write';
  summary: string;
}
