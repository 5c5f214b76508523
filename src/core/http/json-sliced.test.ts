import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseJsonSliced } from './json-sliced.js';

const sliced = (text: string, sliceChars = 8, refuseProto = false) =>
  parseJsonSliced(text, { refuseProto, sliceChars });

describe('JSON parsed in slices', () => {
  it('gives exactly what JSON.parse gives', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.jsonValue({ maxDepth: 6 }),
        fc.constantFrom('', ' ', '\n\t '),
        async (value, space) => {
          const text = JSON.stringify(value, null, space) ?? 'null';
          expect(await sliced(text)).toStrictEqual(JSON.parse(text));
        },
      ),
      { numRuns: 500 },
    );
  });

  it('keeps duplicate keys as JSON.parse does (the last wins) and __proto__ as an own property', async () => {
    const text =
      '{"a": [1, 2, 3, 4, 5, 6, 7, 8, 9], "a": {"x": "yyyyyyyyyyyy"}, "__proto__": {"polluted": true}}';
    const parsed = (await sliced(text)) as Record<string, unknown>;
    expect(parsed).toStrictEqual(JSON.parse(text));
    expect(Object.getPrototypeOf(parsed)).toBe(Object.prototype);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    await expect(sliced(text, 8, true)).rejects.toThrow(/forbidden prototype property/);
    await expect(
      sliced('{"constructor": {"prototype": {"x": 1}}, "b": "cccccccccccc"}', 8, true),
    ).rejects.toThrow(/forbidden prototype property/);
  });

  it('refuses what JSON.parse refuses, and what the guard refuses, naming where', async () => {
    for (const bad of [
      '',
      '[1, 2',
      '[1, 2,]',
      '{"a": 1,}',
      '{"a" 1}',
      '[1] x',
      '["abc]',
      '{"a": [1, 2}]',
      'nul',
      '[01]',
    ]) {
      await expect(sliced(bad), bad).rejects.toThrow(/not valid JSON/);
    }
    await expect(sliced(`${'['.repeat(129)}${']'.repeat(129)}`)).rejects.toThrow(/deeper than 128/);
    await expect(sliced('{"list": ["aaaaaaaaaaaa", "b\\u0000"]}')).rejects.toMatchObject({
      details: { fields: [{ field: 'body.list.1' }] },
    });
    await expect(sliced('{"n": [1, 2, 3, 4, 5, 6, 1e400]}')).rejects.toMatchObject({
      details: { fields: [{ field: 'body.n.6' }] },
    });
  });

  it('leaves the event loop free while a large body is parsed', async () => {
    const text = `[${Array.from({ length: 400_000 }, () => '{}').join(',')}]`;
    let ticks = 0;
    let longest = 0;
    let last = performance.now();
    const timer = setInterval(() => {
      const now = performance.now();
      longest = Math.max(longest, now - last);
      last = now;
      ticks++;
    }, 1);
    const parsed = (await parseJsonSliced(text, { refuseProto: true })) as unknown[];
    clearInterval(timer);
    expect(parsed).toHaveLength(400_000);
    expect(ticks).toBeGreaterThan(3);
    // Generous for a loaded machine: one native JSON.parse of it holds the loop for hundreds of ms.
    expect(longest).toBeLessThan(150);
  });
});
