/**
 * The `builtin` provider: models that work with no server and no download. Names say what they are:
 * two embedders (`hashed-ngrams`, lexical and instant, the default; `use-lite`, semantic, optional
 * packages, loaded on first use) and an extractive answerer (`extractive`) that quotes, never generates.
 */

import { type CpuPool, CpuTaskError, cpuTask } from '../../../core/cpu/index.js';
import { openAiOnlyMessageField } from '../providers/message-fields.js';
import type {
  ChatEvent,
  ChatProvider,
  ChatRequest,
  EmbedRequest,
  EmbedResult,
  ModelEntry,
  ModelKind,
  Retriever,
  Unsupported,
} from '../types.js';
import { UpstreamError } from '../types.js';
import type { embedHashed } from './builtin-tasks.js';
import {
  type AnswerInput,
  type AnswerOutput,
  type AnswerRunner,
  answerInline,
  extractiveChat,
} from './extractive.js';
import { embedHashedNgrams, HASHED_NGRAMS_DIMENSIONS } from './hashed-ngrams.js';
import { schemaRefusal, validated } from './json-format.js';
import { embedOptionRefusal, samplingRefusal } from './sampling.js';
import { USE_LITE_DIMENSIONS, UseLiteEmbedder, type UseLiteOptions } from './use-lite.js';

interface BuiltinModel {
  /** The `upstreamModel` of a registry entry on the `builtin` provider. */
  upstreamModel: 'hashed-ngrams' | 'use-lite' | 'extractive';
  kind: ModelKind;
  dimensions?: number;
}

/** What the registry can list by default (as `builtin/<upstreamModel>`). */
const BUILTIN_MODELS: readonly BuiltinModel[] = [
  { upstreamModel: 'hashed-ngrams', kind: 'embedding', dimensions: HASHED_NGRAMS_DIMENSIONS },
  { upstreamModel: 'use-lite', kind: 'embedding', dimensions: USE_LITE_DIMENSIONS },
  { upstreamModel: 'extractive', kind: 'chat' },
];

export interface BuiltinProviderOptions {
  /** The knowledge base's retriever, once it registered one (asked on every request). */
  retriever?: () => Retriever | null;
  log?: { warn(obj: unknown, msg: string): void };
  useLite?: UseLiteOptions;
  /** Where large inputs are worked on (absent: on the calling thread, as unit tests do). */
  cpu?: { pool: CpuPool; timeoutMs: number };
}

const TASKS = new URL('./builtin-tasks.js', import.meta.url);
const answerTask = cpuTask<AnswerInput, AnswerOutput>(TASKS, 'answer');
const embedTask = cpuTask<string[], ReturnType<typeof embedHashed>>(TASKS, 'embedHashed');
/**
 * Inputs up to this many characters are worked on inline (a few milliseconds: cheaper than the hop to a
 * worker); larger ones go to the CPU pool.
 */
const INLINE_CHARS = 65_536;

const charsOf = (texts: readonly string[]): number => texts.reduce((n, t) => n + t.length, 0);

export class BuiltinProvider implements ChatProvider {
  private readonly useLite: UseLiteEmbedder;
  private warnedNoAccount = false;

  constructor(private readonly options: BuiltinProviderOptions = {}) {
    this.useLite = new UseLiteEmbedder(options.useLite);
  }

