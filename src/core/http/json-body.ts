import type { FastifyRequest } from 'fastify';
import secureJson from 'secure-json-parse';
import { AppError } from '../errors.js';
import { assertSafeJson } from './json-guard.js';
import {
  decodeUtf8Sliced,
  JSON_INLINE_BYTES,
  parseJsonSliced,
  protoRefusalOf,
  refuseProto,
} from './json-sliced.js';

/** The bytes of bodies parsed by a parser that keeps them (a relay forwards what it validated). */
const bodyBytes = new WeakMap<FastifyRequest, Buffer>();

/** The bytes a `keepBytes` parser read for this request's body, if it did. */
export function bodyBytesOf(request: FastifyRequest): Buffer | undefined {
  return bodyBytes.get(request);
}

/**
 * The checks this parser makes, for JSON parsed elsewhere that must be refused as a request body
 * would be (a batch line's body): nesting, NUL, overflowing numbers (json-guard.ts), then the
 * `__proto__` and `constructor.prototype` keys Fastify's parser refuses. Throws the same 400s.
 */
export function assertSafeBody(value: unknown): void {
  assertSafeJson(value);
  refuseProto(value);
}

const PROTO_REFUSALS = { protoAction: 'error', constructorAction: 'error' } as const;
/** What the error handler answers for Fastify's own "invalid JSON body". */
const malformed = () => new AppError('VALIDATION_ERROR', 'Malformed JSON body');

type BodyParser = (
  request: FastifyRequest,
  body: string | Buffer,
  done: (err: Error | null, body?: unknown) => void,
) => void;

/**
 * The platform's JSON body parser. An empty body sent as JSON (clients that set the header on every
 * call, DELETE included) is no body, not a parse error; anything else goes to secure-json-parse with
 * Fastify's prototype-poisoning refusals (called directly: Fastify's wrapper answers them as "not
 * valid JSON"), then the depth/NUL/Infinity guard. Bytes are decoded strictly:
 * invalid UTF-8 is a 400, not text silently holding U+FFFD. A body above JSON_INLINE_BYTES is decoded
 * and parsed in slices (json-sliced.ts) with the same checks, so it never holds the event loop.
 */
export function strictJsonParser(options: { keepBytes?: boolean } = {}): BodyParser {
  const utf8 = new TextDecoder('utf-8', { fatal: true });
  const keepBytes = options.keepBytes === true;
  return (request, body, done) => {
    if (keepBytes) bodyBytes.set(request, body as Buffer);
    if ((body as Buffer).length > JSON_INLINE_BYTES) {
      decodeUtf8Sliced(body as Buffer)
        .then((text) => parseJsonSliced(text, { refuseProto: true }))
        .then(
          (parsed) => done(null, parsed),
          (error: Error) => done(error, undefined),
        );
      return;
    }
    let text: string;
    try {
      text = utf8.decode(body as Buffer);
    } catch {
      return done(new AppError('VALIDATION_ERROR', 'The body is not valid UTF-8'), undefined);
    }
    if (text === '') return done(null, undefined);
    let parsed: unknown;
    try {
      parsed = secureJson.parse(text, PROTO_REFUSALS);
    } catch (error) {
      return done(protoRefusalOf(error as Error) ?? malformed(), undefined);
    }
    try {
      assertSafeJson(parsed);
    } catch (refusal) {
      return done(refusal as Error, undefined);
    }
    done(null, parsed);
  };
}
