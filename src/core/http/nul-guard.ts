import type { FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify';
import { AppError } from '../errors.js';

/**
 * A NUL (U+0000) reaches a decoded path or query value only as `%00` (the HTTP parser refuses a raw
 * one; a raw byte is still checked for injected requests). PostgreSQL cannot store it in text, so
 * it is refused for every route before any hook uses the path — the webhook look-up included.
 */
const holdsNul = (text: string) => text.includes('\u0000') || /%00/i.test(text);

/** A callback hook, not an async one: it runs on every request, and most URLs pass at once. */
export function refuseNulInUrl(request: FastifyRequest, _reply: FastifyReply, done: HookHandlerDoneFunction) {
  const url = request.url;
  if (!holdsNul(url)) return done();
  const queryAt = url.indexOf('?');
  const inPath = holdsNul(queryAt === -1 ? url : url.slice(0, queryAt));
  done(
    new AppError('VALIDATION_ERROR', 'The request URL holds a NUL character', {
      fields: [
        { field: inPath ? 'path' : 'querystring', message: 'must not contain the NUL character (U+0000)' },
      ],
    }),
  );
}
