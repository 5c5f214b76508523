import type { FastifyInstance, onSendHookHandler } from 'fastify';

/**
 * A route that still answers but is on its way out (docs/versioning.md). Dates are UTC days,
 * `YYYY-MM-DD`; the day starts at 00:00 UTC.
 */
export interface Deprecation {
  /** The day the route was deprecated. */
  since: string;
  /** The day after which it may be removed; absent while no removal is planned. */
  sunset?: string;
  /** The route that replaces this one, or a migration guide (see `linkRel`). */
  link?: string;
  /** What `link` points at: the successor route (the default) or a guide (RFC 9745 `deprecation`). */
  linkRel?: 'successor-version' | 'deprecation';
}

declare module 'fastify' {
  interface FastifyContextConfig {
    deprecation?: Deprecation;
  }
}

const DAY = /^(\d{4})-(\d{2})-(\d{2})$/;

/** Milliseconds of 00:00 UTC of a `YYYY-MM-DD` day; a malformed or impossible day (02-30) throws. */
function utcDay(day: string, field: string): number {
  const m = DAY.exec(day);
  const ms = m ? Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3])) : Number.NaN;
  if (!m || new Date(ms).toISOString().slice(0, 10) !== day)
    throw new Error(`deprecation.${field} must be a day YYYY-MM-DD, got ${JSON.stringify(day)}`);
  return ms;
}

/**
 * The headers of a deprecated route's answers: `Deprecation` (RFC 9745, a structured-field date:
 * `@` + Unix seconds), `Sunset` (RFC 8594, an HTTP-date) and a `Link` to the successor or guide.
 * Throws on a malformed declaration, so a typo fails at boot rather than sending a wrong date.
 */
export function deprecationHeaders(d: Deprecation): Record<string, string> {
  const since = utcDay(d.since, 'since');
  const headers: Record<string, string> = { deprecation: `@${since / 1000}` };
  if (d.sunset !== undefined) {
    const sunset = utcDay(d.sunset, 'sunset');
    if (sunset <= since) throw new Error('deprecation.sunset must come after deprecation.since');
    headers.sunset = new Date(sunset).toUTCString();
  }
  if (d.link !== undefined) {
    // A URI reference inside <…>: visible ASCII without `"`, `<` or `>`, which would break the header.
    if (!/^[!#-;=?-~]+$/.test(d.link)) throw new Error(`deprecation.link is not a URI reference: ${d.link}`);
    headers.link = `<${d.link}>; rel="${d.linkRel ?? 'successor-version'}"`;
  } else if (d.linkRel !== undefined) {
    throw new Error('deprecation.linkRel needs deprecation.link');
  }
  return headers;
}

/**
 * Checks each route's `config.deprecation` when it is added (and marks its OpenAPI operation
 * `deprecated`), then stamps the headers on every answer of the route, errors included (a client
 * that only ever sees 4xx from it should learn too). Register before the routes and OpenAPI.
 */
export function registerDeprecation(app: FastifyInstance): void {
  // Keyed by the declaration object: Fastify copies a route's config shallowly, so the object the
  // request sees is the one the route declared.
  const computed = new WeakMap<Deprecation, Record<string, string>>();
  const headersOf = (d: Deprecation): Record<string, string> => {
    let headers = computed.get(d);
    if (!headers) {
      headers = deprecationHeaders(d);
      computed.set(d, headers);
    }
    return headers;
  };

  // The headers' hook goes on the deprecated routes only: every other answer skips it.
  const stamp: onSendHookHandler = (request, reply, payload, done) => {
    const d = request.routeOptions.config?.deprecation;
    if (!d) return done(null, payload);
    const { link, ...rest } = headersOf(d);
    reply.headers(rest);
    if (link) {
      // The route's own links (pagination) stay; ours is one more.
      const existing = reply.getHeader('link');
      const prior = existing === undefined ? [] : [existing].flat().map(String);
      reply.header('link', [...prior, link].join(', '));
    }
    done(null, payload);
  };

  app.addHook('onRoute', (route) => {
    const d = route.config?.deprecation;
    if (!d) return;
    try {
      headersOf(d);
    } catch (error) {
      throw new Error(`Route ${String(route.method)} ${route.url}: ${(error as Error).message}`);
    }
    // A copy: schema objects may be shared between routes (GET and its HEAD).
    route.schema = { ...route.schema, deprecated: true } as typeof route.schema;
    // First among the route's own (a callback hook, not an async one), as the app-wide hook was.
    const own = route.onSend ? (Array.isArray(route.onSend) ? route.onSend : [route.onSend]) : [];
    route.onSend = [stamp, ...own];
  });
}
