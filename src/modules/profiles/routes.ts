import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { notFound } from '../../core/errors.js';
import { principalOf } from '../../core/http/auth-hook.js';
import { withErrors } from '../../core/http/schemas.js';
import type { ProfileService } from './profile-service.js';
import { PatchProfileBody, ProfileParams, ProfileView, RegisterBody } from './schemas.js';

export interface ProfileRouteDeps {
  profiles: ProfileService;
}

const tags = ['Agents: user profiles'];
/** Registering users is the integration's: API keys only (a customer token → 403). */
const integration = { auth: { service: 'agent' } } as const;
/** A customer token reads and changes its own profile. */
const customerFacing = { auth: { service: 'agent', customerFacing: true } } as const;

/**
 * The account and the user a request may act on: a key any user of its account; a customer token
 * only its own customerId, and another user's profile is 404 (its existence is not told).
 */
function subjectOf(request: FastifyRequest, userId: string): { accountId: string; userId: string } {
  const principal = principalOf(request);
  if (principal.kind === 'customer_token' && principal.customerId !== userId) {
    throw notFound('PROFILE_NOT_FOUND', 'User profile', userId);
  }
  return { accountId: principal.accountId, userId };
}

export function profileRoutes(app: FastifyInstance, deps: ProfileRouteDeps): void {
  const r = app.withTypeProvider<TypeBoxTypeProvider>();
  const { profiles } = deps;

  r.post(
    '/api/users',
    {
      config: integration,
      schema: {
        tags,
        summary:
          'Register a user: profile, empty cart, welcome message; the same userId again changes nothing',
        description:
          '201 with the new profile; 200 with the stored one when the userId already has a profile ' +
          '(idempotent: a repeated registration, with any body, creates and changes nothing).',
        body: RegisterBody,
        response: withErrors({ 200: ProfileView, 201: ProfileView }),
      },
    },
    async (request, reply) => {
      const { created, profile } = await profiles.register(principalOf(request).accountId, request.body);
      return reply.code(created ? 201 : 200).send(profile);
    },
  );

  r.get(
    '/api/users/:userId/profile',
    {
      config: customerFacing,
      schema: {
        tags,
        summary: "A user's profile (a customer token: its own only)",
        params: ProfileParams,
        response: withErrors({ 200: ProfileView }),
      },
    },
    async (request) => {
      const { accountId, userId } = subjectOf(request, request.params.userId);
      return profiles.get(accountId, userId);
    },
  );

  r.patch(
    '/api/users/:userId/profile',
    {
      config: customerFacing,
      schema: {
        tags,
        summary:
          'Change a profile, or create it: each preferences key sent replaces that list (a customer token: its own only)',
        description:
          '200 with the changed profile; 201 when the user had none and this PATCH created it (with its cart ' +
          'and welcome, `registrationSource` "profile-patch", `displayName` the userId and `email` empty unless sent).',
        params: ProfileParams,
        body: PatchProfileBody,
        response: withErrors({ 200: ProfileView, 201: ProfileView }),
      },
    },
    async (request, reply) => {
      const { accountId, userId } = subjectOf(request, request.params.userId);
      const { created, profile } = await profiles.upsert(accountId, userId, request.body);
      return reply.code(created ? 201 : 200).send(profile);
    },
  );
}
