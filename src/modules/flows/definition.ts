import type { FlowBodyT, OverridableField } from './schemas.js';

export type FlowKind = 'llm' | 'rag' | 'workflow';

interface RateLimitSetting {
  limitMax: number;
  limitDuration: number;
  limitMsg?: string;
}

/** A stored flow's definition, defaults filled in. */
export interface FlowDefinition {
  name: string;
  kind: FlowKind;
  model: string | null;
  systemPrompt: string;
  /** null: the kind's default template (so a kind change keeps a sensible one). */
  promptTemplate: string | null;
  topics: string[];
  topK: number;
  minScore: number | null;
  temperature: number | null;
  maxTokens: number | null;
  memory: { type: 'none' | 'window'; windowSize: number };
  workflowId: string | null;
  overridableFields: OverridableField[];
  isStreaming: boolean;
  rateLimit: RateLimitSetting | null;
  /** A chatflow imported as Flowise's canvas: its flowData as sent (export answers it) and node ids. */
  flowise?: FlowiseSource | null;
}

export interface FlowiseSource {
  flowData: string;
  nodeIds: string[];
  /** What the canvas runs beyond the definition's one chain; absent: that chain alone. */
  plan?: FlowisePlan;
}

/** An LLM chain answered before the ending node, its answer filling `{vars.<id>}` (prompt chaining). */
export interface ChainStep {
  id: string;
  model: string;
  systemPrompt: string;
  promptTemplate: string;
  temperature: number | null;
  maxTokens: number | null;
}

/** The web-search services of Flowise's search tools. */
export type SearchProvider = 'serpapi' | 'serper' | 'google' | 'brave';

/** A tool of a Tool Agent, run by the flows module for the llm module's tool loop. */
export type FlowiseTool = { name: string; description: string } & (
  | { type: 'calculator' }
  /** JavaScript in the sandbox; its input properties are `$<name>` variables, as in Flowise. */
  | { type: 'custom'; parameters: Record<string, unknown>; code: string }
  | { type: 'retriever'; topic: string; topK: number }
  | { type: 'chain'; step: ChainStep }
  /** A web-search service (its key from the account's Flowise variables). */
  | { type: 'search'; provider: SearchProvider }
);

/**
 * A document loader of a vector store, run by the vector upsert (when the upsert sends no documents):
 * Flowise's Cheerio Web Scraper (`web`), API Loader (`api`), GitHub (`github`) and SearchApi (`searchapi`).
 */
export type FlowiseLoader = {
  /** The loader's node id (overrideConfig may address its inputs by it). */
  id: string;
  /** The connected splitter's chunk size, in characters (the knowledge base chunks). */
  chunkSize?: number;
  metadata: Record<string, unknown>;
  /**
   * The credential the canvas names (SearchApi, GitHub): a credential of the account's store (by id or
   * name, `/api/v1/credentials`, type `searchApi` or `githubApi`); none: the account's Flowise variable.
   */
  credential?: string;
} & (
  | {
      type: 'web';
      url: string;
      relativeLinksMethod: '' | 'webCrawl' | 'scrapeXMLSitemap';
      /** Pages of a crawl or sitemap (0: as many as the server allows). */
      limit: number;
      selector: string;
    }
  | {
      type: 'api';
      method: 'GET' | 'POST';
      url: string;
      headers: Record<string, string>;
      body: unknown;
    }
  /**
   * Flowise's GitHub loader (LangChain's GithubRepoLoader); a private repository with the `credential`'s
   * `accessToken` (or the account's `GITHUB_ACCESS_TOKEN` Flowise variable), sent to the API's origin only.
   */
  | {
      type: 'github';
      repoLink: string;
      branch: string;
      recursive: boolean;
      /** GitHub's API base (GitHub Enterprise's, or another host speaking its contents API). */
      githubInstanceApi: string;
      /**
       * Set when an upsert's overrideConfig applied: the origin of the flow's own API, the only one the
       * repository token is sent to (null: the flow's value was not a URL).
       */
      tokenOrigin?: string | null;
      /** Paths left out: a path equal to one, or under it (`docs/`, `docs/*`). */
      ignorePath: string[];
    }
  /**
   * Flowise's SearchApi loader (LangChain's SearchApiLoader): one search of SearchApi.io (`engine`
   * google unless the parameters name another, e.g. `youtube_transcripts`), with the `credential`'s
   * `searchApiKey` (or the account's `SEARCHAPI_API_KEY` Flowise variable).
   */
  | {
      type: 'searchapi';
      /** `q` (Flowise's Query input; may be empty, as for a transcript). */
      query: string;
      /** Flowise's Custom Parameters: the search's other query parameters. */
      customParameters: Record<string, unknown>;
    }
);

