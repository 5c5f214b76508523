import { mayUseModel, type Principal } from '../../core/auth/principal.js';
import type { ConfiguredModel } from './model-file.js';
import type { ModelKind } from './types.js';

/** Ollama clients write `llama3.1` and `llama3.1:latest` for the same model. */
function withoutLatest(name: string): string {
  return name.endsWith(':latest') ? name.slice(0, -':latest'.length) : name;
}

/** Whose made models to look in: an account's id, or null for the configured and shared ones only. */
type Owner = string | null;

/**
 * The models by name: those configured at boot, then those made through Ollama's management API
 * (`managed`, which never shadow a configured one). A made model is its account's: only that
 * account's principals find it (docs/decisions.md, "Made models belong to their account"); one made
 * before models had accounts (account '') is shared. Every module asks here, never a provider directly.
 */
export class ModelRegistry {
  private readonly byName = new Map<string, ConfiguredModel>();
  /** Made models by account ('' = shared), then by name. */
  private managed = new Map<string, Map<string, ConfiguredModel>>();

  constructor(entries: readonly ConfiguredModel[]) {
    for (const entry of entries) this.byName.set(withoutLatest(entry.name), entry);
  }

  /** A configured model, else one `owner` made, else a shared made one. */
  get(name: string, owner: Owner): ConfiguredModel | undefined {
    const key = withoutLatest(name);
    const configured = this.byName.get(key);
    if (configured || this.managed.size === 0) return configured;
    return (owner ? this.managed.get(owner)?.get(key) : undefined) ?? this.managed.get('')?.get(key);
  }

  /** A model of the models file or LLM_MODELS (which the management API may not change). */
  isConfigured(name: string): boolean {
    return this.byName.has(withoutLatest(name));
  }

  /** Replaces the managed models (read from the database), each with its account. */
  setManaged(entries: ReadonlyArray<{ account: string; entry: ConfiguredModel }>): void {
    const next = new Map<string, Map<string, ConfiguredModel>>();
    for (const { account, entry } of entries) {
      const key = withoutLatest(entry.name);
      if (this.byName.has(key)) continue;
      const own = next.get(account) ?? new Map<string, ConfiguredModel>();
      next.set(account, own);
      own.set(key, entry);
    }
    this.managed = next;
  }

  /** The configured models and those `owner` may find (its own made ones, the shared ones). */
  all(owner: Owner): ConfiguredModel[] {
    if (this.managed.size === 0) return [...this.byName.values()];
    const shared = this.managed.get('');
    const own = owner ? this.managed.get(owner) : undefined;
    return [...this.byName.values(), ...(shared?.values() ?? []), ...(own?.values() ?? [])];
  }

  /** The models a principal may ask for, optionally of one kind. */
  visibleTo(principal: Principal, kind?: ModelKind): ConfiguredModel[] {
    return this.all(principal.accountId).filter(
      (m) => (!kind || m.kind === kind) && mayUseModel(principal, m.name),
    );
  }

  /**
   * The model and its fallbacks in the order they are tried, each once. Fallbacks are the
   * operator's routing: a key allowed the first model may be answered by its fallbacks.
   */
  chain(first: ConfiguredModel, owner: Owner): ConfiguredModel[] {
    const out = [first];
    const seen = new Set([first.name]);
    for (let i = 0; i < out.length && out.length < 10; i++) {
      for (const name of out[i]?.fallbacks ?? []) {
        const next = this.get(name, owner);
        if (next && !seen.has(next.name)) {
          seen.add(next.name);
          out.push(next);
        }
      }
    }
    return out;
  }
}
