import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { Principal } from '../../../../core/auth/principal.js';
import { AppError, type ErrorCode } from '../../../../core/errors.js';
import { IdParams, withErrors } from '../../../../core/http/schemas.js';
import {
  CONSENT_CALLBACK_PATH,
  CONSENT_START_PATH,
  type CredentialConsent,
  type StartStep,
} from './consent.js';

const tags = ['Credentials'];
const NoBody = Type.Object({}, { additionalProperties: false });
const ConsentLink = Type.Object({
  authorizeUrl: Type.String({
    description: 'One-time link for the browser that gives consent: it goes on to the provider',
  }),
  expiresAt: Type.String({ format: 'date-time' }),
  callbackUrl: Type.String({ description: 'The redirect URI to register at the provider' }),
});
/** The platform's error for each status the callback answers. */
const ERROR_OF: Record<number, ErrorCode> = {
  400: 'VALIDATION_ERROR',
  403: 'FORBIDDEN',
  404: 'CREDENTIAL_NOT_FOUND',
  502: 'UPSTREAM_ERROR',
};
const Html = Type.String({ description: 'A page saying connected or failed (HTML)' });

/** n8n's OAuth2 consent for credentials: thin, the flow is CredentialConsent's. */
export function oauth2Routes(
  app: FastifyInstance,
  consent: CredentialConsent,
  sessionOf: (request: FastifyRequest) => Promise<Principal | null>,
): void {
  const r = app.withTypeProvider<TypeBoxTypeProvider>();

  r.post(
    '/api/v1/credentials/:id/oauth2/authorize',
    {
      config: { auth: { service: 'workflow', endpointLimit: true } },
      schema: {
        tags,
        summary: 'Start the OAuth2 consent of a credential (authorization code, PKCE)',
        description:
          'Answers a one-time link, valid 10 minutes, for the browser of the person who consents: it binds ' +
          'the flow to that browser and goes on to the provider. Only the credential’s owner or a key with ' +
          'credentials:use may start it. Register `callbackUrl` as the redirect URI at the provider.',
        params: IdParams,
        body: Type.Optional(NoBody),
        response: withErrors({ 200: ConsentLink }),
      },
    },
    async (request) => {
      const principal = request.principal;
      if (!principal) throw new Error('auth hook did not run');
      return consent.start(principal.accountId, request.params.id, principal);
    },
  );

  r.get(
    CONSENT_START_PATH,
    {
      // Opened by the consenting browser: the one-time ticket, and the session of a member's link.
      config: { public: true, limited: true },
      schema: {
        tags,
        summary:
          'Browser step: the provider (a member’s link, in their session) or a confirmation page first',
        description:
          'A link asked for with a member’s session goes on only in that member’s signed-in browser ' +
          '(403 otherwise). A link asked for with an API key answers a page naming the account, the ' +
          'credential and the provider’s host, whose button (POST) goes on. Going on sets a cookie ' +
          'binding the consent to this browser and redirects to the provider.',
        querystring: Type.Object({ ticket: Type.String({ minLength: 1, maxLength: 100 }) }),
        response: withErrors({
          200: Type.String({ description: 'The confirmation page (HTML)' }),
          302: Type.Null({ description: 'Redirect to the provider’s authorize URL' }),
        }),
      },
    },
    async (request, reply) => {
      const step = await consent.browserStart(
        request.query.ticket,
        request.protocol === 'https',
        await sessionOf(request),
        false,
      );
      return answerStart(reply, step, 302);
    },
  );

  app.register(async (scope) => {
    // The confirmation page's form: a few bytes of form body, nothing else.
    scope.addContentTypeParser(
      'application/x-www-form-urlencoded',
      { parseAs: 'string', bodyLimit: 1024 },
      (_request, body, done) => done(null, Object.fromEntries(new URLSearchParams(String(body)))),
    );
    scope.withTypeProvider<TypeBoxTypeProvider>().post(
      CONSENT_START_PATH,
      {
        // The confirmation page's button; the ticket is the credential, and the page must be ours.
        config: { public: true, limited: true },
        schema: {
          tags,
          summary: 'Browser step: the confirmation page’s button; binds the consent to this browser',
          description:
            'Sent by the page `GET /oauth2-credential/start` answers (a form of this site: another ' +
            'site’s page is refused, 403). Redirects to the provider.',
          body: Type.Object({ ticket: Type.String({ minLength: 1, maxLength: 100 }) }),
          response: withErrors({
            303: Type.Null({ description: 'Redirect to the provider’s authorize URL' }),
          }),
        },
      },
      async (request, reply) => {
        if (!fromThisSite(request, consent.publicOrigin))
          throw new AppError(
            'FORBIDDEN',
            'This form can only be sent from the confirmation page of this site: open the link again',
          );
        const step = await consent.browserStart(
          request.body.ticket,
          request.protocol === 'https',
          await sessionOf(request),
          true,
        );
        return answerStart(reply, step, 303);
      },
    );
  });

  r.get(
    CONSENT_CALLBACK_PATH,
    {
      // Reached by the browser the provider sends back: the state and that browser's cookie.
      config: { public: true, limited: true },
      schema: {
        tags,
        summary: 'OAuth2 callback: checks state and browser, exchanges the code, stores the tokens sealed',
        querystring: Type.Object({
          code: Type.Optional(Type.String({ maxLength: 4096 })),
          state: Type.Optional(Type.String({ maxLength: 200 })),
          error: Type.Optional(Type.String({ maxLength: 200 })),
          error_description: Type.Optional(Type.String({ maxLength: 2000 })),
        }),
        description:
          'A browser (Accept: text/html) gets a page saying connected or why not; another caller gets ' +
          '`{connected: true}` or the platform’s error.',
        response: withErrors({
          200: Type.Union([Html, Type.Object({ connected: Type.Literal(true) })]),
        }),
      },
    },
    async (request, reply) => {
      // The flow is spent whatever the outcome: its cookie goes too.
      const clear = consent.clearCookie(request.query.state, request.protocol === 'https');
      if (clear) reply.header('set-cookie', clear);
      reply.header('cache-control', 'no-store');
      const page = await consent.callback(request.query, request.headers.cookie);
      if (/\btext\/html\b/.test(request.headers.accept ?? ''))
        return reply.code(page.status).headers(page.headers).send(page.html);
      if (!page.ok) throw new AppError(ERROR_OF[page.status] ?? 'VALIDATION_ERROR', page.message);
      return { connected: true as const };
    },
  );
}

/** The start step as HTTP: the confirmation page, or the cookie and the redirect to the provider. */
function answerStart(reply: FastifyReply, step: StartStep, status: 302 | 303) {
  if (step.kind === 'confirm') return reply.code(200).headers(step.page.headers).send(step.page.html);
  return reply
    .header('set-cookie', step.cookie)
    .header('cache-control', 'no-store')
    .redirect(step.location, status);
}

/**
 * A POST from a page of this site: browsers send Origin on every POST (the page's referrer policy
 * keeps it), so another site's auto-submitted form, which would skip the confirmation, is refused.
 */
function fromThisSite(request: FastifyRequest, publicOrigin: string): boolean {
  const site = request.headers['sec-fetch-site'];
  if (site !== undefined && site !== 'same-origin') return false;
  const origin = request.headers.origin;
  if (typeof origin !== 'string') return false;
  if (origin === publicOrigin) return true;
  const host = request.headers.host;
  return host !== undefined && URL.canParse(origin) && new URL(origin).host === host;
}
