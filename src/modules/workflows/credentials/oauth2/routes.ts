import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { AppError, type ErrorCode } from '../../../../core/errors.js';
import { IdParams, withErrors } from '../../../../core/http/schemas.js';
import { CONSENT_CALLBACK_PATH, CONSENT_START_PATH, type CredentialConsent } from './consent.js';

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
export function oauth2Routes(app: FastifyInstance, consent: CredentialConsent): void {
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
      // Opened by the consenting browser: the one-time ticket is the credential.
      config: { public: true, limited: true },
      schema: {
        tags,
        summary: 'Browser step: binds the consent to this browser (cookie) and redirects to the provider',
        querystring: Type.Object({ ticket: Type.String({ minLength: 1, maxLength: 100 }) }),
        response: withErrors({ 302: Type.Null({ description: 'Redirect to the provider’s authorize URL' }) }),
      },
    },
    async (request, reply) => {
      const { location, cookie } = await consent.browserStart(
        request.query.ticket,
        request.protocol === 'https',
      );
      return reply.header('set-cookie', cookie).header('cache-control', 'no-store').redirect(location, 302);
    },
  );

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
