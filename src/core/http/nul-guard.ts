import type { FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify';
import { AppError } from '../errors.js';

/**
 * A NUL (U+0000) reaches a decoded path or query value only as `%00` (the HTTP parser refuses a raw
 * one; a raw byte is still checked for injected requests). PostgreSQL cannot store it in text, so
 * it is refused for every route before any hook uses the path — the webhook look-up included.
 */
const holdsNul = (text: string) => text.includes('\u0000') || /%00/i.test(text);

/** The refusal of a URL holding a NUL, or null (most URLs pass at once). */
export function nulInUrl(url: string): AppError | null {
  if (!holdsNul(url)) return null;
  const queryAt = url.indexOf('?');
  const inPath = holdsNul(queryAt === -1 ? url : url.slice(0, queryAt));
  return new AppError('VALIDATION_ERROR', 'The request URL holds a NUL character', {
    fields: [
      { field: inPath ? 'path' : 'querystring', message: 'must not contain the NUL character (U+0000)' },
    ],
  });
}

/** As a callback hook of its own (app.ts runs `nulInUrl` inside its first hook). */
export function refuseNulInUrl(request: FastifyRequest, _reply: FastifyReply, done: HookHandlerDoneFunction) {
  const refusal = nulInUrl(request.url);
  if (refusal) done(refusal);
  else done();
}
