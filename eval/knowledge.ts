/**
 * `npm run eval:knowledge`: judges the knowledge base by numbers on a labeled set made for this
 * repository (eval/knowledge/): a fictional shop's help centre (help-center.md, one document per `# `
 * section) among this project's own docs (test/fixtures/documents/corpus/), and questions with the phrase
 * a passage must contain to answer them (questions.json; `answer: null` marks a question nothing answers),
 * and held-out questions of the same kind (heldout.json) that were not used to tune the answerer: its
 * figures are printed per set, so a change that only fits the tuning set shows.
 *
 * Everything goes through the public API of a platform on the embedded default (SQLite in memory, the
 * default embedder, default chunking): documents are loaded and processed, then each question is asked in
 * each mode and to `builtin/extractive`. A chunk is relevant when it contains the question's phrase.
 * Prints, per mode: nDCG@10, Recall@10 and Recall@50 (share of the relevant chunks found), MRR; the same
 * for a plain BM25 library (wink-bm25-text-search, a devDependency used only here) over the same chunks;
 * and the answerer's answer rate (the answer quotes the phrase), abstention rate on unanswerable
 * questions and mean answer length in words. `EVAL_DIALECT=postgres` runs on PostgreSQL instead;
 * `EVAL_JSON=1` prints the figures as JSON, `EVAL_VERBOSE=1` the answerer's misses; `DOCUMENT_CHUNK_SIZE`,
 * `DOCUMENT_CHUNK_OVERLAP` and `KNOWLEDGE_VECTOR_WEIGHT` in the environment replace the platform's
 * defaults, and `EVAL_WEIGHTS` (`keyword,vector`) the hybrid mode's fusion weights of the retrieval
 * figures alone.
 *
 * `--beir <dir>` (or `--scifact <dir>`) judges a public benchmark in BEIR's format instead (eval/beir.ts).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { NOTHING_FOUND, NOTHING_FOUND_IN_KNOWLEDGE } from '../src/modules/llm/builtin/extractive.js';
import { createTestPlatform, type TestPlatform } from '../test/helpers/platform.js';
import { BEIR_MODES, ingestBeir, judgeBeir, readBeir } from './beir.js';

const here = import.meta.dirname;
const DATA = path.join(here, 'knowledge');
const DOCS = path.join(here, '..', 'test', 'fixtures', 'documents', 'corpus');
const MODES = ['keyword', 'vector', 'hybrid'] as const;
const DEPTH = 50;

interface Question {
  q: string;
  answer: string | null;
  set: 'tuning' | 'held-out';
}
interface Chunk {
  chunkId: string;
  text: string;
}

const normal = (text: string) => text.toLowerCase().replace(/\s+/g, ' ');

function documents(): Array<{ title: string; content: string; file: string }> {
  const help = readFileSync(path.join(DATA, 'help-center.md'), 'utf8')
    .split(/^# /m)
    .filter((s) => s.trim() !== '')
    .map((section) => {
      const title = section.slice(0, section.indexOf('\n')).trim();
      return { title, content: `# ${section.trim()}\n`, file: `help-center.md#${title}` };
    });
  const docs = readdirSync(DOCS)
    .sort()
    .map((file) => ({ title: file, content: readFileSync(path.join(DOCS, file), 'utf8'), file }));
  return [...help, ...docs];
}

async function ok<T>(
  p: TestPlatform,
  method: 'GET' | 'POST',
  url: string,
  payload?: Record<string, unknown>,
): Promise<T> {
  const res = await p.request({ method, url, ...(payload === undefined ? {} : { payload }) });
  if (res.statusCode >= 300) throw new Error(`${method} ${url}: ${res.statusCode} ${res.body}`);
  return res.json() as T;
}

async function ingest(p: TestPlatform): Promise<Chunk[]> {
  const chunks: Chunk[] = [];
  for (const doc of documents()) {
    const loaded = await ok<{ documentId: string }>(p, 'POST', '/api/documents/load', {
      source: 'markdown',
      content: doc.content,
      title: doc.title,
      topic: 'eval',
      metadata: { file: doc.file },
    });
    await ok(p, 'POST', `/api/documents/${loaded.documentId}/process?wait=true`, {});
    const view = await ok<{ status: string }>(p, 'GET', `/api/documents/${loaded.documentId}?fields=status`);
    if (view.status !== 'indexed') throw new Error(`${doc.file} is ${view.status}`);
    const list = await ok<{ data: Chunk[] }>(p, 'GET', `/api/documents/${loaded.documentId}/chunks`);
    chunks.push(...list.data);
  }
  return chunks;
}

interface Scores {
  ndcg10: number;
  recall10: number;
  recall50: number;
  mrr: number;
}

/** Binary-relevance metrics of one ranking. */
function judge(ranking: string[], relevant: Set<string>): Scores {
  let dcg = 0;
  let ideal = 0;
  for (let i = 0; i < 10; i++) {
    if (ranking[i] !== undefined && relevant.has(ranking[i]!)) dcg += 1 / Math.log2(i + 2);
    if (i < relevant.size) ideal += 1 / Math.log2(i + 2);
  }
  const found = (k: number) => ranking.slice(0, k).filter((id) => relevant.has(id)).length / relevant.size;
  const first = ranking.findIndex((id) => relevant.has(id));
  return {
    ndcg10: ideal === 0 ? 0 : dcg / ideal,
    recall10: found(10),
    recall50: found(50),
    mrr: first < 0 ? 0 : 1 / (first + 1),
  };
}

