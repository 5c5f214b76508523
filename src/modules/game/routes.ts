import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { hasScope } from '../../core/auth/principal.js';
import { AppError } from '../../core/errors.js';
import { withErrors } from '../../core/http/schemas.js';
import { endpointSegments } from './endpoint-path.js';
import { matchEndpoint, otherMethod } from './endpoint-router.js';
import type { GameService } from './game-service.js';
import type { GameOAuth } from './oauth-service.js';
import {
  ApiUsageParams,
  ApiUsageQuery,
  AuthorizeQuery,
  CallbackQuery,
  CompleteBody,
  ComponentsQuery,
  ConnectionView,
  ConnectLinkView,
  GroupParams,
  ManifestParams,
  ProfileParams,
  StartQuery,
  UpstreamResponse,
  VendorsParams,
  VendorsQuery,
} from './schemas.js';
import type { Owner } from './store.js';

/** Customer-facing: each customer uses their own game account (connected by the integration) through a token. */
const game = { auth: { service: 'game', customerFacing: true } } as const;
/** The application's own usage figures are the integration's business, not a customer's. */
const integrationOnly = { auth: { service: 'game' } } as const;
/**
 * Starting a connection is the integration's (keys only): the link binds to whichever browser
 * opens it, so only a party that has authenticated that browser's user may hand it out. A
 * shopper's token could otherwise send a victim a link that connects the victim's game account
 * to the shopper.
 */
const connectStart = { auth: { service: 'game', principals: ['api_key'] } } as const;
const tags = ['Game platform'];
const oauthTags = ['Game platform: OAuth'];
const ok = withErrors({ 200: UpstreamResponse });

/** The connection belongs to the key's account, and to the customer of a customer token. */
function ownerOf(request: FastifyRequest): Owner {
  const p = request.principal;
  if (!p) throw new Error('auth hook did not run');
  return { accountId: p.accountId, customerId: p.customerId ?? '' };
}

export function gameRoutes(app: FastifyInstance, deps: { service: GameService; oauth: GameOAuth }): void {
  const r = app.withTypeProvider<TypeBoxTypeProvider>();
  const { service, oauth } = deps;

  r.get(
    '/game/App/ApiUsage/:applicationId',
    {
      config: integrationOnly,
      schema: {
        tags,
        summary: 'API usage of an application',
        params: ApiUsageParams,
        querystring: ApiUsageQuery,
        response: ok,
      },
    },
    async (request) => service.apiUsage(request.params.applicationId, request.query),
  );

  r.get(
    '/game/User/GetMembershipsForCurrentUser',
    {
      config: game,
      schema: { tags, summary: "Memberships of the caller's connected account", response: ok },
    },
    async (request) => service.membershipsForCurrentUser(ownerOf(request)),
  );

  r.get(
    '/game/:game/Manifest',
    {
      config: game,
      schema: {
        tags,
        summary: 'Manifest of a game (cached by version)',
        params: ManifestParams,
        response: ok,
      },
    },
    async (request) => service.manifest(request.params.game),
  );

  r.get(
    '/game/:game/:membershipType/Profile/:membershipId',
    {
      config: game,
      schema: {
        tags,
        summary: 'Player profile (characters, inventory, progression)',
        params: ProfileParams,
        querystring: ComponentsQuery,
        response: ok,
      },
    },
    async (request) =>
      service.profile(ownerOf(request), { ...request.params, components: request.query.components }),
  );

  r.get(
    '/game/:game/:membershipType/Profile/:membershipId/Character/:characterId/Vendors',
    {
      config: game,
      schema: {
        tags,
        summary: "Vendors and economy of a character (the caller's token)",
        params: VendorsParams,
        querystring: VendorsQuery,
        response: ok,
      },
    },
    async (request) => service.vendors(ownerOf(request), { ...request.params, ...request.query }),
  );

  r.get(
    '/game/GroupV2/Name/:groupName/:groupType',
    {
      config: game,
      schema: { tags, summary: 'Group or clan by name', params: GroupParams, response: ok },
    },
    async (request) => service.groupByName(request.params.groupName, request.params.groupType),
  );

  registerEndpointRoutes(app, service);

  r.get(
    '/game/oauth/authorize',
    {
      config: connectStart,
      schema: {
        tags: oauthTags,
        summary:
          'Start connecting a game-platform account (API keys only): a one-time link for the signed-in user’s browser (10 minutes)',
        querystring: AuthorizeQuery,
        response: withErrors({ 200: ConnectLinkView }),
      },
    },
    async (request) => {
      const { customerId, sessionBinding, returnUrl } = request.query;
      if ((sessionBinding === undefined) !== (returnUrl === undefined))
        throw new AppError('VALIDATION_ERROR', 'sessionBinding and returnUrl go together', {
          fields: [
            { field: `querystring.${sessionBinding ? 'returnUrl' : 'sessionBinding'}`, message: 'required' },
          ],
        });
      return oauth.connectLink(
        { accountId: ownerOf(request).accountId, customerId: customerId ?? '' },
        sessionBinding && returnUrl ? { sessionBinding, returnUrl } : undefined,
      );
    },
  );

  r.post(
    '/game/oauth/complete',
    {
      config: connectStart,
      schema: {
        tags: oauthTags,
        summary:
          'Complete a session-bound connection (API keys only): the secret of the user session that came back to your return URL',
        body: CompleteBody,
        response: withErrors({ 200: ConnectionView }),
      },
    },
    async (request) =>
      oauth.complete(ownerOf(request).accountId, request.body.completion, request.body.sessionSecret),
  );

  r.get(
    '/game/oauth/start',
    {
      // Opened by the user's browser: the one-time ticket is the credential.
      config: { public: true, limited: true },
      schema: {
        tags: oauthTags,
        summary: 'Browser step: binds the flow to this browser (cookie) and redirects to the game platform',
        querystring: StartQuery,
        response: withErrors({
          302: Type.Null({ description: 'Redirect to the authorize URL (PKCE S256)' }),
        }),
      },
    },
    async (request, reply) => {
      const { location, cookie } = await oauth.browserStart(
        request.query.ticket,
        request.protocol === 'https',
      );
      return reply.header('set-cookie', cookie).header('cache-control', 'no-store').redirect(location, 302);
    },
  );

  r.get(
    '/game/oauth/callback',
    {
      // Reached by the browser that opened the link: the signed state and that browser's cookie.
      config: { public: true, limited: true },
      schema: {
        tags: oauthTags,
        summary:
          'OAuth callback: checks state and browser, exchanges the code (PKCE), stores the tokens encrypted',
        querystring: CallbackQuery,
        response: withErrors({
          200: ConnectionView,
          302: Type.Null({
            description: 'A session-bound flow: back to its return URL with `gameConnection`',
          }),
        }),
      },
    },
    async (request, reply) => {
      // The flow is spent whatever the outcome: its cookie goes too.
      const clear = oauth.clearCookie(request.query.state, request.protocol === 'https');
      if (clear) reply.header('set-cookie', clear);
      reply.header('cache-control', 'no-store');
      const done = await oauth.callback(request.query.code, request.query.state, request.headers.cookie);
      if ('redirect' in done) return reply.redirect(done.redirect, 302);
      return done;
    },
  );

  r.delete(
    '/game/oauth/connection',
    {
      config: game,
      schema: {
        tags: oauthTags,
        summary: "Disconnect the caller's game-platform account",
        response: withErrors({ 204: Type.Null({ description: 'Disconnected (or nothing was connected)' }) }),
      },
    },
    async (request, reply) => {
      await oauth.disconnect(ownerOf(request));
      return reply.code(204).send(null);
    },
  );
}

