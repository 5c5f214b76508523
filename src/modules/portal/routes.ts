import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { Principal } from '../../core/auth/principal.js';
import type { ModuleApis } from '../../core/context.js';
import { AppError } from '../../core/errors.js';
import { ErrorBody, IdParams, withErrors } from '../../core/http/schemas.js';
import { crossOrigin } from '../auth/index.js';
import type { SessionCookie } from './cookies.js';
import type { MemberService, SignedIn } from './member-service.js';
import {
  AcceptInviteBody,
  CurrentSessionView,
  InviteBody,
  InviteView,
  LoginBody,
  MemberList,
  MemberView,
  NoBody,
  SessionList,
  SetupBody,
  SignedInView,
  UpdateMemberBody,
} from './schemas.js';
import type { SessionService } from './session-service.js';

export interface PortalRouteDeps {
  members: MemberService;
  sessions: SessionService;
  cookie: SessionCookie;
  publicOrigin: string;
  accountName(id: string): Promise<string>;
  /** The audit trail (activity module), when it is there: sign-ins are written to it. */
  activity?: ModuleApis['activity'] | undefined;
}

const sessionTags = ['Core: sessions'];
const memberTags = ['Core: members'];
/** The caller's own session: any member, whatever their role. */
const sessionOnly = { service: 'core', principals: ['session'], anyService: true } as const;
const admin = { service: 'core', operation: 'admin' } as const;
const SESSION_NOTE = 'Browser session only (the `platform_session` cookie), not an API key.';

function caller(request: FastifyRequest): Principal {
  if (!request.principal) throw new Error('auth hook did not run');
  return request.principal;
}