function mean(list: Scores[]): Scores {
  const sum = (key: keyof Scores) => list.reduce((n, s) => n + s[key], 0) / (list.length || 1);
  return { ndcg10: sum('ndcg10'), recall10: sum('recall10'), recall50: sum('recall50'), mrr: sum('mrr') };
}

interface WinkEngine {
  defineConfig(config: { fldWeights: Record<string, number> }): void;
  definePrepTasks(tasks: Array<(input: never) => unknown>): void;
  addDoc(doc: Record<string, string>, id: string): void;
  consolidate(): void;
  search(query: string, limit?: number): Array<[string, number]>;
}

/** The baseline: wink-bm25-text-search with its documented preparation (lower case, words, no stop words, stems). */
function baseline(chunks: Chunk[]): (query: string) => string[] {
  const require = createRequire(import.meta.url);
  let bm25: () => WinkEngine;
  let nlp: {
    string: Record<string, (s: string) => never>;
    tokens: Record<string, (t: string[]) => never>;
  };
  try {
    bm25 = require('wink-bm25-text-search');
    nlp = require('wink-nlp-utils');
  } catch {
    throw new Error('the baseline needs the devDependency wink-bm25-text-search: npm install');
  }
  const engine = bm25();
  engine.defineConfig({ fldWeights: { body: 1 } });
  engine.definePrepTasks([
    nlp.string.lowerCase!,
    nlp.string.removeExtraSpaces!,
    nlp.string.tokenize0!,
    nlp.tokens.removeWords!,
    nlp.tokens.stem!,
  ]);
  for (const chunk of chunks) engine.addDoc({ body: chunk.text }, chunk.chunkId);
  engine.consolidate();
  return (query) => engine.search(query, DEPTH).map(([id]) => id);
}

function questionsOf(file: string, set: Question['set']): Question[] {
  const parsed = JSON.parse(readFileSync(path.join(DATA, file), 'utf8')) as {
    questions: Array<Omit<Question, 'set'>>;
  };
  return parsed.questions.map((q) => ({ ...q, set }));
}

interface AnswererScores {
  answerable: number;
  unanswerable: number;
  answerRate: number;
  abstainedOnAnswerable: number;
  abstainedOnUnanswerable: number;
  meanWords: number;
}

interface Outcome {
  set: Question['set'];
  answerable: boolean;
  right: boolean;
  abstained: boolean;
  words: number;
}

