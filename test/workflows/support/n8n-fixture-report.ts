import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { startDummyJson } from './dummyjson-mock.js';
import { KNOWN } from './n8n-expression-known.js';
import { FIXTURES, fixturePasses } from './n8n-harness.js';

/**
 * The measured side of `npm run nodes-report`: runs every vendored n8n node fixture through the same
 * harness the fixture suites use (test/fixtures/n8n/<node>/…, AI fixtures aside: they need a model
 * upstream and have their own suite) and counts n8n's expression-extension cases. No test-runner import.
 */

export interface FixtureRate {
  /** n8n's node type the fixture folder is named for (`date-time` → `n8n-nodes-base.dateTime`). */
  type: string;
  passed: number;
  total: number;
  failing: string[];
}

// `harness/` holds what n8n's test code adds to a fixture (files it reads, outputs it expects).
const SKIPPED = new Set(['agent', 'ai', 'expressions', 'harness', 'templates']);

function fixtureFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return SKIPPED.has(name) ? [] : fixtureFiles(path);
    return name.endsWith('.json') ? [relative(FIXTURES, path)] : [];
  });
}

const typeOf = (file: string) =>
  `n8n-nodes-base.${(file.split('/')[0] ?? '').replace(/-([a-z])/g, (_m, c: string) => c.toUpperCase())}`;

export async function fixtureRates(): Promise<FixtureRate[]> {
  const mock = await startDummyJson();
  try {
    const rates = new Map<string, FixtureRate>();
    for (const file of fixtureFiles(FIXTURES).sort()) {
      const type = typeOf(file);
      const rate = rates.get(type) ?? { type, passed: 0, total: 0, failing: [] };
      rates.set(type, rate);
      rate.total += 1;
      if (await fixturePasses(file, file.startsWith('http-request/') ? mock.deps() : {})) rate.passed += 1;
      else rate.failing.push(file);
    }
    return [...rates.values()];
  } finally {
    await mock.close();
  }
}

/** n8n's expression-extension cases and how many match (the suite checks every case either way). */
export function expressionRate(): { matched: number; total: number } {
  const table = JSON.parse(readFileSync(join(FIXTURES, 'expressions/cases.json'), 'utf8')) as {
    cases: unknown[];
  };
  return { matched: table.cases.length - Object.keys(KNOWN).length, total: table.cases.length };
}
