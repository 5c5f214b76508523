import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ingestBeir, judgeBeir, judgeRanking, readBeir } from '../../eval/beir.js';
import { createTestPlatform, type TestPlatform } from '../helpers/platform.js';

/** A BEIR-format set of a few documents, written as BEIR ships one (corpus, queries, qrels with a header). */
function writeSet(dir: string): void {
  const corpus = [
    {
      _id: 'd1',
      title: 'Myocardial infarction',
      text: 'Troponin rises within hours of a myocardial infarction.',
    },
    { _id: 'd2', title: 'Photosynthesis', text: 'Chlorophyll absorbs red and blue light in the leaf.' },
    { _id: 'd3', title: 'Tectonics', text: 'Subduction zones recycle oceanic crust into the mantle.' },
    {
      _id: 'd4',
      title: 'Troponin assays',
      text: 'High-sensitivity troponin assays detect smaller infarcts.',
    },
  ];
  const queries = [
    { _id: '1', text: 'troponin after myocardial infarction' },
    { _id: '2', text: 'which light does chlorophyll absorb' },
    { _id: '3', text: 'a query without judgments is skipped' },
  ];
  mkdirSync(path.join(dir, 'qrels'));
  writeFileSync(path.join(dir, 'corpus.jsonl'), corpus.map((d) => JSON.stringify(d)).join('\n'));
  writeFileSync(path.join(dir, 'queries.jsonl'), queries.map((q) => JSON.stringify(q)).join('\n'));
  writeFileSync(
    path.join(dir, 'qrels', 'test.tsv'),
    'query-id\tcorpus-id\tscore\n1\td1\t1\n1\td4\t1\n2\td2\t1\n',
  );
}

describe('the BEIR benchmark harness of eval:knowledge', () => {
  let dir: string;
  let p: TestPlatform;

  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'beir-'));
    writeSet(dir);
    p = await createTestPlatform({ dialect: 'sqlite' });
  });
  afterAll(async () => {
    await p?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('scores nDCG@10 with linear gain and Recall@50 as trec_eval does', () => {
    const relevant = new Map([
      ['a', 1],
      ['b', 1],
    ]);
    expect(judgeRanking(['a', 'b', 'x'], relevant)).toEqual({ ndcg10: 1, recall50: 1 });
    const second = judgeRanking(['x', 'a'], relevant);
    expect(second.recall50).toBe(0.5);
    expect(second.ndcg10).toBeCloseTo(1 / Math.log2(3) / (1 + 1 / Math.log2(3)), 10);
    expect(judgeRanking([], relevant)).toEqual({ ndcg10: 0, recall50: 0 });
  });

  it('reads the set, ingests it through the API and ranks documents by their best chunk', async () => {
    const set = readBeir(dir);
    expect(set.corpus).toHaveLength(4);
    expect(set.queries.map((q) => q.id)).toEqual(['1', '2']);
    const ids = await ingestBeir(p, set, 'beir');
    expect([...ids.values()].sort()).toEqual(['d1', 'd2', 'd3', 'd4']);
    const scores = await judgeBeir(p, set, ids, 'beir', ['keyword', 'hybrid']);
    expect(scores.keyword).toEqual({ ndcg10: 1, recall50: 1, queries: 2 });
    expect(scores.hybrid).toEqual({ ndcg10: 1, recall50: 1, queries: 2 });
  });
});