/**
 * Every endpoint of the generated table behind one GET and one POST route: documenting 135
 * upstream operations one by one would bury the platform's own (docs/game-endpoints.md lists
 * them). The static routes above win over these for the paths they cover.
 */
function registerEndpointRoutes(app: FastifyInstance, service: GameService): void {
  const description =
    "Any endpoint of the game platform's API under its own path (GET or POST as upstream; the list is docs/game-endpoints.md): path parameters one segment each, the endpoint's query parameters only, POST bodies checked against its request type. Read endpoints need game:read; item actions, clan administration and other writes game:write, with the caller's own connected account. Answers the upstream Response, unwrapped.";
  const params = Type.Object({
    '*': Type.String({
      maxLength: 2048,
      description: 'The upstream path, e.g. Destiny2/3/Profile/4611686018467000000/',
    }),
  });
  const querystring = Type.Object(
    {},
    {
      additionalProperties: Type.String({ maxLength: 2048 }),
      description: "The endpoint's query parameters",
    },
  );
  for (const method of ['GET', 'POST'] as const) {
    app.route({
      method,
      url: '/game/*',
      exposeHeadRoute: false,
      // POST holds reads (searches) and writes: the endpoint's own access is checked below.
      config: { auth: { ...game.auth, operation: method === 'GET' ? 'read' : ['read', 'write'] } },
      schema: {
        tags,
        summary: `${method} any endpoint of the game platform's API`,
        description,
        params,
        querystring,
        ...(method === 'POST'
          ? { body: Type.Unknown({ description: "The endpoint's request type as JSON, if it takes one" }) }
          : {}),
        response: ok,
      },
      handler: async (request, reply) => {
        const segments = endpointSegments(request.raw.url ?? request.url);
        const match = matchEndpoint(method, segments);
        if (!match) {
          const other = otherMethod(method, segments);
          if (other) {
            reply.header('allow', other);
            throw new AppError('METHOD_NOT_ALLOWED', `This endpoint takes ${other}`, { allow: [other] });
          }
          throw new AppError('ROUTE_NOT_FOUND', 'The game platform has no such endpoint', {
            path: `/${segments.join('/')}`,
          });
        }
        const principal = request.principal;
        if (!principal) throw new Error('auth hook did not run');
        const { endpoint } = match;
        if (!hasScope(principal, 'game', endpoint.access)) {
          throw new AppError('FORBIDDEN', `Missing scope game:${endpoint.access}`, {
            requiredScope: `game:${endpoint.access}`,
          });
        }
        if (endpoint.area === 'app' && principal.kind === 'customer_token') {
          throw new AppError('FORBIDDEN', "The application's own figures are not a customer's business");
        }
        return service.endpoint(ownerOf(request), endpoint, {
          params: match.params,
          query: request.query as Record<string, unknown>,
          body: request.body,
        });
      },
    });
  }
}