  /** The built-in models call no tools and keep nothing: OpenAI-only fields are refused by name. */
  unsupported(request: ChatRequest): Unsupported | null {
    const g = request.generate;
    if (g?.suffix !== undefined)
      return { field: 'body.suffix', reason: 'a built-in model cannot fill in the middle' };
    if (g?.raw === true) return { field: 'body.raw', reason: 'a built-in model has no template to skip' };
    if (g?.template !== undefined)
      return { field: 'body.template', reason: 'a built-in model takes no prompt template' };
    if (g?.context !== undefined)
      return { field: 'body.context', reason: 'a built-in model keeps no token context' };
    if (request.logprobs)
      return { field: 'body.logprobs', reason: 'a built-in model quotes; it has no token probabilities' };
    if (request.n !== undefined && request.n > 1)
      return { field: 'body.n', reason: 'a built-in model gives one answer' };
    const message = openAiOnlyMessageField(request.messages, 'a built-in model');
    if (message) return message;
    if (request.format !== undefined && request.format !== 'json') {
      const why = schemaRefusal(request.format);
      if (why) return { field: 'body.format', reason: `is a schema that ${why}` };
    }
    const sampling = samplingRefusal(request);
    if (sampling) return sampling;
    const choice = request.toolChoice;
    if (choice !== undefined && choice !== 'auto' && choice !== 'none')
      return { field: 'body.tool_choice', reason: 'a built-in model calls no tools' };
    const x = request.openAi;
    if (!x) return null;
    if (x.reasoningEffort !== undefined)
      return { field: 'body.reasoning_effort', reason: 'a built-in model does not reason' };
    if (x.user !== undefined) return { field: 'body.user', reason: 'a built-in model takes no end-user id' };
    if (x.metadata !== undefined)
      return { field: 'body.metadata', reason: 'a built-in model keeps no metadata' };
    if (x.store !== undefined)
      return { field: 'body.store', reason: 'a built-in model stores no completions' };
    if (x.serviceTier !== undefined)
      return { field: 'body.service_tier', reason: 'a built-in model has no service tiers' };
    return null;
  }

  async chat(
    request: ChatRequest,
    entry: ModelEntry,
    signal: AbortSignal,
  ): Promise<AsyncIterable<ChatEvent>> {
    const model = known(entry);
    if (model.kind !== 'chat') {
      throw new UpstreamError(`${entry.name} is an embedding model; it cannot chat`, false, 400);
    }
    const retriever = this.options.retriever?.() ?? null;
    const accountId = accountOf(request);
    if (retriever && accountId === null && !this.warnedNoAccount) {
      this.warnedNoAccount = true;
      this.options.log?.warn(
        { model: entry.name },
        'builtin/extractive: request names no account, so the retriever is skipped',
      );
    }
    const events = await extractiveChat(
      request,
      { retriever, accountId },
      signal,
      this.answerRunner(entry, accountId),
    );
    const format = request.format;
    return format !== undefined && format !== 'json' ? validated(events, format, entry.name) : events;
  }

  /**
   * Token ids mean nothing to a built-in embedder; more dimensions than it has cannot be made up; it
   * keeps no end-user id (as the chat model). `keep_alive` is not read, as on the chat model.
   */
  embedUnsupported(request: EmbedRequest, entry: ModelEntry): Unsupported | null {
    if (request.tokens)
      return { field: 'body.input', reason: 'token arrays are not accepted by a built-in model; send text' };
    if (request.user !== undefined)
      return { field: 'body.user', reason: 'a built-in model takes no end-user id' };
    const option = embedOptionRefusal(request.options);
    if (option) return option;
    const dims = BUILTIN_MODELS.find((m) => m.upstreamModel === entry.upstreamModel)?.dimensions;
    if (request.dimensions !== undefined && dims !== undefined && request.dimensions > dims)
      return { field: 'body.dimensions', reason: `must be at most ${dims}, the model's dimensions` };
    return null;
  }

  /** Answers inline when the conversation is small, else in a CPU worker. */
  private answerRunner(entry: ModelEntry, accountId: string | null): AnswerRunner {
    const cpu = this.options.cpu;
    if (!cpu) return answerInline;
    return (input, signal) =>
      charsOf(input.messages.map((m) => m.content)) +
        charsOf((input.grounding?.passages ?? []).map((p) => p.text)) <=
      INLINE_CHARS
        ? answerInline(input, signal)
        : cpu.pool
            .run(answerTask, input, {
              timeoutMs: cpu.timeoutMs,
              signal,
              ...(accountId ? { tenant: accountId } : {}),
            })
            .catch((error: unknown) => {
              throw upstreamOf(error, entry, signal);
            });
  }

