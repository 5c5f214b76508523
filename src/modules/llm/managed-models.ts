/**
 * Models made through Ollama's management API (`/api/create`, `/api/copy`, `/api/pull`,
 * `/api/delete`), kept in `llm_models` and reflected in the registry. A row holds names, never keys:
 * a created model stands on a configured one (its provider, URL and key) with a preset; a pulled
 * model is on the default Ollama server.
 */
import { createHash } from 'node:crypto';
import { AppError } from '../../core/errors.js';
import type { ConfiguredModel, ModelPreset } from './model-file.js';
import type { ModelRegistry } from './registry.js';

/** What a row's `spec` holds. */
interface ManagedSpec {
  /** The configured model this one stands on. */
  base?: string;
  /** Or: a model of the default Ollama server, by its name there (pulled). */
  ollama?: string;
  preset?: ModelPreset;
}

interface Store {
  all(): Promise<Array<{ account_id: string; name: string; spec: string }>>;
  put(account: string, name: string, spec: string, at: string): Promise<void>;
  remove(account: string, name: string): Promise<boolean>;
}

/** How many models one account may make (each is a registry entry in every process). */
export const MAX_MANAGED_MODELS = 100;
/** How many made models the instance holds at most, all accounts together. */
export const MAX_MANAGED_MODELS_TOTAL = 10_000;
/** How often a process re-reads the table, so models made on another instance appear there. */
const RELOAD_MS = 30_000;

export class ManagedModels {
  private timer: NodeJS.Timeout | null = null;
  /** Rows per account at the last reload ('' = shared), for the bounds. */
  private counts = new Map<string, number>();
  private total = 0;

  constructor(
    private readonly registry: ModelRegistry,
    private readonly store: Store,
    private readonly pulledDefaults: { ollamaUrl: string; timeoutMs: number },
    private readonly now: () => Date,
  ) {}

