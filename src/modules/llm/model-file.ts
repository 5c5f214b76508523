import { readFileSync } from 'node:fs';
import { type Static, Type } from 'typebox';
import { Value } from 'typebox/value';
import { parse as parseYaml } from 'yaml';
import { type Config, ConfigError } from '../../config.js';
import { PROVIDER_CATALOGUE, providerDefinition } from './providers/catalogue.js';
import { RemoteProviderSettings } from './providers/settings.js';
import type { ChatOptions, ModelEntry, ProviderDefaults } from './types.js';

const ModelName = Type.String({ minLength: 1, maxLength: 100, pattern: '^[A-Za-z0-9._:/@+-]+$' });

/** One entry as the operator writes it (MODELS_FILE or LLM_MODELS); defaults are filled in below. */
const ModelFileEntry = Type.Object(
  {
    name: ModelName,
    /** A kind of the provider catalogue (providers/catalogue.ts). */
    provider: Type.String({ minLength: 1, maxLength: 50 }),
    upstreamModel: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    kind: Type.Optional(Type.Enum(['chat', 'embedding', 'moderation'] as const)),
    contextWindow: Type.Optional(Type.Integer({ minimum: 1, maximum: 100_000_000 })),
    pricing: Type.Optional(
      Type.Object(
        {
          inputPerMillion: Type.Number({ minimum: 0 }),
          outputPerMillion: Type.Number({ minimum: 0 }),
        },
        { additionalProperties: false },
      ),
    ),
    fallbacks: Type.Optional(Type.Array(ModelName, { maxItems: 10 })),
    timeoutMs: Type.Optional(Type.Integer({ minimum: 100, maximum: 3_600_000 })),
    /** Provider settings: which of them an entry may set is its provider's `configSchema`. */
    ...RemoteProviderSettings,
    /** API version of providers that take one (anthropic's `anthropic-version`). */
    version: Type.Optional(Type.String({ pattern: '^[0-9]{4}-[0-9]{2}-[0-9]{2}$' })),
    /** Which OpenAI-compatible server an `openai` entry talks to (`openai`, `vllm`, `llama.cpp`). */
    compat: Type.Optional(Type.String({ maxLength: 50 })),
    dimensions: Type.Optional(Type.Integer({ minimum: 1, maximum: 65_536 })),
    /**
     * What a chat model reads besides text (`image`, `file`: PDFs): images or files sent to a model
     * without it are refused.
     */
    inputs: Type.Optional(
      Type.Array(Type.Enum(['text', 'image', 'file'] as const), { maxItems: 3, uniqueItems: true }),
    ),
  },
  { additionalProperties: false },
);
type ModelFileEntryT = Static<typeof ModelFileEntry>;

const ModelFile = Type.Union([
  Type.Object({ models: Type.Array(ModelFileEntry, { maxItems: 1000 }) }, { additionalProperties: false }),
  Type.Array(ModelFileEntry, { maxItems: 1000 }),
]);

/** A registry entry whose key lives in an encrypted credential, resolved when first used. */
export interface ConfiguredModel extends ModelEntry {
  apiKeyCredential?: string;
  /** Made through Ollama's management API: the configured model it stands on (none: pulled). */
  managed?: { base?: string };
  /** A created model's SYSTEM and PARAMETERs, applied when the request sets none of its own. */
  preset?: ModelPreset;
}

export interface ModelPreset {
  system?: string;
  options?: ChatOptions;
}

/** The built-in models: no server, no download. Their names say what they are. */
const BUILTIN_MODELS: readonly ConfiguredModel[] = [
  {
    name: 'builtin/hashed-ngrams',
    provider: 'builtin',
    upstreamModel: 'hashed-ngrams',
    kind: 'embedding',
    contextWindow: 100_000,
    fallbacks: [],
    timeoutMs: 30_000,
    dimensions: 384,
  },
  {
    name: 'builtin/use-lite',
    provider: 'builtin',
    upstreamModel: 'use-lite',
    kind: 'embedding',
    contextWindow: 10_000,
    fallbacks: [],
    timeoutMs: 60_000,
    dimensions: 512,
  },
  {
    name: 'builtin/extractive',
    provider: 'builtin',
    upstreamModel: 'extractive',
    kind: 'chat',
    contextWindow: 200_000,
    fallbacks: [],
    timeoutMs: 30_000,
  },
];

const BUILTIN_IDS = new Set(BUILTIN_MODELS.map((m) => m.upstreamModel));

interface ModelSources extends ProviderDefaults {
  /** Path of a JSON or YAML file (`MODELS_FILE`); empty for none. */
  file: string;
  /** JSON array of entries (`LLM_MODELS`) that add to or replace the file's, by name. */
  inline: string;
  defaultTimeoutMs: number;
  /** The environment, for `apiKeyEnv`. */
  env: Record<string, string | undefined>;
}

function parseDocument(text: string, where: string, yaml: boolean): unknown {
  try {
    return yaml ? parseYaml(text, { maxAliasCount: 100 }) : JSON.parse(text);
  } catch (error) {
    throw new Error(`${where} is not valid ${yaml ? 'YAML' : 'JSON'}: ${(error as Error).message}`);
  }
}

function entriesOf(document: unknown, where: string): ModelFileEntryT[] {
  if (!Value.Check(ModelFile, document)) {
    const problems = [...Value.Errors(ModelFile, document)]
      .slice(0, 10)
      .map((e) => `${e.instancePath || '(root)'}: ${e.message}`);
    throw new Error(`${where} has invalid model entries:\n  ${problems.join('\n  ')}`);
  }
  return Array.isArray(document) ? document : document.models;
}

