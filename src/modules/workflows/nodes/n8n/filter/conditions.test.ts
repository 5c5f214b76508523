import { describe, expect, it } from 'vitest';
import { evaluateFilter, type FilterValueT, filterProblems } from './conditions.js';

type Op = FilterValueT['conditions'][number]['operator'];

/** One condition, n8n's stored options (strict and case-sensitive unless told). */
function holds(
  leftValue: unknown,
  operator: Op,
  rightValue?: unknown,
  options: FilterValueT['options'] = { caseSensitive: true, typeValidation: 'strict', version: 2 },
): Promise<boolean> {
  return evaluateFilter({ options, conditions: [{ leftValue, rightValue, operator }], combinator: 'and' }, 0);
}

const str = (operation: string): Op => ({ type: 'string', operation }) as Op;
const num = (operation: string): Op => ({ type: 'number', operation }) as Op;
const loose = { caseSensitive: true, typeValidation: 'loose', version: 2 } as const;

describe('n8n filter conditions', () => {
  it.each([
    ['Shane', 'startsWith', 'Sh', true],
    ['Shane', 'startsWith', 'sh', false],
    ['Shane', 'notStartsWith', 'sh', true],
    ['a@yahoo.com', 'endsWith', '@yahoo.com', true],
    ['a@yahoo.com', 'notEndsWith', '.com', false],
    ['abc', 'contains', 'b', true],
    ['abc', 'notContains', 'b', false],
    ['abc', 'equals', 'abc', true],
    ['abc', 'notEquals', 'abc', false],
    ['', 'empty', undefined, true],
    ['x', 'notEmpty', undefined, true],
    ['value', 'regex', '^value$', true],
    ['value', 'regex', '/^VALUE$/i', true],
    ['value', 'notRegex', '/^value$/g', false],
  ])('string %j %s %j → %s', async (left, op, right, expected) => {
    expect(await holds(left, str(op), right)).toBe(expected);
  });

  it('ignores case when the stored options say so (regex gets the i flag)', async () => {
    const opts = { caseSensitive: false, typeValidation: 'strict' } as const;
    expect(await holds('Shane', str('startsWith'), 's', opts)).toBe(true);
    expect(await holds('VALUE', str('regex'), '^value$', opts)).toBe(true);
    expect(
      await holds(['Exotic'], { type: 'array', operation: 'contains', rightType: 'any' }, 'exotic', opts),
    ).toBe(true);
  });

  it('reads exists as n8n does: undefined, null and NaN do not exist', async () => {
    const exists = { type: 'any', operation: 'exists' } as Op;
    expect(
      await Promise.all([undefined, null, Number.NaN, '', 0, false].map((v) => holds(v, exists))),
    ).toEqual([false, false, false, true, true, true]);
    expect(await holds(undefined, { type: 'string', operation: 'notExists' } as Op)).toBe(true);
  });

  it('compares numbers, dates, booleans, arrays and objects by type', async () => {
    expect(await holds(2, num('gt'), 1)).toBe(true);
    expect(await holds(3, num('lte'), 3)).toBe(true);
    expect(await holds(null, num('empty'))).toBe(true);
    const after = { type: 'dateTime', operation: 'after' } as Op;
    expect(await holds('2020-10-05T14:48:00.000Z', after, '2018-12-31T22:00:00')).toBe(true);
    expect(await holds('Tue, 01 Nov 2016 13:23:12 +0630', after, '2017-01-01')).toBe(false);
    const dateEquals = { type: 'dateTime', operation: 'equals' } as Op;
    expect(await holds('2023-08-01T12:34:56Z', dateEquals, '2023-08-01T14:34:56+02:00')).toBe(true);
    expect(await holds(true, { type: 'boolean', operation: 'true', singleValue: true } as Op)).toBe(true);
    expect(await holds(false, { type: 'boolean', operation: 'equals' } as Op, false)).toBe(true);
    const lengthGt = { type: 'array', operation: 'lengthGt', rightType: 'number' } as Op;
    expect(await holds([1, 2, 3], lengthGt, 2)).toBe(true);
    expect(await holds([1, 2], { type: 'array', operation: 'lengthEquals' } as Op, 2)).toBe(true);
    expect(await holds(undefined, { type: 'array', operation: 'contains' } as Op, 'x')).toBe(false);
    expect(await holds({}, { type: 'object', operation: 'empty' } as Op)).toBe(true);
    expect(await holds({ a: 1 }, { type: 'object', operation: 'notEmpty' } as Op)).toBe(true);
  });

  it('refuses a value of another type in strict mode, in n8n words', async () => {
    await expect(holds('5', num('gt'), 3)).rejects.toThrow(
      "Wrong type: '5' is a string but was expecting a number [condition 0, item 0]",
    );
    await expect(holds(5, num('gt'), 'x')).rejects.toThrow(
      "Wrong type: 'x' is a string but was expecting a number [condition 0, item 0]",
    );
    await expect(holds('a', num('equals'), 'b')).rejects.toThrow(
      'Comparison type expects a number but both fields are a string',
    );
  });

  it('converts in loose mode, and says when it cannot', async () => {
    expect(await holds('5', num('gt'), 3, loose)).toBe(true);
    expect(await holds('[1,2]', { type: 'array', operation: 'lengthEquals' } as Op, '2', loose)).toBe(true);
    await expect(holds('abc', num('gt'), 3, loose)).rejects.toThrow(
      "Conversion error: the string 'abc' can't be converted to a number [condition 0, item 0]",
    );
  });

  it('reads loose booleans by filter version: v1 truthiness, v2 "false" is false', async () => {
    const isTrue = { type: 'boolean', operation: 'true' } as Op;
    expect(await holds('false', isTrue, undefined, { typeValidation: 'loose', version: 1 })).toBe(true);
    expect(await holds('false', isTrue, undefined, { typeValidation: 'loose', version: 2 })).toBe(false);
  });

  it('treats an empty string as no number from filter version 3', async () => {
    const empty = num('empty');
    expect(await holds('', empty, undefined, { typeValidation: 'loose', version: 2 })).toBe(false);
    expect(await holds('', empty, undefined, { typeValidation: 'loose', version: 3 })).toBe(true);
  });

  it('joins conditions with and/or', async () => {
    const conditions = [
      { leftValue: 'a', rightValue: 'a', operator: str('equals') },
      { leftValue: 'a', rightValue: 'b', operator: str('equals') },
    ];
    const options = { caseSensitive: true, typeValidation: 'strict' } as const;
    expect(await evaluateFilter({ options, conditions, combinator: 'and' }, 0)).toBe(false);
    expect(await evaluateFilter({ options, conditions, combinator: 'or' }, 0)).toBe(true);
  });

  it('answers a catastrophic-on-V8 regular expression in linear time, with JavaScript semantics', async () => {
    const started = Date.now();
    expect(await holds(`${'a'.repeat(5_000)}b`, str('regex'), '^(a+)+$')).toBe(false);
    expect(await holds('a'.repeat(5_000), str('regex'), '^(a+)+$')).toBe(true);
    expect(Date.now() - started).toBeLessThan(2_000);
    await expect(holds('x', str('regex'), '(')).rejects.toThrow(
      /Invalid regular expression.*\[condition 0, item 0\]/,
    );
  });

  it('bounds a pattern only JavaScript can run (backreference), off the event loop', async () => {
    const started = Date.now();
    await expect(holds(`${'a'.repeat(40)}b`, str('regex'), '^(a+)+\\1$')).rejects.toThrow(
      /took longer than \d+ ms \[condition 0, item 0\]/,
    );
    expect(Date.now() - started).toBeLessThan(5_000);
    // Once out of time, the pattern fails at once on every later item.
    const again = Date.now();
    for (let i = 0; i < 50; i++)
      await expect(holds(`${'a'.repeat(40)}b`, str('regex'), '^(a+)+\\1$')).rejects.toThrow(/took longer/);
    expect(Date.now() - again).toBeLessThan(1_000);
    expect(await holds('xaa', str('regex'), '(a)\\1')).toBe(true);
  });

  it('reports an operation that is not one of its type', async () => {
    const value = { conditions: [{ leftValue: 1, operator: { type: 'number', operation: 'startsWith' } }] };
    expect(filterProblems(value, 'parameters.conditions')).toEqual([
      {
        path: 'parameters.conditions.conditions[0].operator.operation',
        message: expect.stringContaining("'startsWith' is not an operation of type 'number'"),
      },
    ]);
  });
});
