import { afterAll, describe, expect, it } from 'vitest';
import { jsToRe2 } from './js-to-re2.js';
import {
  closeUserRegexPool,
  configureUserRegex,
  parseUserRegex,
  UserRegexError,
  userRegexTest,
} from './user-regex.js';

afterAll(async () => {
  await closeUserRegexPool();
});

/** Patterns whose meaning must be JavaScript's, whichever engine runs them. */
const PATTERNS = [
  '^value$',
  '/^value$/g',
  '/VALUE/i',
  'a.c',
  '/a.c/s',
  '^\\s+$',
  '\\S',
  '[\\s\\S]{3}',
  '[^\\s]+x',
  '\\bfoo\\b',
  '\\w+@\\w+\\.com',
  '\\d{2,4}-\\d\\d',
  '[a-z-0]+$',
  '[\\w-.]',
  'x{2}y{,3}',
  'a{',
  '}]',
  '(?<year>\\d{4})-(?:\\d\\d)',
  '\\x41\\u0042\\cJ\\0',
  '[\\b]',
  '^$',
  '/^b$/m',
  '/^b/y',
  '/a$/',
  '(a)\\1',
  'a(?=b)',
  '(?<!x)y',
  '\\p{L}',
  '/\\p{L}+/u',
  '[]',
  '[^]',
  '\\A\\z',
  '/(a+)+$/',
  '/é/i',
  '/k/i',
  '/\\u017f/i',
  '/[\\x00-\\xff]s/i',
  '/./u',
  '^.$',
  '/\\u{1F600}/u',
];

const INPUTS = [
  '',
  'value',
  'VALUE',
  'abc',
  'a\nc',
  'a\rc',
  '   ',
  '\u00a0\u2028',
  'foo bar',
  'user@host.com',
  '2024-05',
  'a-z0',
  'xxy',
  'a{',
  '}]',
  'AB\n\0',
  '\b',
  'a\nb',
  'a\r\nb',
  'bxx',
  'aa',
  'ab',
  'xy',
  'p{L}',
  'Ünïcode',
  'Az',
  'aaaaaaaaaaaaaaaaaaaa!',
  'É',
  '\u212a',
  's',
  'Ss',
  '😀',
  'x😀',
];

function nativeTest(pattern: string, input: string): boolean | 'error' {
  const literal = /^\/(.*?)\/([gimusy]*)$/.exec(pattern);
  try {
    return (literal ? new RegExp(literal[1] ?? '', literal[2]) : new RegExp(pattern)).test(input);
  } catch {
    return 'error';
  }
}

describe('user regular expressions', () => {
  it('match exactly as JavaScript RegExp does, on the linear engine or the worker', async () => {
    for (const pattern of PATTERNS) {
      for (const input of INPUTS) {
        const expected = nativeTest(pattern, input);
        if (expected === 'error') {
          expect(() => parseUserRegex(pattern), pattern).toThrow(UserRegexError);
          continue;
        }
        const got = await userRegexTest(parseUserRegex(pattern), input);
        expect(got, `${pattern} on ${JSON.stringify(input)}`).toBe(expected);
      }
    }
  });

  it('runs patterns RE2 can express on the linear engine, and refuses to translate the others', () => {
    expect(jsToRe2('(a+)+$', '')?.pattern).toBe('(a+)+$');
    expect(jsToRe2('(?<y>\\d)', '')?.pattern).toBe('(?P<y>\\d)');
    for (const js of ['(a)\\1', 'a(?=b)', '(?<=a)b', '\\p{L}', '[]', '[^]', '\\A', 'a{1001}', '[\\S]']) {
      expect(jsToRe2(js, ''), js).toBeNull();
    }
    expect(jsToRe2('x', 'v')).toBeNull();
  });

  it('answers a catastrophic pattern RE2 can express, at once and correctly', async () => {
    const input = `${'a'.repeat(50_000)}!`;
    const started = performance.now();
    expect(await userRegexTest(parseUserRegex('(a+)+$'), input)).toBe(false);
    expect(await userRegexTest(parseUserRegex('^(a|aa)+$'), 'a'.repeat(40))).toBe(true);
    expect(performance.now() - started).toBeLessThan(5_000);
  });

  it('stops a JavaScript-only catastrophic pattern at the deadline, off the event loop, then works on', async () => {
    configureUserRegex({ timeoutMs: 300 });
    try {
      // A backreference keeps it on V8; (a+)+ backtracks exponentially before failing.
      const slow = parseUserRegex('^(a+)+\\1$');
      const input = `${'a'.repeat(40)}!`;
      let ticks = 0;
      const ticker = setInterval(() => ticks++, 10);
      const started = performance.now();
      const failure = await userRegexTest(slow, input).catch((e: unknown) => e);
      clearInterval(ticker);
      expect(failure).toBeInstanceOf(UserRegexError);
      expect((failure as UserRegexError).reason).toBe('timeout');
      expect(performance.now() - started).toBeLessThan(3_000);
      // The event loop kept turning while the worker was busy.
      expect(ticks).toBeGreaterThan(5);
      // Refused at once the second time; another pattern runs on a fresh worker.
      const again = performance.now();
      await expect(userRegexTest(slow, input)).rejects.toThrow(/took longer than 300 ms/);
      expect(performance.now() - again).toBeLessThan(1_000);
      expect(await userRegexTest(parseUserRegex('(a)\\1'), 'xaa')).toBe(true);
    } finally {
      configureUserRegex({ timeoutMs: 1_000 });
    }
  });

  it('refuses an invalid or overlong pattern with the RegExp constructor words', () => {
    expect(() => parseUserRegex('(')).toThrow(/Unterminated group/);
    expect(() => parseUserRegex('x'.repeat(10_001))).toThrow(/longer than 10000 characters/);
  });
});

describe('user regular expressions, random', () => {
  const TOKENS = [
    'a',
    'b',
    'A',
    '.',
    '\\s',
    '\\S',
    '\\d',
    '\\w',
    '\\W',
    '\\b',
    '^',
    '$',
    '*',
    '+',
    '?',
    '|',
    '(',
    ')',
    '(?:',
    '[',
    ']',
    '-',
    '{2}',
    '{1,3}',
    '[a-c]',
    '[^a]',
    '[\\s\\S]',
    '\\.',
    '\\-',
    'x',
    '{',
    '}',
  ];
  const CHARS = ['a', 'b', 'A', ' ', '\n', '\r', '1', '.', '-', 'x', '\u00a0', '{'];

  it('agree with RegExp on random patterns, flags and inputs', async () => {
    const fc = await import('fast-check');
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.constantFrom(...TOKENS), { maxLength: 8 }),
        fc.constantFrom('', 'i', 'm', 's', 'y', 'g', 'ms', 'u'),
        fc.array(fc.constantFrom(...CHARS), { maxLength: 12 }),
        async (tokens, flags, chars) => {
          const source = tokens.join('');
          const input = chars.join('');
          let native: RegExp;
          try {
            native = new RegExp(source, flags);
          } catch {
            return;
          }
          const got = await userRegexTest(parseUserRegex(`/${source}/${flags}`), input);
          expect(got, `/${source}/${flags} on ${JSON.stringify(input)}`).toBe(native.test(input));
        },
      ),
      { numRuns: 3_000 },
    );
  });
});