  /** Hashed n-gram vectors: inline for small batches, in a CPU worker for large ones. */
  private async embedHashed(texts: string[], entry: ModelEntry, signal: AbortSignal): Promise<number[][]> {
    const cpu = this.options.cpu;
    if (!cpu || charsOf(texts) <= INLINE_CHARS) return embedInSlices(texts, signal);
    const flat = await cpu.pool
      .run(embedTask, texts, { timeoutMs: cpu.timeoutMs, signal })
      .catch((error: unknown) => {
        throw upstreamOf(error, entry, signal);
      });
    const out: number[][] = [];
    for (let i = 0; i < texts.length; i++)
      out.push(numbers(flat.subarray(i * HASHED_NGRAMS_DIMENSIONS, (i + 1) * HASHED_NGRAMS_DIMENSIONS)));
    return out;
  }

  async embed(request: EmbedRequest, entry: ModelEntry, signal: AbortSignal): Promise<EmbedResult> {
    const model = known(entry);
    if (model.kind !== 'embedding') {
      throw new UpstreamError(`${entry.name} is a chat model; it cannot embed`, false, 400);
    }
    const full = model.dimensions ?? 0;
    if (request.dimensions !== undefined && request.dimensions > full) {
      throw new UpstreamError(`${entry.name} has ${full} dimensions only`, false, 400);
    }
    if (signal.aborted) throw signal.reason;
    const embeddings =
      model.upstreamModel === 'use-lite'
        ? await this.useLite.embed(request.input, signal)
        : await this.embedHashed(request.input, entry, signal);
    // No tokenizer here: the gateway estimates the count and marks it so.
    const dims = request.dimensions;
    if (dims === undefined || dims === full) return { embeddings, promptTokens: null };
    return { embeddings: embeddings.map((v) => shortened(v, dims)), promptTokens: null };
  }

  /** Ends the USE worker, if one is running. */
  close(): Promise<void> {
    return this.useLite.close();
  }
}

function known(entry: ModelEntry): BuiltinModel {
  const model = BUILTIN_MODELS.find((m) => m.upstreamModel === entry.upstreamModel);
  if (!model) throw new UpstreamError(`unknown built-in model ${entry.upstreamModel}`, false, 404);
  return model;
}

/**
 * `ChatRequest` carries no account; the service may set `accountId` on it for the retriever (which
 * searches one account's documents). Without it the retriever is not used.
 */
function accountOf(request: ChatRequest): string | null {
  return 'accountId' in request && typeof request.accountId === 'string' && request.accountId !== ''
    ? request.accountId
    : null;
}

/** Texts per slice of an inline hashed-n-gram batch. */
const SLICE = 64;

/** Embeds on this thread in slices, yielding between them (and stopping when the caller left). */
async function embedInSlices(input: readonly string[], signal: AbortSignal): Promise<number[][]> {
  const out: number[][] = [];
  for (let i = 0; i < input.length; i += SLICE) {
    if (i > 0) await new Promise((resolve) => setImmediate(resolve));
    if (signal.aborted) throw signal.reason;
    for (const text of input.slice(i, i + SLICE)) out.push(numbers(embedHashedNgrams(text)));
  }
  return out;
}

/** A plain array of the floats: an indexed copy, several times faster than `Array.from` on a typed array. */
function numbers(floats: Float32Array): number[] {
  const out = new Array<number>(floats.length);
  for (let i = 0; i < floats.length; i++) out[i] = floats[i]!;
  return out;
}

/** A CPU bound that stopped a built-in model, in the gateway's terms (413: the caller's input is the cause). */
function upstreamOf(error: unknown, entry: ModelEntry, signal: AbortSignal): unknown {
  if (!(error instanceof CpuTaskError)) return error;
  if (error.limit === 'aborted') return signal.reason ?? error;
  if (error.limit === 'time' || error.limit === 'memory')
    return new UpstreamError(
      `${entry.name}: the input is too large to work on (${error.message})`,
      false,
      413,
    );
  return new UpstreamError(`${entry.name}: ${error.message}`, true, 503);
}

/**
 * The first `dims` components, renormalised to unit length: what OpenAI's `dimensions` does to its
 * text-embedding-3 vectors (cosine similarity stays meaningful).
 */
export function shortened(vector: readonly number[], dims: number): number[] {
  const out = vector.slice(0, dims);
  let norm = 0;
  for (const x of out) norm += x * x;
  norm = Math.sqrt(norm);
  return norm > 0 ? out.map((x) => x / norm) : out;
}