/** Asks a question to `builtin/extractive`: right (quotes the phrase), abstained, how many words. */
async function ask(p: TestPlatform, q: Question, misses: string[]): Promise<Outcome> {
  const res = await ok<{ message: { content: string } }>(p, 'POST', '/api/chat', {
    model: 'builtin/extractive',
    stream: false,
    messages: [{ role: 'user', content: q.q }],
  });
  const content = res.message.content;
  const abstained = content === NOTHING_FOUND || content === NOTHING_FOUND_IN_KNOWLEDGE;
  const body = content.split('\n\nSources:')[0] ?? '';
  const outcome = { set: q.set, answerable: q.answer !== null, right: false, abstained, words: 0 };
  if (q.answer === null) {
    if (!abstained) misses.push(`[${q.set}] answered the unanswerable "${q.q}": ${body.slice(0, 120)}`);
  } else if (abstained) misses.push(`[${q.set}] abstained on "${q.q}"`);
  else {
    outcome.words = body.split(/\s+/).filter(Boolean).length;
    outcome.right = normal(body).includes(normal(q.answer));
    if (!outcome.right) misses.push(`[${q.set}] wrong answer to "${q.q}": ${body.slice(0, 120)}`);
  }
  return outcome;
}

function summary(outcomes: Outcome[]): AnswererScores {
  const answerable = outcomes.filter((o) => o.answerable);
  const unanswerable = outcomes.filter((o) => !o.answerable);
  const answered = answerable.filter((o) => !o.abstained);
  const share = (n: number, of: number) => n / (of || 1);
  return {
    answerable: answerable.length,
    unanswerable: unanswerable.length,
    answerRate: share(answerable.filter((o) => o.right).length, answerable.length),
    abstainedOnAnswerable: share(answerable.length - answered.length, answerable.length),
    abstainedOnUnanswerable: share(unanswerable.filter((o) => o.abstained).length, unanswerable.length),
    meanWords: share(
      answered.reduce((n, o) => n + o.words, 0),
      answered.length,
    ),
  };
}

/** The retrieval settings taken from the environment, to judge values other than the defaults. */
function settings(): Record<string, string> {
  const names = ['DOCUMENT_CHUNK_SIZE', 'DOCUMENT_CHUNK_OVERLAP', 'KNOWLEDGE_VECTOR_WEIGHT'];
  return Object.fromEntries(names.flatMap((n) => (process.env[n] ? [[n, process.env[n]]] : [])));
}

const pct = (x: number) => `${(x * 100).toFixed(1)} %`;
const f3 = (x: number) => x.toFixed(3);

