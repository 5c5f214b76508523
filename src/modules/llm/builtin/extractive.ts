/**
 * `builtin/extractive`: answers the last user message by quoting the best-matching sentences verbatim,
 * with their sources. It never generates text and says so when it finds nothing.
 *
 * Passages come from the request's `grounding` when the caller retrieved them (a rag flow, an agent:
 * the question is then the grounding's, not the templated prompt); else from the registered retriever
 * (the knowledge base) when there is one and the request names its account; when there is none, or it finds nothing, from the conversation itself: every other
 * message (system, earlier user/assistant/tool turns) split into sentences, sourced `message N` (N = the
 * message's index in `messages`). Each sentence is scored by the cosine of its hashed n-gram embedding
 * with the question's, blended with the question's content words it contains, weighted by their BM25 idf
 * over the candidates. Sentences that share no content word with the question, or score under an
 * absolute or relative threshold, are dropped; the best three are quoted in their original order.
 *
 * Answer text (the README documents it):
 *
 *     <sentence 1> <sentence 2> <sentence 3>
 *
 *     Sources: message 1, message 3
 *
 * or, when nothing scores:
 *
 *     I found nothing in the provided context that answers this. (builtin/extractive quotes passages; it
 *     does not generate text.)
 *
 * With `format` (`json` or a schema) the answer is the JSON object `{"answer": "…", "sources": […]}`, so
 * JSON-mode clients get valid JSON (a schema cannot be followed beyond that). `tools` are ignored: this
 * model cannot decide to call a tool. The answer streams as one delta per sentence, then the sources,
 * then `done` with estimated usage; `options.maxTokens` cuts the text answer (`doneReason: 'length'`).
 *
 * Work is bounded: at most 2,000 candidate sentences and 200,000 characters are considered (and the last
 * 10,000 characters of a lone message for its question). The provider runs that work (`answerQuotes`) in
 * a CPU worker when the conversation is large; retrieval stays on the main thread (it is I/O).
 */
import type { ChatEvent, ChatMessage, ChatRequest, Passage, Retriever } from '../types.js';
import { UpstreamError } from '../types.js';
import { cosine, embedHashedNgrams, wordTokens } from './hashed-ngrams.js';
import { splitSentences } from './sentences.js';
import { estimateTokens } from './tokens.js';

export const NOTHING_FOUND =
  'I found nothing in the provided context that answers this. (builtin/extractive quotes passages; it does not generate text.)';

export const MAX_CANDIDATES = 2_000;
export const MAX_CONTEXT_CHARS = 200_000;
/** Where a lone huge message's question (its last sentence) is looked for. */
const QUESTION_TAIL_CHARS = 10_000;
const MAX_QUOTED = 3;
const RETRIEVER_LIMIT = 8;
/** Weight of word overlap against embedding cosine in a sentence's score. */
const OVERLAP_WEIGHT = 0.6;
/** A quoted sentence scores at least this, and at least this share of the best sentence's score. */
const MIN_SCORE = 0.2;
const MIN_SHARE_OF_BEST = 0.55;

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

interface Candidate extends Quote {
  order: number;
  terms: Set<string>;
  score: number;
}

/** What the CPU part of an answer needs: the conversation, and the passages retrieval found (if any). */
export interface AnswerInput {
  /** Role and text only: images and tool calls stay on the main thread. */
  messages: Array<{ role: ChatMessage['role']; content: string }>;
  queryIndex: number;
  /** The retriever's passages (null: no retriever, or no account). */
  passages: Quote[] | null;
  grounding: { question: string; passages: Quote[] } | null;
}

export interface AnswerOutput {
  quotes: Quote[];
  promptTokens: number;
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
  const passages = request.grounding || query.trim() === '' ? null : await retrieve(query, context, signal);
  const { quotes, promptTokens } = await run(
    {
      messages: request.messages.map((m) => ({ role: m.role, content: m.content })),
      queryIndex,
      passages,
      grounding: request.grounding
        ? {
            question: request.grounding.question,
            passages: request.grounding.passages.map((p) => ({ text: p.text, source: p.source })),
          }
        : null,
    },
    signal,
  );
  throwIfAborted(signal);
  const { chunks, doneReason } =
    request.format === undefined
      ? textChunks(quotes, request.options.maxTokens)
      : { chunks: jsonChunks(quotes), doneReason: 'stop' };
  return stream(chunks, doneReason, promptTokens, signal);
}

/** The knowledge base's passages for the query, when there is a retriever and an account. */
async function retrieve(
  query: string,
  context: ExtractiveContext,
  signal: AbortSignal,
): Promise<Quote[] | null> {
  if (!context.retriever || context.accountId === null) return null;
  try {
    const passages: Passage[] = await context.retriever.retrieve(query, {
      accountId: context.accountId,
      limit: RETRIEVER_LIMIT,
      signal,
    });
    return passages.map((p) => ({ text: p.text, source: p.source }));
  } catch (error) {
    throwIfAborted(signal);
    throw new UpstreamError(`builtin/extractive: retrieval failed: ${(error as Error).message}`, true, 503);
  }
}

/** The quotes that answer the conversation, and its estimated prompt tokens: pure CPU, no I/O. */
export function answerQuotes(input: AnswerInput): AnswerOutput {
  const { messages, queryIndex } = input;
  const promptTokens = messages.reduce((sum, m) => sum + estimateTokens(m.content), 0);
  const query = queryIndex >= 0 ? (messages[queryIndex]?.content ?? '') : '';
  if (input.grounding) return { quotes: groundedQuotes(input.grounding), promptTokens };
  if (query.trim() === '') return { quotes: [], promptTokens };
  return { quotes: findQuotes(query, queryIndex, messages, input.passages), promptTokens };
}

