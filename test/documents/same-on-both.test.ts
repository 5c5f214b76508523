import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestPlatform, type TestPlatform } from '../helpers/platform.js';
import { postgresAvailable } from '../helpers/services.js';
import { loaded, processed, query } from './support.js';

const CORPUS = path.join(import.meta.dirname, '..', 'fixtures', 'documents', 'corpus');

/** The same data gives the same results, in the same order, on SQLite and PostgreSQL. */
describe.runIf(await postgresAvailable())('knowledge queries are identical on SQLite and PostgreSQL', () => {
  const platforms: TestPlatform[] = [];

  beforeAll(async () => {
    for (const dialect of ['sqlite', 'postgres'] as const) {
      const p = await createTestPlatform({ dialect });
      platforms.push(p);
      for (const file of readdirSync(CORPUS).sort()) {
        const doc = await loaded(p, {
          source: 'markdown',
          content: readFileSync(path.join(CORPUS, file), 'utf8'),
          topic: file.startsWith('work') ? 'workflows' : 'docs',
        });
        await processed(p, doc.documentId, { chunkSize: 600, chunkOverlap: 60 });
      }
    }
  }, 90_000);
  afterAll(() => Promise.all(platforms.map((p) => p.close())));

  const questions = [
    'model fallbacks before the first byte',
    'webhook dedupe key',
    'reservation checkout inventory',
    'the expression sandbox',
    'a',
  ];

  for (const mode of ['keyword', 'vector', 'hybrid'] as const) {
    it(`${mode}: same chunks, scores and order`, async () => {
      for (const q of questions) {
        const [a, b] = await Promise.all(
          platforms.map(async (p) => {
            const res = await query(p, { query: q, mode, topK: 10 });
            expect(res.statusCode).toBe(200);
            return (res.json() as { results: Array<Record<string, unknown>> }).results.map((r) => ({
              title: r.title,
              text: r.text,
              page: r.pageNumber,
              score: Math.round(Number(r.score) * 1e6),
              keywordRank: r.keywordRank,
              vectorRank: r.vectorRank,
            }));
          }),
        );
        expect(a, `${mode}: ${q}`).toEqual(b);
        if (q !== 'a') expect(a?.length, `${mode}: ${q}`).toBeGreaterThan(0);
      }
    });
  }
});
