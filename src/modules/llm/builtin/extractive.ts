/**
 * `builtin/extractive`: answers the last user message by quoting the sentence that answers it verbatim,
 * with its source and where it looked. It never generates text and says so when it finds nothing.
 *
 * Where it looks, in this order:
 * - the request's `grounding` when the caller retrieved already (a rag flow, an agent: the question is
 *   then the grounding's, not the templated prompt);
 * - the conversation itself when it carries context (any message besides the question: a system
 *   message, earlier turns), sourced `message N` (N = the message's index in `messages`);
 * - the knowledge base (the registered retriever, when the request names an account) when the
 *   conversation carries no context, or when the request asks for it (Ollama `options.knowledge_base:
 *   true`, or a question that names the "knowledge base") — then only there;
 * - a lone message that holds its own context (its last sentence asks, the ones before answer).
 *
 * Each sentence is scored by how much of the question it covers — the question's content words
 * (stemmed), weighted by their BM25 idf over the candidates (a word that no candidate holds as a rare
 * one); words of the sentence's Markdown heading and of its neighbours count half — blended with the
 * cosine of its hashed n-gram embedding and, for retrieved passages, the passage's rank, less a small
 * penalty per word beyond 20 (the smallest sentence that answers wins over a list that holds the same
 * words); a "how long / much / many" question favours a sentence that states a number. Number words are
 * read as digits ("a hundred" matches "100"), and "take"/"last" after "how long" only ask the measure.
 * Headings are never quoted, nor the half sentences a retrieved chunk starts or ends with (the chunker
 * cuts hard-wrapped text between lines). It abstains when the best sentence covers less than
 * `MIN_COVERAGE` of the question (a question whose telling word appears nowhere is not answered by a
 * sentence that shares its common ones). It quotes the best sentence, and up to two more of the same
 * source only when they cover question words the quoted ones lack (a question in two parts).
 *
 * Answer text (the README documents it):
 *
 *     <sentence 1> <sentence 2>
 *
 *     Sources: message 1 (from the conversation)
 *
 * (`from the knowledge base`, `from the retrieved passages`), or, when nothing answers, `NOTHING_FOUND`
 * (`NOTHING_FOUND_IN_KNOWLEDGE` when it searched the knowledge base).
 *
 * With `format` (`json` or a schema) the answer is the JSON object `{"answer": "…", "sources": […],
 * "from": "conversation" | "knowledge base" | "retrieved passages"}`, so JSON-mode clients get valid
 * JSON (a schema cannot be followed beyond that). `tools` are ignored: this model cannot decide to call
 * a tool. The answer streams as one delta per sentence, then the sources, then `done` with estimated
 * usage; `options.maxTokens` cuts the text answer (`doneReason: 'length'`).
 *
 * Work is bounded: at most 2,000 candidate sentences and 200,000 characters are considered (and the last
 * 10,000 characters of a lone message for its question). The provider runs that work (`answerQuotes`) in
 * a CPU worker when the conversation is large; retrieval stays on the main thread (it is I/O).
 */

import { stemmer as englishStem } from '@orama/stemmers/english';
import type { ChatEvent, ChatMessage, ChatRequest, Passage, Retriever } from '../types.js';
import { UpstreamError } from '../types.js';
import { cosine, embedHashedNgrams, wordTokens } from './hashed-ngrams.js';
import { cutAtStop } from './sampling.js';
import { cutEdges, splitSentences } from './sentences.js';
import { estimateTokens } from './tokens.js';

export const NOTHING_FOUND =
  'I found nothing in the provided context that answers this. (builtin/extractive quotes passages; it does not generate text.)';
export const NOTHING_FOUND_IN_KNOWLEDGE =
  'I found nothing in the knowledge base that answers this. (builtin/extractive quotes passages; it does not generate text.)';

export const MAX_CANDIDATES = 2_000;
export const MAX_CONTEXT_CHARS = 200_000;
/** Where a lone huge message's question (its last sentence) is looked for. */
const QUESTION_TAIL_CHARS = 10_000;
/**
 * A message longer than this is not searched whole: the knowledge base reads a query's first 4,000
 * characters, so a long message's question (its last sentence) is what is searched and scored.
 */
const MAX_SEARCH_CHARS = 4_000;
const MAX_QUOTED = 3;
const RETRIEVER_LIMIT = 8;
/**
 * The knowledge base's text it reads: the best passages while they fit (the first always). Eight
 * chunks of the old default 1,000 characters, four of today's 2,000: larger chunks do not widen the
 * field of sentences that may be quoted (each one more is one more chance of a lexically close
 * sentence that does not answer).
 */
