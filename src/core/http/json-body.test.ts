import Fastify from 'fastify';
import { describe, expect, it } from 'vitest';
import { AppError } from '../errors.js';
import { assertSafeBody, strictJsonParser } from './json-body.js';
import { parseJsonSliced } from './json-sliced.js';

/** What the body parser answers for the same text (the sliced parser: the one that throws AppErrors). */
const parsed = (text: string) => parseJsonSliced(text, { refuseProto: true, sliceChars: 8 });

describe('assertSafeBody: the body parser’s checks on JSON parsed elsewhere', () => {
  it('refuses __proto__ and constructor.prototype as the parser does; a constructor string passes', async () => {
    for (const text of [
      '{"a": {"__proto__": {"admin": true}}}',
      '{"a": [{"constructor": {"prototype": {"x": 1}}}]}',
    ]) {
      expect(() => assertSafeBody(JSON.parse(text))).toThrow(/forbidden prototype property/);
      await expect(parsed(text)).rejects.toThrow(/forbidden prototype property/);
    }
    expect(() => assertSafeBody({ constructor: 'c', toString: 't' })).not.toThrow();
  });

  it('refuses nesting past the limit and NUL with the same errors as the parser', async () => {
    const deep = `${'['.repeat(200)}${']'.repeat(200)}`;
    const nul = '{"a": {"b": "x\\u0000"}}';
    for (const text of [deep, nul]) {
      const alone = (await parsed(text).then(
        () => null,
        (e: unknown) => e,
      )) as { message: string; details?: unknown };
      let line: unknown;
      try {
        assertSafeBody(JSON.parse(text));
      } catch (error) {
        line = error;
      }
      expect(line).toMatchObject({
        message: alone.message,
        details: alone.details,
      });
    }
  });
});

describe('strictJsonParser: one refusal for prototype keys, whatever the body size', () => {
  it('answers a small body with __proto__ as the sliced parser answers a large one', async () => {
    const app = Fastify();
    app.removeAllContentTypeParsers();
    app.addContentTypeParser('application/json', { parseAs: 'buffer' }, strictJsonParser());
    app.setErrorHandler((error: Error, _request, reply) => {
      reply.status(400).send({ message: error.message, app: error instanceof AppError });
    });
    app.post('/', async (request) => request.body ?? null);
    try {
      for (const text of ['{"__proto__": {"admin": true}}', '{"a": {"constructor": {"prototype": {}}}}']) {
        const res = await app.inject({
          method: 'POST',
          url: '/',
          headers: { 'content-type': 'application/json' },
          payload: text,
        });
        expect(res.statusCode).toBe(400);
        expect(res.json()).toEqual({ message: 'Object contains forbidden prototype property', app: true });
      }
      const fine = await app.inject({
        method: 'POST',
        url: '/',
        headers: { 'content-type': 'application/json' },
        payload: '{"a": 1}',
      });
      expect(fine.json()).toEqual({ a: 1 });
      const broken = await app.inject({
        method: 'POST',
        url: '/',
        headers: { 'content-type': 'application/json' },
        payload: '{"a": ',
      });
      expect(broken.json().message).not.toMatch(/prototype/);
    } finally {
      await app.close();
    }
  });
});
