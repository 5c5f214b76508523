import { describe, expect, it } from 'vitest';
import { assertSafeBody } from './json-body.js';
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