async function main(): Promise<void> {
  const dialect = process.env.EVAL_DIALECT === 'postgres' ? 'postgres' : 'sqlite';
  const questions = [...questionsOf('questions.json', 'tuning'), ...questionsOf('heldout.json', 'held-out')];
  const p = await createTestPlatform({ dialect, env: settings() });
  try {
    const started = performance.now();
    const chunks = await ingest(p);
    const ingestMs = performance.now() - started;
    const answerable = questions.filter((q): q is Question & { answer: string } => q.answer !== null);
    const relevantOf = new Map<string, Set<string>>();
    for (const q of answerable) {
      const phrase = normal(q.answer);
      const relevant = new Set(chunks.filter((c) => normal(c.text).includes(phrase)).map((c) => c.chunkId));
      if (relevant.size === 0) throw new Error(`no chunk holds the answer of "${q.q}": "${q.answer}"`);
      relevantOf.set(q.q, relevant);
    }

    // EVAL_WEIGHTS=keyword,vector tries fusion weights other than the defaults.
    const [kw, vw] = (process.env.EVAL_WEIGHTS ?? '').split(',').map(Number);
    const weights = kw !== undefined && vw !== undefined && vw >= 0 ? { keyword: kw, vector: vw } : null;
    const retrieval: Record<string, Scores> = {};
    for (const mode of MODES) {
      const scores: Scores[] = [];
      for (const q of answerable) {
        const res = await ok<{ results: Array<{ chunkId: string }> }>(p, 'POST', '/api/knowledge/query', {
          query: q.q,
          mode,
          topK: DEPTH,
          topics: ['eval'],
          ...(weights && mode === 'hybrid' ? { weights } : {}),
        });
        scores.push(
          judge(
            res.results.map((r) => r.chunkId),
            relevantOf.get(q.q)!,
          ),
        );
      }
      retrieval[mode] = mean(scores);
    }
    const search = baseline(chunks);
    retrieval['wink-bm25-text-search'] = mean(
      answerable.map((q) => judge(search(q.q), relevantOf.get(q.q)!)),
    );

    const misses: string[] = [];
    const outcomes: Outcome[] = [];
    for (const q of questions) outcomes.push(await ask(p, q, misses));
    const answerer = {
      tuning: summary(outcomes.filter((o) => o.set === 'tuning')),
      'held-out': summary(outcomes.filter((o) => o.set === 'held-out')),
      all: summary(outcomes),
    };
    const unanswerable = questions.length - answerable.length;

    if (process.env.EVAL_JSON) {
      console.log(JSON.stringify({ dialect, chunks: chunks.length, retrieval, answerer }, null, 2));
      return;
    }
    console.log(
      `knowledge eval (${dialect}): ${chunks.length} chunks from ${documents().length} documents ingested in ` +
        `${(ingestMs / 1000).toFixed(1)} s; ${answerable.length} answerable and ${unanswerable} unanswerable questions`,
    );
    console.log('retrieval           nDCG@10  Recall@10  Recall@50  MRR');
    for (const [name, s] of Object.entries(retrieval))
      console.log(
        `${name.padEnd(22)}${f3(s.ndcg10)}    ${f3(s.recall10)}      ${f3(s.recall50)}      ${f3(s.mrr)}`,
      );
    for (const [set, a] of Object.entries(answerer))
      console.log(
        `answerer (builtin/extractive), ${set} questions (${a.answerable} + ${a.unanswerable}): right answers ` +
          `${pct(a.answerRate)} of answerable, abstained on ${pct(a.abstainedOnUnanswerable)} of unanswerable ` +
          `and ${pct(a.abstainedOnAnswerable)} of answerable, ${a.meanWords.toFixed(1)} words per answer on average`,
      );
    if (process.env.EVAL_VERBOSE) for (const miss of misses) console.log(`  - ${miss}`);
  } finally {
    await p.close();
  }
}

/** The public benchmark, against the goals (hybrid nDCG@10 ≥ 0.69, keyword ≥ 0.65, R@50 ≥ 0.88). */
async function beir(dir: string): Promise<void> {
  const dialect = process.env.EVAL_DIALECT === 'postgres' ? 'postgres' : 'sqlite';
  const set = readBeir(dir);
  const p = await createTestPlatform({ dialect, env: settings() });
  try {
    const started = performance.now();
    const ids = await ingestBeir(p, set, 'beir');
    const ingestS = (performance.now() - started) / 1000;
    const scores = await judgeBeir(p, set, ids, 'beir', BEIR_MODES);
    if (process.env.EVAL_JSON) {
      console.log(JSON.stringify({ dialect, dir, documents: set.corpus.length, ingestS, scores }, null, 2));
      return;
    }
    console.log(
      `BEIR set ${path.basename(dir)} (${dialect}): ${set.corpus.length} documents ingested in ${ingestS.toFixed(0)} s, ` +
        `${set.queries.length} judged queries`,
    );
    console.log('mode      nDCG@10  Recall@50');
    for (const [mode, s] of Object.entries(scores))
      console.log(`${mode.padEnd(10)}${f3(s.ndcg10)}    ${f3(s.recall50)}`);
    console.log('goals: hybrid nDCG@10 ≥ 0.69, keyword ≥ 0.65, Recall@50 ≥ 0.88');
  } finally {
    await p.close();
  }
}

const flag = process.argv.findIndex((a) => a === '--beir' || a === '--scifact');
if (flag >= 0) {
  const dir = process.argv[flag + 1];
  if (dir === undefined) throw new Error('--beir needs the directory of a BEIR data set');
  await beir(dir);
} else await main();