const RETRIEVED_CHARS = 8_000;
/** A sentence's score: Σ weight × (covered share of the question, embedding cosine, passage prior). */
const COVERAGE_WEIGHT = 0.6;
const SIMILARITY_WEIGHT = 0.2;
/** Weight of the passage's retrieval rank (`1/√rank`): a tie between sentences goes to the better passage. */
const PRIOR_WEIGHT = 0.2;
/** A word of the sentence's heading or neighbours counts this much of a word of the sentence. */
const NEAR_WEIGHT = 0.5;
/**
 * The best sentence must cover at least this share of the question's idf weight, else it abstains:
 * measured on `npm run eval:knowledge` (docs/decisions.md has the figures).
 */
export const MIN_COVERAGE = 0.4;
/**
 * Words a sentence may have before its length costs it (`LENGTH_PENALTY_PER_WORD` each, at most the
 * max): a 38-word list item of the first passage no longer ties a 10-word answer of the second
 * (0.0035 to 0.0045 gave the same answers on `npm run eval:knowledge`, 0.003 missed it, 0.005 another).
 */
const FREE_WORDS = 20;
const LENGTH_PENALTY_PER_WORD = 0.004;
const MAX_LENGTH_PENALTY = 0.15;
/** A quoted sentence scores at least this. */
const MIN_SCORE = 0.2;
/** A further sentence is quoted only when it scores at least this share of the best one. */
const MIN_SHARE_OF_BEST = 0.5;

/** Common English function words: they match everything, so they do not count as overlap. */
const STOPWORDS = new Set(
  (
    'a an and are as at be been but by can could did do does for from had has have how i if in into is it ' +
    'its me my of on or our please should so than that the their them then there these they this those to ' +
    'tell us was we were what when where which who whom whose why will with would you your about any some ' +
    // Pieces of contractions and possessives (`tower's`, `don't`, `we'll`).
    's t d ll re ve m'
  ).split(' '),
);

/** Asking for the knowledge base in so many words ("search the knowledge base for …"). */
const ASKS_FOR_KNOWLEDGE = /\bknowledge[\s-]?base\b/i;
/** The asking itself, taken out of the question before it is scored: it is not what is asked about. */
const ASKING_PHRASE =
  /\b(?:(?:search|look(?:\s+it\s+up)?|check|use|ask)\s+)?(?:(?:in|from|on)\s+)?(?:the\s+|your\s+|our\s+|my\s+)?knowledge[\s-]?base\b/gi;
/** "How long", "how many": the measure asked for, which the answer states as a number, not a word. */
const HOW_MEASURE = /\bhow\s+(?:long|much|many|often|far|big|large|old|soon|early|late)\b/gi;
/** "How long does it take / last": the verb only asks the measure. */
const HOW_LONG = /\bhow\s+long\b/i;
const DURATION_VERBS = new Set(['take', 'last']);
/** Number words, read as the digits documents write ("a hundred percent" → 100, "one hour" → 1). */
const NUMBER_WORDS = new Map(
  (
    'zero:0 one:1 two:2 three:3 four:4 five:5 six:6 seven:7 eight:8 nine:9 ten:10 eleven:11 twelve:12 ' +
    'fifteen:15 twenty:20 thirty:30 forty:40 fifty:50 sixty:60 hundred:100 thousand:1000 dozen:12'
  )
    .split(' ')
    .map((pair) => pair.split(':') as [string, string]),
);
/**
 * A "how long / much / many" question is answered by a sentence that states a number: enough to pass a
 * shorter sentence of the same words that states none ("You do not need to return the broken candle."
 * for "How long do I have to report a broken candle?"). On `npm run eval:knowledge` every value from
 * 0.12 to 0.2 gave the same answers (0.08 missed that held-out question).
 */
const MEASURE_BONUS = 0.15;
/** A Markdown ATX heading line (`# Shipping`, `## Manifest cache`). */
const HEADING = /^#{1,6}\s+/;

/** Where the quotes come from (said in the answer). */
export type AnswerOrigin = 'conversation' | 'knowledge base' | 'retrieved passages';

export interface ExtractiveContext {
  /** The knowledge base's retriever, if one is registered. */
  retriever: Retriever | null;
  /** The caller's account; the retriever is used only when it is known. */
  accountId: string | null;
}

interface Quote {
  text: string;
  source: string;
}

