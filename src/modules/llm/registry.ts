import { mayUseModel, type Principal } from '../../core/auth/principal.js';
import type { ConfiguredModel } from './model-file.js';
import type { ModelKind } from './types.js';

/** Ollama clients write `llama3.1` and `llama3.1:latest` for the same model. */
function withoutLatest(name: string): string {
  return name.endsWith(':latest') ? name.slice(0, -':latest'.length) : name;
}

/**
 * The models by name: those configured at boot, then those made through Ollama's management API
 * (`managed`, which never shadow a configured one). Every module asks here, never a provider directly.
 */
export class ModelRegistry {
  private readonly byName = new Map<string, ConfiguredModel>();
  private managed = new Map<string, ConfiguredModel>();

  constructor(entries: readonly ConfiguredModel[]) {
    for (const entry of entries) this.byName.set(withoutLatest(entry.name), entry);
  }

  get(name: string): ConfiguredModel | undefined {
    const key = withoutLatest(name);
    return this.byName.get(key) ?? this.managed.get(key);
  }

  /** A model of the models file or LLM_MODELS (which the management API may not change). */
  isConfigured(name: string): boolean {
    return this.byName.has(withoutLatest(name));
  }

  /** Replaces the managed models (read from the database). */
  setManaged(entries: readonly ConfiguredModel[]): void {
    const next = new Map<string, ConfiguredModel>();
    for (const entry of entries)
      if (!this.byName.has(withoutLatest(entry.name))) next.set(withoutLatest(entry.name), entry);
    this.managed = next;
  }

  all(): ConfiguredModel[] {
    return this.managed.size
      ? [...this.byName.values(), ...this.managed.values()]
      : [...this.byName.values()];
  }

  /** The models a principal may ask for, optionally of one kind. */
  visibleTo(principal: Principal, kind?: ModelKind): ConfiguredModel[] {
    return this.all().filter((m) => (!kind || m.kind === kind) && mayUseModel(principal, m.name));
  }

  /**
   * The model and its fallbacks in the order they are tried, each once. Fallbacks are the
   * operator's routing: a key allowed the first model may be answered by its fallbacks.
   */
  chain(first: ConfiguredModel): ConfiguredModel[] {
    const out = [first];
    const seen = new Set([first.name]);
    for (let i = 0; i < out.length && out.length < 10; i++) {
      for (const name of out[i]?.fallbacks ?? []) {
        const next = this.get(name);
        if (next && !seen.has(next.name)) {
          seen.add(next.name);
          out.push(next);
        }
      }
    }
    return out;
  }
}
