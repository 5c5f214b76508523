import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { withErrors } from '../../core/http/schemas.js';
import type { GameService } from './game-service.js';
import type { GameOAuth } from './oauth-service.js';
import {
  ApiUsageParams,
  ApiUsageQuery,
  CallbackQuery,
  ComponentsQuery,
  ConnectionView,
  GroupParams,
  ManifestParams,
  ProfileParams,
  UpstreamResponse,
  VendorsParams,
  VendorsQuery,
} from './schemas.js';
import type { Owner } from './store.js';

const game = { auth: { service: 'game' } } as const;
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
      config: game,
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

  r.get(
    '/game/oauth/authorize',
    {
      config: game,
      schema: {
        tags: oauthTags,
        summary: 'Redirect to the game platform to connect an account (state valid 10 minutes, single use)',
        response: withErrors({ 302: Type.Null({ description: 'Redirect to the authorize URL' }) }),
      },
    },
    async (request, reply) => reply.redirect(await oauth.authorizeUrl(ownerOf(request)), 302),
  );

  r.get(
    '/game/oauth/callback',
    {
      // Reached by the user's browser without an API key: the signed, single-use state is the credential.
      config: { public: true, limited: true },
      schema: {
        tags: oauthTags,
        summary: 'OAuth callback: exchanges the code and stores the tokens, encrypted',
        querystring: CallbackQuery,
        response: withErrors({ 200: ConnectionView }),
      },
    },
    async (request) => oauth.callback(request.query.code, request.query.state),
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