/** A passage to quote from; `rank` is how well retrieval ranked it (1 the best, absent: unranked). */
interface Source extends Quote {
  rank?: number;
}

interface Candidate extends Quote {
  order: number;
  /** Retrieval's confidence in the sentence's passage, in [0, 1] (1 when unranked). */
  prior: number;
  terms: Set<string>;
  /** The sentence states a number (digits or a number word). */
  numeric: boolean;
  /** Stems of the Markdown heading the sentence stands under and of its neighbours in the same text. */
  near: Set<string>;
  /** Words, for the length penalty. */
  words: number;
  /** A piece of a sentence at the edge of a retrieved chunk: context for its neighbours, never quoted. */
  fragment: boolean;
  score: number;
  coverage: number;
}

/** What the CPU part of an answer needs: the conversation, and the passages retrieval found (if any). */
export interface AnswerInput {
  /** Role and text only: images and tool calls stay on the main thread. */
  messages: Array<{ role: ChatMessage['role']; content: string }>;
  queryIndex: number;
  /** The knowledge base's passages, best first (null: it was not searched). */
  passages: Source[] | null;
  /** The request asked for the knowledge base: the conversation is not read. */
  askedForKnowledge?: boolean;
  grounding: { question: string; passages: Source[] } | null;
}

export interface AnswerOutput {
  quotes: Quote[];
  promptTokens: number;
  /** Where it looked last (where the quotes come from, or where it found nothing). */
  origin: AnswerOrigin;
}

/**
 * Runs `answerQuotes` somewhere: inline (small inputs, unit tests) or in a CPU worker, where a large
 * conversation costs that thread, never the event loop.
 */
export type AnswerRunner = (input: AnswerInput, signal: AbortSignal) => Promise<AnswerOutput>;

export const answerInline: AnswerRunner = async (input, signal) => {
  throwIfAborted(signal);
  return answerQuotes(input);
};

/** Streams the extractive answer to the request's last user message. */
export async function extractiveChat(
  request: ChatRequest,
  context: ExtractiveContext,
  signal: AbortSignal,
  run: AnswerRunner = answerInline,
): Promise<AsyncIterable<ChatEvent>> {
  throwIfAborted(signal);
  const queryIndex = lastUserIndex(request.messages);
  const query = queryIndex >= 0 ? request.messages[queryIndex]!.content : '';
  const asked = asksForKnowledge(request, query);
  const searchKnowledge =
    !request.grounding && query.trim() !== '' && (asked || !carriesContext(request.messages, queryIndex));
  const passages = searchKnowledge ? await retrieve(searchedQuestion(query), context, signal) : null;
  const { quotes, promptTokens, origin } = await run(
    {
      messages: request.messages.map((m) => ({ role: m.role, content: m.content })),
      queryIndex,
      passages,
      askedForKnowledge: asked && passages !== null,
      grounding: request.grounding
        ? {
            question: request.grounding.question,
            passages: ranked(request.grounding.passages),
          }
        : null,
    },
    signal,
  );
  throwIfAborted(signal);
  const { chunks, doneReason } =
    request.format === undefined
      ? textChunks(quotes, origin, request.options.maxTokens, request.options.stop)
      : { chunks: jsonChunks(quotes, origin), doneReason: 'stop' };
  return stream(chunks, doneReason, promptTokens, signal);
}

/** Ollama's `options.knowledge_base: true`, or a question that names the knowledge base. */
function asksForKnowledge(request: ChatRequest, query: string): boolean {
  return request.options.extra?.knowledge_base === true || ASKS_FOR_KNOWLEDGE.test(query.slice(0, 10_000));
}

/** Whether any message besides the question has text to answer from. */
function carriesContext(messages: ChatMessage[], queryIndex: number): boolean {
  return messages.some((m, i) => i !== queryIndex && m.content.trim() !== '');
}

/** The knowledge base's passages for the query, when there is a retriever and an account. */
async function retrieve(
  query: string,
  context: ExtractiveContext,
  signal: AbortSignal,
): Promise<Source[] | null> {
  if (!context.retriever || context.accountId === null) return null;
  try {
    const passages: Passage[] = await context.retriever.retrieve(query, {
      accountId: context.accountId,
      limit: RETRIEVER_LIMIT,
      signal,
    });
    let chars = 0;
    const read = passages.filter((p, i) => {
      chars += p.text.length;
      return i === 0 || chars <= RETRIEVED_CHARS;
    });
    return ranked(read);
  } catch (error) {
    throwIfAborted(signal);
    throw new UpstreamError(`builtin/extractive: retrieval failed: ${(error as Error).message}`, true, 503);
  }
}