const COMMON_FIELDS = new Set(
  Object.keys(ModelFileEntry.properties).filter(
    (k) => !(k in RemoteProviderSettings) && k !== 'version' && k !== 'compat',
  ),
);

function complete(raw: ModelFileEntryT, sources: ModelSources, where: string): ConfiguredModel {
  const definition = providerDefinition(raw.provider);
  if (!definition)
    throw new Error(
      `${where}: model '${raw.name}' names an unknown provider '${raw.provider}' (known: ${PROVIDER_CATALOGUE.map((p) => p.kind).join(', ')})`,
    );
  const own = Object.fromEntries(Object.entries(raw).filter(([k]) => !COMMON_FIELDS.has(k)));
  for (const field of Object.keys(own))
    if (!(field in definition.configSchema.properties))
      throw new Error(`${where}: model '${raw.name}': the ${raw.provider} provider does not take '${field}'`);
  if (!Value.Check(definition.configSchema, own))
    throw new Error(`${where}: model '${raw.name}' has invalid ${raw.provider} settings`);
  if (raw.inputs?.includes('file') && !definition.readsFiles)
    throw new Error(
      `${where}: model '${raw.name}': the ${raw.provider} provider takes no file input (inputs may list text and image)`,
    );
  const upstreamModel = raw.upstreamModel ?? raw.name;
  if (raw.provider === 'builtin' && !BUILTIN_IDS.has(upstreamModel.replace(/^builtin\//, ''))) {
    throw new Error(`${where}: model '${raw.name}' names an unknown built-in model '${upstreamModel}'`);
  }
  const builtin = BUILTIN_MODELS.find((m) => m.upstreamModel === upstreamModel.replace(/^builtin\//, ''));
  const defaults = definition.defaults?.(raw, sources) ?? {};
  let apiKey = defaults.apiKey;
  if (raw.apiKeyEnv) {
    apiKey = sources.env[raw.apiKeyEnv];
    if (!apiKey)
      throw new Error(`${where}: model '${raw.name}' reads its key from ${raw.apiKeyEnv}, which is not set`);
  }
  const entry: ConfiguredModel = {
    name: raw.name,
    provider: raw.provider,
    upstreamModel: builtin ? builtin.upstreamModel : upstreamModel,
    kind: raw.kind ?? builtin?.kind ?? 'chat',
    contextWindow: raw.contextWindow ?? builtin?.contextWindow ?? 8_192,
    fallbacks: raw.fallbacks ?? [],
    timeoutMs: raw.timeoutMs ?? sources.defaultTimeoutMs,
  };
  if (raw.pricing) entry.pricing = raw.pricing;
  const dimensions = raw.dimensions ?? builtin?.dimensions;
  if (dimensions) entry.dimensions = dimensions;
  if (defaults.baseUrl) entry.baseUrl = defaults.baseUrl;
  if (apiKey) entry.apiKey = apiKey;
  if (raw.apiKeyCredential) entry.apiKeyCredential = raw.apiKeyCredential;
  if (raw.version) entry.version = raw.version;
  if (raw.compat) entry.compat = raw.compat;
  if (raw.inputs) entry.inputs = raw.inputs;
  return entry;
}

/** Fallbacks must name models of the same kind, and no chain may loop back on itself. */
function checkFallbacks(models: Map<string, ConfiguredModel>): void {
  for (const model of models.values()) {
    for (const name of model.fallbacks) {
      const target = models.get(name);
      if (!target) throw new Error(`model '${model.name}' falls back to unknown model '${name}'`);
      if (target.kind !== model.kind)
        throw new Error(`model '${model.name}' (${model.kind}) falls back to '${name}' (${target.kind})`);
      if (name === model.name) throw new Error(`model '${model.name}' falls back to itself`);
    }
  }
}

/**
 * The registry's entries: the built-in models, then the file's, then `LLM_MODELS`, later ones
 * replacing earlier ones of the same name. Throws with every problem named (the server does not start).
 */
/** The registry's models from the settings (built-in, MODELS_FILE, then LLM_MODELS); a ConfigError names a problem. */
export function configuredModels(config: Config): ConfiguredModel[] {
  try {
    return loadModelEntries({
      file: config.MODELS_FILE,
      inline: config.LLM_MODELS,
      ollamaUrl: config.OLLAMA_URL,
      openAiBaseUrl: config.OPENAI_BASE_URL,
      openAiApiKey: config.OPENAI_API_KEY,
      defaultTimeoutMs: config.LLM_TIMEOUT_MS,
      env: config.MODELS_ENV,
    });
  } catch (error) {
    throw new ConfigError(`Invalid model registry: ${(error as Error).message}`);
  }
}

function loadModelEntries(sources: ModelSources): ConfiguredModel[] {
  const models = new Map<string, ConfiguredModel>(BUILTIN_MODELS.map((m) => [m.name, m]));
  if (sources.file) {
    let text: string;
    try {
      text = readFileSync(sources.file, 'utf8');
    } catch (error) {
      throw new Error(`MODELS_FILE ${sources.file} cannot be read: ${(error as Error).message}`);
    }
    const yaml = !/\.json$/i.test(sources.file);
    const where = `MODELS_FILE ${sources.file}`;
    for (const raw of entriesOf(parseDocument(text, where, yaml), where))
      models.set(raw.name, complete(raw, sources, where));
  }
  if (sources.inline) {
    for (const raw of entriesOf(parseDocument(sources.inline, 'LLM_MODELS', false), 'LLM_MODELS'))
      models.set(raw.name, complete(raw, sources, 'LLM_MODELS'));
  }
  checkFallbacks(models);
  return [...models.values()];
}