  async start(): Promise<void> {
    await this.reload();
    this.timer = setInterval(() => void this.reload().catch(() => undefined), RELOAD_MS);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  async reload(): Promise<void> {
    const entries: Array<{ account: string; entry: ConfiguredModel }> = [];
    const counts = new Map<string, number>();
    const rows = await this.store.all();
    for (const row of rows) {
      counts.set(row.account_id, (counts.get(row.account_id) ?? 0) + 1);
      const entry = this.entryOf(row.name, JSON.parse(row.spec) as ManagedSpec);
      if (entry) entries.push({ account: row.account_id, entry });
    }
    this.registry.setManaged(entries);
    this.counts = counts;
    this.total = rows.length;
  }

  /** A model of `account` standing on `from` (configured, or made: then on the same base) with a preset. */
  async create(account: string, name: string, from: string, preset: ModelPreset): Promise<void> {
    this.writable(account, name);
    const source = this.registry.get(from, account);
    if (!source)
      throw new AppError('MODEL_NOT_FOUND', `model "${from}" not found; pull it first`, { model: from });
    const spec = this.specOf(source);
    spec.preset = mergePresets(source.preset, preset);
    await this.save(account, name, spec);
  }

  async copy(account: string, source: string, destination: string): Promise<void> {
    this.writable(account, destination);
    const model = this.registry.get(source, account);
    if (!model) throw new AppError('MODEL_NOT_FOUND', `model "${source}" not found`, { model: source });
    await this.save(account, destination, this.specOf(model));
  }

  /** A model the default Ollama server now has, under its own name, registered for `account`. */
  async registerPulled(account: string, name: string): Promise<void> {
    if (this.registry.get(name, account)) return;
    this.writable(account, name);
    await this.save(account, name, { ollama: name });
  }

  async remove(account: string, name: string): Promise<void> {
    if (this.registry.isConfigured(name))
      throw new AppError(
        'VALIDATION_ERROR',
        `model "${name}" is configured (MODELS_FILE or LLM_MODELS); remove it there`,
        { model: name },
      );
    if (await this.store.remove(account, canonical(name))) {
      await this.reload();
      return;
    }
    if (this.registry.get(name, null))
      throw new AppError(
        'VALIDATION_ERROR',
        `model "${name}" was made before models belonged to accounts: it is the instance's, and only the operator removes it`,
        { model: name },
      );
    throw new AppError('MODEL_NOT_FOUND', `model "${name}" not found`, { model: name });
  }

  private writable(account: string, name: string): void {
    if (!account) throw new Error('a made model needs its account');
    if (this.registry.isConfigured(name))
      throw new AppError(
        'VALIDATION_ERROR',
        `model "${name}" is configured (MODELS_FILE or LLM_MODELS) and cannot be replaced`,
        { model: name },
      );
    if (!/^[A-Za-z0-9._:/@+-]{1,100}$/.test(name))
      throw new AppError('VALIDATION_ERROR', `Invalid body: model name "${name}" is not valid`, {
        fields: [{ field: 'body.model', message: 'letters, digits and ._:/@+- only, at most 100' }],
      });
  }

  private specOf(model: ConfiguredModel): ManagedSpec {
    const spec: ManagedSpec = !model.managed
      ? { base: model.name }
      : model.managed.base
        ? { base: model.managed.base }
        : { ollama: model.upstreamModel };
    if (model.preset) spec.preset = model.preset;
    return spec;
  }

  private async save(account: string, name: string, spec: ManagedSpec): Promise<void> {
    const key = canonical(name);
    // A replacement never counts; the counts are the last reload's (another process's few seconds
    // of new models may pass the bound by as many).
    if (!this.ownedBy(account, key)) {
      if ((this.counts.get(account) ?? 0) >= MAX_MANAGED_MODELS)
        throw new AppError(
          'VALIDATION_ERROR',
          `an account can make at most ${MAX_MANAGED_MODELS} models; delete one first`,
          {},
        );
      if (this.total >= MAX_MANAGED_MODELS_TOTAL)
        throw new AppError(
          'SERVICE_UNAVAILABLE',
          `this instance holds its most made models (${MAX_MANAGED_MODELS_TOTAL}); try again later`,
          {},
        );
    }
    await this.store.put(account, key, JSON.stringify(spec), this.now().toISOString());
    await this.reload();
  }

  /** Whether `account` (not the shared rows) made `key`. */
  private ownedBy(account: string, key: string): boolean {
    const found = this.registry.get(key, account);
    return found !== undefined && found !== this.registry.get(key, null);
  }

  private entryOf(name: string, spec: ManagedSpec): ConfiguredModel | null {
    let entry: ConfiguredModel;
    if (spec.ollama !== undefined)
      entry = {
        name,
        provider: 'ollama',
        upstreamModel: spec.ollama,
        kind: 'chat',
        contextWindow: 8_192,
        fallbacks: [],
        timeoutMs: this.pulledDefaults.timeoutMs,
        baseUrl: this.pulledDefaults.ollamaUrl,
        managed: {},
      };
    else {
      // Resolved at each reload: a base removed from the configuration takes its models with it.
      const base =
        spec.base && this.registry.isConfigured(spec.base) ? this.registry.get(spec.base, null) : undefined;
      if (!base) return null;
      entry = { ...base, name, managed: { base: base.name } };
    }
    if (spec.preset) entry.preset = spec.preset;
    return entry;
  }
}

/** `llama3.1` and `llama3.1:latest` are one model, as for Ollama. */
function canonical(name: string): string {
  return name.endsWith(':latest') ? name.slice(0, -':latest'.length) : name;
}

function mergePresets(base: ModelPreset | undefined, own: ModelPreset): ModelPreset {
  const out: ModelPreset = { ...base };
  if (own.system !== undefined) out.system = own.system;
  if (own.options)
    out.options = {
      ...base?.options,
      ...own.options,
      extra: { ...base?.options?.extra, ...own.options.extra },
    };
  if (out.options?.extra && Object.keys(out.options.extra).length === 0) delete out.options.extra;
  return out;
}

/** The sha256 digest of a blob, as Ollama names it (`sha256:<hex>`). */
export function blobDigest(data: Buffer): string {
  return `sha256:${createHash('sha256').update(data).digest('hex')}`;
}
