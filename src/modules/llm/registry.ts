import { mayUseModel, type Principal } from '../../core/auth/principal.js';
import type { ConfiguredModel } from './model-file.js';
import type { ModelKind } from './types.js';

/** Ollama clients write `llama3.1` and `llama3.1:latest` for the same model. */
function withoutLatest(name: string): string {
  return name.endsWith(':latest') ? name.slice(0, -':latest'.length) : name;
}

/** The models by name, as configured at boot. Every module asks here, never a provider directly. */
export class ModelRegistry {
  private readonly byName = new Map<string, ConfiguredModel>();

  constructor(entries: readonly ConfiguredModel[]) {
    for (const entry of entries) this.byName.set(withoutLatest(entry.name), entry);
  }

  get(name: string): ConfiguredModel | undefined {
    return this.byName.get(withoutLatest(name));
  }

  all(): ConfiguredModel[] {
    return [...this.byName.values()];
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