/** Passages with their rank by retrieval score (the retriever's order when scores tie). */
function ranked(passages: Passage[]): Source[] {
  const order = passages.map((p, i) => ({ p, i })).sort((a, b) => b.p.score - a.p.score || a.i - b.i);
  const rank = new Map(order.map(({ i }, r) => [i, r + 1]));
  return passages.map((p, i) => ({ text: p.text, source: p.source, rank: rank.get(i)! }));
}

/** The quotes that answer the conversation, and its estimated prompt tokens: pure CPU, no I/O. */
export function answerQuotes(input: AnswerInput): AnswerOutput {
  const { messages, queryIndex } = input;
  const promptTokens = messages.reduce((sum, m) => sum + estimateTokens(m.content), 0);
  const query = queryIndex >= 0 ? (messages[queryIndex]?.content ?? '') : '';
  if (input.grounding)
    return { quotes: groundedQuotes(input.grounding), promptTokens, origin: 'retrieved passages' };
  if (query.trim() === '') return { quotes: [], promptTokens, origin: 'conversation' };
  if (input.passages !== null) {
    const quotes = rank(searchedQuestion(query), candidatesFrom(input.passages));
    // Asked for the knowledge base: its silence is the answer. Else a lone message may hold its own.
    if (quotes.length > 0 || input.askedForKnowledge)
      return { quotes, promptTokens, origin: 'knowledge base' };
    const own = conversationQuotes(query, queryIndex, messages);
    return { quotes: own, promptTokens, origin: own.length > 0 ? 'conversation' : 'knowledge base' };
  }
  return { quotes: conversationQuotes(query, queryIndex, messages), promptTokens, origin: 'conversation' };
}

/** What the knowledge base is asked: the message, or a long one's last sentence (read from its tail). */
function searchedQuestion(query: string): string {
  if (query.length <= MAX_SEARCH_CHARS) return query;
  return splitSentences(query.slice(-QUESTION_TAIL_CHARS)).at(-1)?.slice(-MAX_SEARCH_CHARS) ?? '';
}

/** The sentences of the conversation that answer `query` (empty when none does). */
function conversationQuotes(query: string, queryIndex: number, messages: AnswerInput['messages']): Quote[] {
  const texts = messages.flatMap((m, index) =>
    index === queryIndex ? [] : [{ text: m.content, source: `message ${index}`, role: m.role }],
  );
  const candidates = candidatesFrom(texts);
  if (candidates.length > 0) return rank(query, candidates);
  // A lone message holds its own context: its last sentence asks, the ones before answer (a
  // completion forwarded by a workflow arrives like this). Only the context's first characters are
  // read, and the question is looked for in the message's tail: a huge message costs no more.
  const tail = query.length > MAX_CONTEXT_CHARS + QUESTION_TAIL_CHARS;
  const head = splitSentences(tail ? query.slice(0, MAX_CONTEXT_CHARS) : query);
  const last = tail ? splitSentences(query.slice(-QUESTION_TAIL_CHARS)).at(-1) : head.at(-1);
  const context = tail ? head : head.slice(0, -1);
  if (last === undefined || context.length === 0) return [];
  return rank(last, candidatesFrom([{ text: context.join('\n'), source: `message ${queryIndex}` }]));
}

/** The caller retrieved already: its passages are the only candidates, its question the query. */
function groundedQuotes(grounding: NonNullable<AnswerInput['grounding']>): Quote[] {
  if (grounding.question.trim() === '') return [];
  return rank(grounding.question, candidatesFrom(grounding.passages));
}

/** Stems seen lately: a conversation repeats its words, and stemming is most of the scoring's cost. */
const stemCache = new Map<string, string>();

/** The English stem of a word ("shipping", "ships" → "ship"); numbers and long tokens as they are. */
function stem(word: string): string {
  const number = NUMBER_WORDS.get(word);
  if (number !== undefined) return number;
  if (word.length > 40 || /\p{N}/u.test(word)) return word;
  let out = stemCache.get(word);
  if (out === undefined) {
    out = englishStem(word);
    if (stemCache.size >= 20_000) stemCache.clear();
    stemCache.set(word, out);
  }
  return out;
}

/** Stems of a text's words (stop words kept: the caller drops them where they matter). */
function stems(text: string): string[] {
  return wordTokens(text).map(stem);
}