/** The sentences that answer `query` best, in their original order (empty when nothing does). */
function findQuotes(
  query: string,
  queryIndex: number,
  messages: AnswerInput['messages'],
  passages: Quote[] | null,
): Quote[] {
  let candidates: Candidate[] = passages ? candidatesFrom(passages) : [];
  let question = query;
  if (candidates.length === 0) {
    const texts = messages.flatMap((m, index) =>
      index === queryIndex ? [] : [{ text: m.content, source: `message ${index}`, role: m.role }],
    );
    candidates = candidatesFrom(texts);
  }
  if (candidates.length === 0) {
    // A lone message holds its own context: its last sentence asks, the ones before answer (a
    // completion forwarded by a workflow arrives like this). Only the context's first characters are
    // read, and the question is looked for in the message's tail: a huge message costs no more.
    const tail = query.length > MAX_CONTEXT_CHARS + QUESTION_TAIL_CHARS;
    const head = splitSentences(tail ? query.slice(0, MAX_CONTEXT_CHARS) : query);
    const last = tail ? splitSentences(query.slice(-QUESTION_TAIL_CHARS)).at(-1) : head.at(-1);
    const context = tail ? head : head.slice(0, -1);
    if (last !== undefined && context.length > 0) {
      question = last;
      candidates = candidatesFrom([{ text: context.join(' '), source: `message ${queryIndex}` }]);
    }
  }
  return rank(question, candidates);
}

/** The caller retrieved already: its passages are the only candidates, its question the query. */
function groundedQuotes(grounding: NonNullable<AnswerInput['grounding']>): Quote[] {
  if (grounding.question.trim() === '') return [];
  return rank(grounding.question, candidatesFrom(grounding.passages));
}

function candidatesFrom(texts: { text: string; source: string; role?: ChatMessage['role'] }[]): Candidate[] {
  const candidates: Candidate[] = [];
  const seen = new Set<string>();
  let chars = 0;
  for (const { text, source, role } of texts) {
    for (const sentence of splitSentences(text.slice(0, MAX_CONTEXT_CHARS - chars))) {
      // The sources line of an earlier extractive answer is not content.
      if (role === 'assistant' && sentence.startsWith('Sources: ')) continue;
      if (seen.has(sentence)) continue;
      seen.add(sentence);
      chars += sentence.length;
      candidates.push({
        text: sentence,
        source,
        order: candidates.length,
        terms: new Set(wordTokens(sentence)),
        score: 0,
      });
      if (candidates.length >= MAX_CANDIDATES || chars >= MAX_CONTEXT_CHARS) return candidates;
    }
  }
  return candidates;
}

function rank(query: string, candidates: Candidate[]): Quote[] {
  if (candidates.length === 0) return [];
  // A question of function words only ("what is it?") has nothing to look for.
  const terms = [...new Set(wordTokens(query))].filter((w) => !STOPWORDS.has(w));
  if (terms.length === 0) return [];

  // BM25's idf over the candidate sentences: a word in every sentence tells nothing about which to quote.
  const n = candidates.length;
  const idf = terms.map((term) => {
    let df = 0;
    for (const c of candidates) if (c.terms.has(term)) df++;
    // A word the context never uses counts as if one sentence had it: otherwise every question
    // word the context lacks would outweigh the ones it answers.
    return Math.log(1 + (n - Math.max(df, 1) + 0.5) / (Math.max(df, 1) + 0.5));
  });
  const idfTotal = idf.reduce((a, b) => a + b, 0);
  const queryVector = embedHashedNgrams(query);

  for (let i = 0; i < candidates.length; i++) {
    const candidate = candidates[i]!;
    let shared = 0;
    for (let t = 0; t < terms.length; t++) if (candidate.terms.has(terms[t]!)) shared += idf[t]!;
    if (shared === 0) continue;
    const similarity = Math.max(0, cosine(queryVector, embedHashedNgrams(candidate.text)));
    candidate.score = OVERLAP_WEIGHT * (shared / idfTotal) + (1 - OVERLAP_WEIGHT) * similarity;
  }

  const best = candidates
    .filter((c) => c.score >= MIN_SCORE)
    .sort((a, b) => b.score - a.score || a.order - b.order)
    .slice(0, MAX_QUOTED);
  const top = best[0]?.score ?? 0;
  return best
    .filter((c) => c.score >= top * MIN_SHARE_OF_BEST)
    .sort((a, b) => a.order - b.order)
    .map(({ text, source }) => ({ text, source }));
}

/** Distinct sources of the quotes, in order of first appearance. */
function sourcesOf(quotes: Quote[]): string[] {
  return [...new Set(quotes.map((q) => q.source))];
}

function textChunks(
  quotes: Quote[],
  maxTokens: number | undefined,
): { chunks: string[]; doneReason: string } {
  const chunks =
    quotes.length === 0
      ? [NOTHING_FOUND]
      : [
          ...quotes.map((q, i) => (i < quotes.length - 1 ? `${q.text} ` : q.text)),
          `\n\nSources: ${sourcesOf(quotes).join(', ')}`,
        ];
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
function jsonChunks(quotes: Quote[]): string[] {
  const answer = quotes.length === 0 ? NOTHING_FOUND : quotes.map((q) => q.text).join(' ');
  const json = JSON.stringify({ answer, sources: sourcesOf(quotes) });
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