export interface FlowisePlan {
  /** Chains answered first, in order (each may use the ones before it). */
  steps?: ChainStep[];
  /** Simple prompt moderation: a question containing a line of the deny list gets `message` as its answer. */
  moderation?: { denyList: string[]; message: string };
  /** A Tool Agent: the model calls these tools, at most `maxIterations` rounds. */
  agent?: { tools: FlowiseTool[]; maxIterations: number };
  /** The chat model allows image uploads (Flowise's `allowImageUploads`). */
  imageUploads?: boolean;
  /** The vector stores of the canvas by node id, each a knowledge-base topic (the vector upsert fills them). */
  stores?: Record<string, string>;
  /** The document loaders of each vector store (by the store's node id) that the vector upsert runs. */
  loaders?: Record<string, FlowiseLoader[]>;
}

export const DEFAULT_TEMPLATES: Record<FlowKind, string> = {
  llm: '{question}',
  rag: 'Use the context below to answer the question. If the context does not answer it, say so.\n\nContext:\n{context}\n\nQuestion: {question}',
  workflow: '{question}',
};

export const templateOf = (def: FlowDefinition): string => def.promptTemplate ?? DEFAULT_TEMPLATES[def.kind];

export interface Problem {
  field: string;
  message: string;
}

/**
 * The definition a POST (no `previous`) or PUT (fields over `previous`) describes, with defaults,
 * and the problems that need no lookup. Lookups (model, topics, workflow) are the service's.
 */
export function definitionOf(
  body: FlowBodyT,
  previous: FlowDefinition | null,
): { definition: FlowDefinition; problems: Problem[] } {
  const problems: Problem[] = [];
  const pick = <K extends keyof FlowDefinition>(key: K, fallback: FlowDefinition[K]): FlowDefinition[K] => {
    const value = (body as Record<string, unknown>)[key];
    if (value !== undefined) return value as FlowDefinition[K];
    return previous ? previous[key] : fallback;
  };
  const name = pick('name', '');
  const kind = pick('kind', 'llm');
  if (!previous && body.name === undefined) problems.push({ field: 'name', message: 'is required' });
  if (!previous && body.kind === undefined) problems.push({ field: 'kind', message: 'is required' });
  const memory = pick('memory', { type: 'none', windowSize: 5 });
  const definition: FlowDefinition = {
    name,
    kind,
    model: pick('model', null),
    systemPrompt: pick('systemPrompt', ''),
    promptTemplate: pick('promptTemplate', null),
    topics: [...new Set(pick('topics', []))],
    topK: pick('topK', 4),
    minScore: pick('minScore', null),
    temperature: pick('temperature', null),
    maxTokens: pick('maxTokens', null),
    memory: { type: memory.type, windowSize: memory.windowSize ?? 5 },
    workflowId: pick('workflowId', null),
    overridableFields: [...new Set(pick('overridableFields', []))],
    isStreaming: pick('isStreaming', true),
    rateLimit: pick('rateLimit', null),
  };
  if (kind === 'workflow') {
    if (!definition.workflowId)
      problems.push({ field: 'workflowId', message: 'is required for a workflow flow' });
  } else {
    if (!definition.model) problems.push({ field: 'model', message: `is required for a ${kind} flow` });
    const template = templateOf(definition);
    if (!template.includes('{question}'))
      problems.push({ field: 'promptTemplate', message: 'must contain {question}' });
  }
  if (kind === 'rag' && definition.topics.length === 0)
    problems.push({ field: 'topics', message: 'a rag flow needs at least one topic' });
  if (kind !== 'rag' && definition.topics.length > 0)
    problems.push({ field: 'topics', message: 'only a rag flow retrieves from topics' });
  return { definition, problems };
}