/** The content stems of a question: its words less the function words and the asking, stemmed. */
function questionTerms(question: string): string[] {
  // Only the words the embedder reads are looked at: a huge question costs no more.
  const head = question.slice(0, QUESTION_TAIL_CHARS);
  const asked = head.replace(ASKING_PHRASE, ' ').replace(HOW_MEASURE, ' ');
  const duration = HOW_LONG.test(head);
  return [
    ...new Set(
      wordTokens(asked)
        .filter((w) => !STOPWORDS.has(w))
        .map(stem)
        .filter((t) => !(duration && DURATION_VERBS.has(t))),
    ),
  ];
}

function candidatesFrom(texts: (Source & { role?: ChatMessage['role'] })[]): Candidate[] {
  const candidates: Candidate[] = [];
  const seen = new Set<string>();
  let chars = 0;
  for (const { text, source, role, rank } of texts) {
    // The first passages are the likeliest to answer (retrieval's MRR is ~0.9 on the eval set).
    const prior = rank === undefined ? 1 : 1 / Math.sqrt(rank);
    let heading: string[] = [];
    const first = candidates.length;
    const read = text.slice(0, MAX_CONTEXT_CHARS - chars);
    // A retrieved passage is a chunk of a longer text, cut where the chunker found room: its first and
    // last sentences may be halves.
    const cut = rank === undefined ? { start: false, end: false } : cutEdges(read);
    const sentences = splitSentences(read);
    for (const [index, sentence] of sentences.entries()) {
      // A heading is never an answer: it names what the sentences under it are about.
      if (HEADING.test(sentence)) {
        heading = stems(sentence);
        continue;
      }
      // The sources line of an earlier extractive answer is not content.
      if (role === 'assistant' && sentence.startsWith('Sources: ')) continue;
      if (seen.has(sentence)) continue;
      seen.add(sentence);
      chars += sentence.length;
      const terms = new Set(stems(sentence));
      candidates.push({
        text: sentence,
        source,
        order: candidates.length,
        prior,
        terms,
        numeric: [...terms].some((t) => /^\p{N}/u.test(t)),
        near: new Set(heading),
        words: sentence.split(/\s+/).length,
        fragment: (index === 0 && cut.start) || (index === sentences.length - 1 && cut.end),
        score: 0,
        coverage: 0,
      });
      if (candidates.length >= MAX_CANDIDATES || chars >= MAX_CONTEXT_CHARS) break;
    }
    // The sentences before and after, in the same text, are context too ("It" after "The tower").
    for (let i = first; i < candidates.length; i++) {
      for (const j of [i - 1, i + 1]) {
        if (j < first || j >= candidates.length) continue;
        for (const term of candidates[j]!.terms) candidates[i]!.near.add(term);
      }
    }
    if (candidates.length >= MAX_CANDIDATES || chars >= MAX_CONTEXT_CHARS) break;
  }
  return candidates;
}

function rank(query: string, candidates: Candidate[]): Quote[] {
  if (candidates.length === 0) return [];
  // A question of function words only ("what is it?") has nothing to look for.
  const terms = questionTerms(query);
  if (terms.length === 0) return [];

  // BM25's idf over the candidate sentences: a word in every sentence tells nothing about which to
  // quote. A word that none holds counts as a rare one (as if one sentence had it): the question may
  // ask about something not there ("Canada"), or just phrase it its own way ("get").
  const n = candidates.length;
  const idf = terms.map((term) => {
    let df = 0;
    for (const c of candidates) if (c.terms.has(term)) df++;
    return Math.log(1 + (n - Math.max(df, 1) + 0.5) / (Math.max(df, 1) + 0.5));
  });
  const idfTotal = idf.reduce((a, b) => a + b, 0);
  const queryVector = embedHashedNgrams(query);
  const head = query.slice(0, QUESTION_TAIL_CHARS);
  const measure = new RegExp(HOW_MEASURE.source, 'i').test(head);

  for (const candidate of candidates) {
    let covered = 0;
    let inSentence = false;
    for (let t = 0; t < terms.length; t++) {
      if (candidate.terms.has(terms[t]!)) {
        covered += idf[t]!;
        inSentence = true;
      } else if (candidate.near.has(terms[t]!)) covered += NEAR_WEIGHT * idf[t]!;
    }
    if (!inSentence) continue;
    const similarity = Math.max(0, cosine(queryVector, embedHashedNgrams(candidate.text)));
    candidate.coverage = covered / idfTotal;
    candidate.score =
      COVERAGE_WEIGHT * candidate.coverage +
      SIMILARITY_WEIGHT * similarity +
      PRIOR_WEIGHT * candidate.prior +
      (measure && candidate.numeric ? MEASURE_BONUS : 0) -
      lengthPenalty(candidate.words);
  }

  const ordered = candidates
    .filter((c) => c.score >= MIN_SCORE && !c.fragment)
    .sort((a, b) => b.score - a.score || a.order - b.order);
  const best = ordered[0];
  if (best === undefined || best.coverage < MIN_COVERAGE) return [];
  // The smallest answer: the best sentence, and others of its source only for question words it lacks.
  const quoted = [best];
  const has = new Set(terms.filter((t) => best.terms.has(t)));
  for (const c of ordered.slice(1)) {
    if (quoted.length >= MAX_QUOTED || c.score < best.score * MIN_SHARE_OF_BEST) break;
    if (c.source !== best.source) continue;
    const adds = terms.filter((t) => c.terms.has(t) && !has.has(t));
    if (adds.length === 0) continue;
    quoted.push(c);
    for (const t of adds) has.add(t);
  }
  return quoted.sort((a, b) => a.order - b.order).map(({ text, source }) => ({ text, source }));
}

