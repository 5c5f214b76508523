import { readFileSync } from 'node:fs';
import { type Static, Type } from 'typebox';
import { Value } from 'typebox/value';
import { parse as parseYaml } from 'yaml';
import { type Config, ConfigError } from '../../config.js';
import type { ModelEntry } from './types.js';

const ModelName = Type.String({ minLength: 1, maxLength: 100, pattern: '^[A-Za-z0-9._:/@+-]+$' });

/** One entry as the operator writes it (MODELS_FILE or LLM_MODELS); defaults are filled in below. */
const ModelFileEntry = Type.Object(
  {
    name: ModelName,
    provider: Type.Enum(['ollama', 'openai', 'builtin'] as const),
    upstreamModel: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    kind: Type.Optional(Type.Enum(['chat', 'embedding'] as const)),
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
    baseUrl: Type.Optional(Type.String({ pattern: '^https?://', maxLength: 2000 })),
    /** Name of the environment variable holding the provider's API key. */
    apiKeyEnv: Type.Optional(Type.String({ pattern: '^[A-Za-z_][A-Za-z0-9_]*$', maxLength: 100 })),
    /** Name or id of an encrypted credential of the owner account holding the API key. */
    apiKeyCredential: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    dimensions: Type.Optional(Type.Integer({ minimum: 1, maximum: 65_536 })),
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
}

/** The built-in models: no server, no download. Their names say what they are. */
export const BUILTIN_MODELS: readonly ConfiguredModel[] = [
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

export interface ModelSources {
  /** Path of a JSON or YAML file (`MODELS_FILE`); empty for none. */
  file: string;
  /** JSON array of entries (`LLM_MODELS`) that add to or replace the file's, by name. */
  inline: string;
  /** Default base URLs and key for entries that name none. */
  ollamaUrl: string;
  openAiBaseUrl: string;
  openAiApiKey: string;
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

/** Trailing slashes off, by a loop: `/\/+$/` is quadratic on a long run of slashes. */
function trimSlash(url: string): string {
  let end = url.length;
  while (end > 0 && url[end - 1] === '/') end--;
  return url.slice(0, end);
}

function complete(raw: ModelFileEntryT, sources: ModelSources, where: string): ConfiguredModel {
  const upstreamModel = raw.upstreamModel ?? raw.name;
  if (raw.provider === 'builtin' && !BUILTIN_IDS.has(upstreamModel.replace(/^builtin\//, ''))) {
    throw new Error(`${where}: model '${raw.name}' names an unknown built-in model '${upstreamModel}'`);
  }
  const builtin = BUILTIN_MODELS.find((m) => m.upstreamModel === upstreamModel.replace(/^builtin\//, ''));
  let apiKey: string | undefined;
  if (raw.apiKeyEnv) {
    apiKey = sources.env[raw.apiKeyEnv];
    if (!apiKey)
      throw new Error(`${where}: model '${raw.name}' reads its key from ${raw.apiKeyEnv}, which is not set`);
  } else if (
    raw.provider === 'openai' &&
    !raw.apiKeyCredential &&
    sources.openAiApiKey &&
    // OPENAI_API_KEY goes only to OPENAI_BASE_URL: a local vLLM must not receive the OpenAI key.
    (raw.baseUrl === undefined || trimSlash(raw.baseUrl) === trimSlash(sources.openAiBaseUrl))
  ) {
    apiKey = sources.openAiApiKey;
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
  if (raw.provider === 'ollama') entry.baseUrl = trimSlash(raw.baseUrl ?? sources.ollamaUrl);
  if (raw.provider === 'openai') entry.baseUrl = trimSlash(raw.baseUrl ?? sources.openAiBaseUrl);
  if (apiKey) entry.apiKey = apiKey;
  if (raw.apiKeyCredential) entry.apiKeyCredential = raw.apiKeyCredential;
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

export function loadModelEntries(sources: ModelSources): ConfiguredModel[] {
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
