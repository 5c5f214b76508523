import { readFileSync } from 'node:fs';
import { DateTime } from 'luxon';
import { describe, expect, it } from 'vitest';
import { type ExpressionData, ExpressionEvaluator } from '../../src/modules/workflows/engine/expressions.js';
// Cases not matched, with reasons; each must still fail (so the list cannot rot).
import { KNOWN } from './support/n8n-expression-known.js';

/**
 * n8n's own expression-extension tests (packages/workflow/test/ExpressionExtensions/, see
 * test/fixtures/n8n/SOURCES-expressions.md) as a table: every case runs through the platform's evaluator
 * in the workflow time zone n8n's tests use (America/New_York), and must give n8n's value or n8n's error.
 */

type Expectation =
  | { value: unknown }
  | { undefined: true }
  | { error: string }
  | { nan: true }
  | { dateTime: true }
  | { defined: true }
  | { arrayContaining: unknown[] }
  | { match: string }
  | { dateString: string }
  | { dateTimeParts: { year: number; month: number; day: number } };

interface Case {
  file: string;
  test: string;
  n: number;
  expression: string;
  json?: Record<string, unknown>;
  note?: string;
  expect: Expectation;
}

const table = JSON.parse(
  readFileSync(new URL('../fixtures/n8n/expressions/cases.json', import.meta.url), 'utf8'),
) as { timezone: string; cases: Case[] };

const idOf = (c: Case) => `${c.file} > ${c.test} #${c.n}`;

const evaluator = new ExpressionEvaluator(5_000);

const dataFor = (c: Case): ExpressionData => {
  const json = (c.json ?? {}) as ExpressionData['json'];
  return {
    json,
    node: {},
    input: [{ json }],
    itemIndex: 0,
    runIndex: 0,
    workflow: { id: 'wf_n8n_cases', name: 'n8n expression cases' },
    execution: { id: '', mode: 'manual', resumeUrl: '' },
    env: {},
    now: new Date(),
    timezone: table.timezone,
  };
};

/** n8n's tests build a few expressions from the clock (`DateTime.now().minus(…)`): the same here. */
const withClock = (expression: string) =>
  expression.replace(/<now minus (\d+) minutes>/g, (_m, n: string) =>
    (
      DateTime.now()
        .minus({ minutes: Number(n) })
        .toISO() as string
    ).toString(),
  );

type Outcome = { ok: true; value: unknown } | { ok: false; message: string };

async function run(c: Case, expression = withClock(c.expression)): Promise<Outcome> {
  try {
    return { ok: true, value: await evaluator.evaluate(expression, dataFor(c)) };
  } catch (err) {
    return { ok: false, message: err instanceof Error ? err.message : String(err) };
  }
}

const isoDateTime = (v: unknown) => typeof v === 'string' && DateTime.fromISO(v, { setZone: true }).isValid;

/** Whether the platform's outcome is n8n's; a text saying how it differs otherwise. */
async function verdict(c: Case): Promise<true | string> {
  const got = await run(c);
  const e = c.expect;
  const show = JSON.stringify(got.ok ? got.value : `error: ${got.message}`);
  if ('error' in e) {
    if (got.ok) return `expected an error (${e.error || 'any'}), got ${show}`;
    return got.message.includes(e.error) ? true : `expected error "${e.error}", got ${show}`;
  }
  if (!got.ok) return `expected a value, got ${show}`;
  const v = got.value;
  const same = (a: unknown, b: unknown) => {
    try {
      expect(a).toEqual(b);
      return true;
    } catch {
      return false;
    }
  };
  let ok: boolean;
  if ('value' in e) ok = same(v, e.value);
  else if ('undefined' in e) ok = v === undefined;
  else if ('defined' in e) ok = v !== undefined;
  else if ('dateTime' in e) ok = isoDateTime(v);
  else if ('arrayContaining' in e) ok = same(v, expect.arrayContaining(e.arrayContaining));
  else if ('match' in e) ok = typeof v === 'string' && new RegExp(e.match).test(v);
  else if ('dateString' in e)
    ok =
      typeof v === 'string' &&
      DateTime.fromISO(v).setZone(table.timezone).toFormat('ccc LLL dd yyyy') === e.dateString;
  else if ('dateTimeParts' in e) {
    const d = typeof v === 'string' ? DateTime.fromISO(v, { setZone: true }) : null;
    ok = !!d?.isValid && same({ year: d.year, month: d.month, day: d.day }, e.dateTimeParts);
  } else {
    // NaN: a JSON result holds null; inside a template the value is written as n8n writes it.
    const text = await run(c, `=[${withClock(c.expression).slice(1)}]`);
    ok = v === null && text.ok && text.value === '[NaN]';
  }
  return ok ? true : `expected ${JSON.stringify(e)}, got ${show}`;
}

const matching = table.cases.filter((c) => !(idOf(c) in KNOWN));
const known = table.cases.filter((c) => idOf(c) in KNOWN);

describe("n8n's expression-extension cases", () => {
  it('every known difference names a case of the table', () => {
    const ids = new Set(table.cases.map(idOf));
    expect(Object.keys(KNOWN).filter((id) => !ids.has(id))).toEqual([]);
  });

  it.each(matching.map((c) => [idOf(c), c] as const))('%s', async (_id, c) => {
    const outcome = await verdict(c);
    expect(outcome, String(outcome)).toBe(true);
  });

  it.each(known.map((c) => [idOf(c), KNOWN[idOf(c)], c] as const))(
    'known difference: %s (%s)',
    async (_id, _reason, c) => {
      expect(await verdict(c)).not.toBe(true);
    },
  );
});