export function portalRoutes(app: FastifyInstance, deps: PortalRouteDeps): void {
  const r = app.withTypeProvider<TypeBoxTypeProvider>();
  const { members, sessions, cookie } = deps;

  /** Sign-in routes set a cookie: a page of another site must not post to them (login CSRF). */
  const sameOrigin = (request: FastifyRequest) => {
    if (crossOrigin(request, deps.publicOrigin))
      throw new AppError('FORBIDDEN', 'Cross-origin request refused: Origin does not match this server');
  };
  const signedIn = async (reply: FastifyReply, done: SignedIn, action: string) => {
    await deps.activity?.audit(reply.request, {
      accountId: done.accountId,
      action,
      actorType: 'session',
      actorId: done.member.id,
      targetType: 'member',
      targetId: done.member.id,
      details: { email: done.member.email },
    });
    cookie.set(reply, done.session.token, done.session.maxAgeSeconds);
    return { member: done.member, csrfToken: done.session.csrfToken, expiresAt: done.session.expiresAt };
  };

  r.post(
    '/v1/auth/setup',
    {
      config: { public: true, limited: true },
      schema: {
        tags: sessionTags,
        summary: 'Set a password from a one-time setup link, and sign in',
        description:
          'The token of a setup link (printed at first start, or by `platform users setup-link EMAIL`). ' +
          'Sets the session cookie; the link works once.',
        body: SetupBody,
        // 403: from another origin.
        response: withErrors({ 200: SignedInView, 403: ErrorBody }),
      },
    },
    async (request, reply) => {
      sameOrigin(request);
      return signedIn(
        reply,
        await members.setup(request.body.token, request.body.password, request),
        'member.password_set',
      );
    },
  );

  r.post(
    '/v1/auth/login',
    {
      config: { public: true, limited: true },
      schema: {
        tags: sessionTags,
        summary: 'Sign in with email and password (sets the session cookie)',
        description: 'Failed attempts are limited per email and per client address (429 with Retry-After).',
        body: LoginBody,
        response: withErrors({ 200: SignedInView, 401: ErrorBody, 403: ErrorBody }),
      },
    },
    async (request, reply) => {
      sameOrigin(request);
      return signedIn(
        reply,
        await members.login(request.body.email, request.body.password, request),
        'session.created',
      );
    },
  );

  r.post(
    '/v1/auth/invites/accept',
    {
      config: { public: true, limited: true },
      schema: {
        tags: memberTags,
        summary: 'Accept an invitation: become a member with a name and password, and sign in',
        body: AcceptInviteBody,
        response: withErrors({ 200: SignedInView, 403: ErrorBody, 409: ErrorBody }),
      },
    },
    async (request, reply) => {
      sameOrigin(request);
      const { token, name, password } = request.body;
      return signedIn(reply, await members.acceptInvite(token, name, password, request), 'member.joined');
    },
  );

  r.post(
    '/v1/auth/logout',
    {
      config: { auth: sessionOnly },
      schema: {
        tags: sessionTags,
        summary: 'Sign out: end this session and clear its cookie',
        description: SESSION_NOTE,
        body: NoBody,
        response: withErrors({ 204: Type.Null({ description: 'Signed out' }) }),
      },
    },
    async (request, reply) => {
      await sessions.end(sessions.of(request).id);
      cookie.clear(reply);
      return reply.code(204).send(null);
    },
  );

  r.get(
    '/v1/auth/session',
    {
      config: { auth: sessionOnly },
      schema: {
        tags: sessionTags,
        summary: 'The signed-in member, their account and the CSRF token',
        description: SESSION_NOTE,
        response: withErrors({ 200: CurrentSessionView }),
      },
    },
    async (request) => {
      const current = sessions.of(request);
      const row = current.row;
      return {
        member: {
          id: row.member_id,
          email: row.email,
          name: row.name,
          role: row.role,
          createdAt: row.member_created_at,
        },
        account: { id: current.accountId, name: await deps.accountName(current.accountId) },
        csrfToken: sessions.csrfFor(current.token),
        expiresAt: row.expires_at,
      };
    },
  );

  r.get(
    '/v1/auth/sessions',
    {
      config: { auth: sessionOnly },
      schema: {
        tags: sessionTags,
        summary: "The signed-in member's own sessions",
        description: SESSION_NOTE,
        response: withErrors({ 200: SessionList }),
      },
    },
    async (request) => {
      const current = sessions.of(request);
      const rows = await sessions.listOf(current.memberId);
      return {
        data: rows.map((row) => ({
          id: row.id,
          current: row.id === current.id,
          createdAt: row.created_at,
          lastSeenAt: row.last_seen_at,
          expiresAt: row.expires_at,
          ip: row.ip,
          userAgent: row.user_agent,
        })),
      };
    },
  );

  r.delete(
    '/v1/auth/sessions/:id',
    {
      config: { auth: sessionOnly },
      schema: {
        tags: sessionTags,
        summary: 'End one of your own sessions (another browser, a lost device)',
        description: `${SESSION_NOTE} Another member's session is a 404.`,
        params: IdParams,
        response: withErrors({ 204: Type.Null({ description: 'Ended' }) }),
      },
    },
    async (request, reply) => {
      const current = sessions.of(request);
      await sessions.revoke(current.memberId, request.params.id);
      if (request.params.id === current.id) cookie.clear(reply);
      return reply.code(204).send(null);
    },
  );

  r.get(
    '/v1/members',
    {
      config: { auth: { service: 'core' } },
      schema: {
        tags: memberTags,
        summary: "The account's members",
        response: withErrors({ 200: MemberList }),
      },
    },
    async (request) => ({ data: await members.list(caller(request).accountId) }),
  );

  r.post(
    '/v1/members/invites',
    {
      config: { auth: admin },
      schema: {
        tags: memberTags,
        summary: 'Invite a member by a one-time link (valid 7 days; its token shown only now)',
        description:
          'Owners and admins, or a key that holds everything the member would: every scope of the role on all services, production, without address rules, model list or token budget. Nobody is invited as owner.',
        body: InviteBody,
        response: withErrors({ 201: InviteView, 409: ErrorBody }),
      },
    },
    async (request, reply) => {
      const p = caller(request);
      const by = p.kind === 'session' ? (sessions.find(request)?.memberId ?? null) : null;
      const invite = await members.invite(p.accountId, request.body, by, p);
      reply.code(201);
      return invite;
    },
  );

  r.patch(
    '/v1/members/:id',
    {
      config: { auth: admin },
      schema: {
        tags: memberTags,
        summary: "Change a member's role (effective on their next request)",
        description:
          'Owners and admins (a key: as for invites, for the old role and the new). The owner cannot be changed, and nobody is made owner.',
        params: IdParams,
        body: UpdateMemberBody,
        response: withErrors({ 200: MemberView }),
      },
    },
    async (request) => {
      const p = caller(request);
      return members.changeRole(p.accountId, request.params.id, request.body.role, p);
    },
  );

  r.delete(
    '/v1/members/:id',
    {
      config: { auth: admin },
      schema: {
        tags: memberTags,
        summary: 'Remove a member; their sessions end at once',
        description: 'Owners and admins. The owner cannot be removed.',
        params: IdParams,
        response: withErrors({ 204: Type.Null({ description: 'Removed' }) }),
      },
    },
    async (request, reply) => {
      const p = caller(request);
      await members.remove(p.accountId, request.params.id, p);
      return reply.code(204).send(null);
    },
  );
}