/** The smallest sentence that answers: a long one (a list run together, a table row) pays for its length. */
function lengthPenalty(words: number): number {
  return Math.min(MAX_LENGTH_PENALTY, LENGTH_PENALTY_PER_WORD * Math.max(0, words - FREE_WORDS));
}

function nothingFound(origin: AnswerOrigin): string {
  return origin === 'knowledge base' ? NOTHING_FOUND_IN_KNOWLEDGE : NOTHING_FOUND;
}

/** Distinct sources of the quotes, in order of first appearance. */
function sourcesOf(quotes: Quote[]): string[] {
  return [...new Set(quotes.map((q) => q.source))];
}

function textChunks(
  quotes: Quote[],
  origin: AnswerOrigin,
  maxTokens: number | undefined,
  stop: readonly string[] | undefined,
): { chunks: string[]; doneReason: string } {
  const whole =
    quotes.length === 0
      ? [nothingFound(origin)]
      : [
          ...quotes.map((q, i) => (i < quotes.length - 1 ? `${q.text} ` : q.text)),
          `\n\nSources: ${sourcesOf(quotes).join(', ')} (from the ${origin})`,
        ];
  const { chunks } = cutAtStop(whole, stop);
  if (maxTokens === undefined || maxTokens <= 0) return { chunks, doneReason: 'stop' };
  const kept: string[] = [];
  let text = '';
  for (const chunk of chunks) {
    if (estimateTokens(text + chunk) > maxTokens) {
      // Whole sentences when one fits, else the first one cut at about four characters a token.
      if (kept.length === 0) kept.push(chunk.slice(0, maxTokens * 4));
      return { chunks: kept, doneReason: 'length' };
    }
    kept.push(chunk);
    text += chunk;
  }
  return { chunks: kept, doneReason: 'stop' };
}

/** The JSON answer in a few pieces whose concatenation is the JSON text. */
function jsonChunks(quotes: Quote[], origin: AnswerOrigin): string[] {
  const answer = quotes.length === 0 ? nothingFound(origin) : quotes.map((q) => q.text).join(' ');
  const json = JSON.stringify({ answer, sources: sourcesOf(quotes), from: origin });
  const size = Math.max(1, Math.ceil(json.length / 3));
  const chunks: string[] = [];
  for (let i = 0; i < json.length; i += size) chunks.push(json.slice(i, i + size));
  return chunks;
}

async function* stream(
  chunks: string[],
  doneReason: string,
  promptTokens: number,
  signal: AbortSignal,
): AsyncGenerator<ChatEvent> {
  let emitted = '';
  for (const content of chunks) {
    if (signal.aborted) return;
    emitted += content;
    yield { type: 'delta', content };
  }
  if (signal.aborted) return;
  const usage = { promptTokens, completionTokens: estimateTokens(emitted), estimated: true };
  yield { type: 'done', doneReason, usage };
}

function lastUserIndex(messages: ChatMessage[]): number {
  for (let i = messages.length - 1; i >= 0; i--) if (messages[i]!.role === 'user') return i;
  return -1;
}

function throwIfAborted(signal: AbortSignal): void {
  if (signal.aborted) throw signal.reason ?? new DOMException('The operation was aborted.', 'AbortError');
}
