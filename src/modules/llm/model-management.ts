/**
 * Ollama's model management over the registry: pull (onto the Ollama server that serves the model,
 * registering what the default server gained), create and copy (a configured model under a new name,
 * with a preset), delete (only what was made here), blobs (kept, bounded), push (nowhere to push).
 */
import type { Kysely } from 'kysely';
import type { Database } from '../../core/db/types.js';
import { AppError } from '../../core/errors.js';
import { blobDigest, type ManagedModels } from './managed-models.js';
import type { ConfiguredModel, ModelPreset } from './model-file.js';
import type { OllamaProvider } from './providers/ollama.js';
import type { ModelRegistry } from './registry.js';
import { registryAllowed, registryHostOf } from './registry-host.js';
import { UpstreamError } from './types.js';

/** The largest blob `/api/blobs/:digest` keeps (a Modelfile's small files; no weights are served here). */
export const MAX_BLOB_BYTES = 32 * 1024 * 1024;

export interface ModelManagementDeps {
  registry: ModelRegistry;
  managed: ManagedModels;
  ollama: OllamaProvider | undefined;
  /** Where a model no entry names is pulled: the default Ollama server. */
  defaultOllama: { ollamaUrl: string; timeoutMs: number };
  db: Kysely<Database>;
  now: () => Date;
  /** What one account's blobs may hold in all (LLM_BLOBS_MAX_BYTES_PER_ACCOUNT). */
  maxAccountBlobBytes: number;
  /** Registries a pulled name may name (OLLAMA_PULL_REGISTRIES). */
  pullRegistries: readonly string[];
}

export class ModelManagement {
  constructor(private readonly deps: ModelManagementDeps) {}

  /**
   * A name that pulls from a registry of its own: only one the operator lists. Ollama connects there
   * from inside the operator's network, and follows its redirects.
   */
  private checkRegistry(name: string): void {
    const target = registryHostOf(name);
    if (!target || registryAllowed(target, this.deps.pullRegistries)) return;
    throw new AppError(
      'FORBIDDEN',
      `The model's registry '${target.host}' is not one this server pulls from (OLLAMA_PULL_REGISTRIES: ${this.deps.pullRegistries.join(', ')})`,
      { registry: target.host },
    );
  }

  /**
   * Progress of a pull. A model of another provider has nothing to download (its server has it or
   * answers 404 when called): one `success`. An Ollama model is pulled on its server; a name no
   * entry has is pulled on the default Ollama server and then registered, before `success` is told.
   */
  async *pull(account: string, name: string, signal: AbortSignal): AsyncGenerator<Record<string, unknown>> {
    const { registry, ollama, defaultOllama, managed } = this.deps;
    const model = registry.get(name, account);
    if (model && model.provider !== 'ollama') {
      yield { status: 'success' };
      return;
    }
    if (!ollama) throw new AppError('UPSTREAM_ERROR', 'no Ollama provider is running', {});
    if (!model) this.checkRegistry(name);
    const entry: ConfiguredModel = model ?? {
      name,
      provider: 'ollama',
      upstreamModel: name,
      kind: 'chat',
      contextWindow: 8_192,
      fallbacks: [],
      timeoutMs: defaultOllama.timeoutMs,
      baseUrl: defaultOllama.ollamaUrl,
    };
    let progress: AsyncGenerator<Record<string, unknown>>;
    try {
      progress = await ollama.pull(entry, entry.upstreamModel, signal);
    } catch (error) {
      throw pullError(error);
    }
    try {
      for await (const line of progress) {
        if (line.status === 'success' && !model) await managed.registerPulled(account, name);
        yield line;
      }
    } catch (error) {
      throw pullError(error);
    }
  }

  /** A model of `account`'s (its own name space: docs/decisions.md, "Made models belong to their account"). */
  async create(account: string, name: string, from: string, preset: ModelPreset): Promise<void> {
    await this.deps.managed.create(account, name, from, preset);
  }

  async copy(account: string, source: string, destination: string): Promise<void> {
    await this.deps.managed.copy(account, source, destination);
  }

  /** Only a model `account` made; the weights a pull brought stay on the Ollama server. */
  async remove(account: string, name: string): Promise<void> {
    await this.deps.managed.remove(account, name);
  }

  /** Whether `account` keeps the blob (another account's blobs are not told of). */
  async hasBlob(account: string, digest: string): Promise<boolean> {
    const row = await this.deps.db
      .selectFrom('llm_blobs')
      .select('digest')
      .where('account_id', '=', account)
      .where('digest', '=', checkDigest(digest))
      .executeTakeFirst();
    return row !== undefined;
  }

