import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestPlatform, type TestPlatform } from '../helpers/platform.js';
import { loaded, processed, query } from './support.js';

/**
 * Retrieval quality on a small real corpus: a frozen copy of this project's docs
 * (test/fixtures/documents/corpus/) and questions whose answer is in a known file. Reports recall@5
 * (the right document among the top five chunks' documents) per mode.
 */
const CORPUS = path.join(import.meta.dirname, '..', 'fixtures', 'documents', 'corpus');
const QUESTIONS: Array<[string, string]> = [
  ['Which error body do Ollama clients receive for an unknown model?', 'llm.md'],
  ['How is a daily token budget charged for a language model key?', 'llm.md'],
  ['Do blend ratios have to sum to one or to a hundred percent?', 'commerce.md'],
  ['What does the checkout do with the inventory reservation of the previous checkout?', 'cart.md'],
  ['Is the game manifest cached by its content version?', 'game.md'],
  ['How does a repeated webhook call with the same dedupe key behave?', 'named-workflows.md'],
  ['Where do expressions run: QuickJS compiled to WebAssembly on worker threads?', 'workflow-engine.md'],
  ['How does a worker claim an execution so only one runs it?', 'workflows.md'],
  ['Which findings of the audit were about missing request or body timeouts?', 'security.md'],
  ['How are fallbacks tried when a model fails before its first byte?', 'llm.md'],
];

describe('retrieval quality on a real corpus (recall@5)', () => {
  let p: TestPlatform;
  const titles = new Map<string, string>();

  beforeAll(async () => {
    p = await createTestPlatform({ dialect: 'sqlite' });
    for (const file of readdirSync(CORPUS).sort()) {
      const doc = await loaded(p, {
        source: 'markdown',
        content: readFileSync(path.join(CORPUS, file), 'utf8'),
        topic: 'docs',
        metadata: { file },
      });
      titles.set(doc.documentId, file);
      await processed(p, doc.documentId, { chunkSize: 800, chunkOverlap: 100 });
    }
  }, 60_000);
  afterAll(() => p?.close());

  async function recall(mode: string): Promise<number> {
    let hits = 0;
    for (const [question, file] of QUESTIONS) {
      const res = await query(p, { query: question, mode, topK: 5, topics: ['docs'] });
      const files = (res.json() as { results: Array<{ documentId: string }> }).results.map((r) =>
        titles.get(r.documentId),
      );
      if (files.includes(file)) hits++;
    }
    return hits / QUESTIONS.length;
  }

  it('finds the right document in the top five, hybrid at least as well as either alone', async () => {
    const keyword = await recall('keyword');
    const vector = await recall('vector');
    const hybrid = await recall('hybrid');
    console.log(
      `recall@5 over ${QUESTIONS.length} questions: keyword ${keyword}, vector ${vector}, hybrid ${hybrid}`,
    );
    expect(keyword).toBeGreaterThanOrEqual(0.7);
    expect(vector).toBeGreaterThanOrEqual(0.5);
    expect(hybrid).toBeGreaterThanOrEqual(0.8);
    expect(hybrid).toBeGreaterThanOrEqual(Math.min(keyword, vector));
  });
});