  /** Keeps a blob whose bytes match its digest (a mismatch is a 400, as Ollama answers). */
  async putBlob(account: string, digest: string, data: Buffer): Promise<void> {
    checkDigest(digest);
    if (blobDigest(data) !== digest)
      throw new AppError('VALIDATION_ERROR', 'digest mismatch: the body does not hash to the digest', {
        digest,
      });
    const kept = await this.deps.db
      .selectFrom('llm_blobs')
      .select((eb) => eb.fn.sum<number | string | null>('size').as('bytes'))
      .where('account_id', '=', account)
      .executeTakeFirst();
    const limit = this.deps.maxAccountBlobBytes;
    if (Number(kept?.bytes ?? 0) + data.length > limit && !(await this.hasBlob(account, digest)))
      throw new AppError(
        'PAYLOAD_TOO_LARGE',
        `the account's blobs would hold more than ${limit} bytes (LLM_BLOBS_MAX_BYTES_PER_ACCOUNT)`,
        { limitBytes: limit },
      );
    await this.deps.db
      .insertInto('llm_blobs')
      .values({
        account_id: account,
        digest,
        size: data.length,
        data,
        created_at: this.deps.now().toISOString(),
      })
      .onConflict((oc) => oc.columns(['account_id', 'digest']).doNothing())
      .execute();
  }
}

function checkDigest(digest: string): string {
  if (!/^sha256[:-][0-9a-f]{64}$/.test(digest))
    throw new AppError(
      'VALIDATION_ERROR',
      `invalid digest "${digest.slice(0, 80)}": expected sha256:<64 hex>`,
      {
        digest: digest.slice(0, 80),
      },
    );
  return digest.replace('sha256-', 'sha256:');
}

function pullError(error: unknown): AppError {
  if (error instanceof AppError) return error;
  const message = error instanceof Error ? error.message : 'the pull failed';
  if (error instanceof UpstreamError && !error.retryable)
    return new AppError('VALIDATION_ERROR', `The Ollama server refused the pull: ${message}`, {});
  return new AppError('UPSTREAM_ERROR', `The Ollama server could not pull: ${message}`, {});
}

/** What a Modelfile (Ollama's `modelfile` string) says, for `/api/create`. */
export interface ParsedModelfile {
  from?: string;
  system?: string;
  parameters: Record<string, unknown>;
}

/** Modelfile instructions this gateway cannot honour: refused by name, not ignored. */
const REFUSED_INSTRUCTIONS: Record<string, string> = {
  TEMPLATE: "a prompt template is the Ollama server's; the gateway applies SYSTEM and PARAMETERs only",
  ADAPTER: 'adapters are weights; the gateway serves none',
  LICENSE: 'the gateway keeps no licence text',
  MESSAGE: 'example messages are not kept by this gateway',
  REQUIRES: 'the gateway checks no Ollama version',
};

/** Reads FROM, PARAMETER and SYSTEM (with `"""` blocks); anything else is a 400 naming it. */
export function parseModelfile(text: string): ParsedModelfile {
  const out: ParsedModelfile = { parameters: {} };
  const lines = text.split(/\r?\n/);
  for (let i = 0; i < lines.length; i++) {
    const line = (lines[i] ?? '').trim();
    if (line === '' || line.startsWith('#')) continue;
    const match = /^(\S+)\s*(.*)$/.exec(line);
    const instruction = (match?.[1] ?? '').toUpperCase();
    let rest = match?.[2] ?? '';
    if (rest.startsWith('"""')) {
      // A block: up to the closing triple quote, on this line or a later one.
      let block = rest.slice(3);
      while (!block.includes('"""') && i + 1 < lines.length) block += `\n${lines[++i]}`;
      const end = block.indexOf('"""');
      if (end === -1) throw modelfileError(`line ${i + 1}: a """ block is not closed`);
      rest = block.slice(0, end);
    } else if (rest.length >= 2 && rest.startsWith('"') && rest.endsWith('"')) rest = rest.slice(1, -1);
    const refused = REFUSED_INSTRUCTIONS[instruction];
    if (refused) throw modelfileError(`${instruction} is not supported: ${refused}`);
    switch (instruction) {
      case 'FROM':
        out.from = rest.trim();
        break;
      case 'SYSTEM':
        out.system = rest;
        break;
      case 'PARAMETER': {
        const [key, ...value] = rest.trim().split(/\s+/);
        if (!key || value.length === 0)
          throw modelfileError(`line ${i + 1}: PARAMETER needs a name and a value`);
        const parsed = parameterValue(value.join(' '));
        if (key === 'stop')
          out.parameters.stop = [...((out.parameters.stop as string[]) ?? []), String(parsed)];
        else out.parameters[key] = parsed;
        break;
      }
      default:
        throw modelfileError(`line ${i + 1}: unknown instruction "${instruction.slice(0, 40)}"`);
    }
  }
  return out;
}

function parameterValue(raw: string): unknown {
  const text = raw.length >= 2 && raw.startsWith('"') && raw.endsWith('"') ? raw.slice(1, -1) : raw;
  if (text === 'true' || text === 'false') return text === 'true';
  if (/^-?\d+(\.\d+)?$/.test(text)) return Number(text);
  return text;
}

function modelfileError(message: string): AppError {
  return new AppError('VALIDATION_ERROR', `Invalid body: body.modelfile ${message}`, {
    fields: [{ field: 'body.modelfile', message }],
  });
}
