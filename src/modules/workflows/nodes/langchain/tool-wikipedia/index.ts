import { Type } from 'typebox';
import { defineSubNode } from '../../../engine/node-type.js';
import type { EngineDeps } from '../../../engine/types.js';
import { type AiTool, LANGCHAIN } from '../ai-parts.js';

/** LangChain's WikipediaQueryRun defaults, as n8n's node leaves them. */
export const WIKIPEDIA_API = 'https://en.wikipedia.org/w/api.php';
const TOP_K_RESULTS = 3;
const MAX_DOC_CONTENT_LENGTH = 4_000;
/** Longest one MediaWiki call may take; an answer larger than this is refused by the outbound client. */
const TIMEOUT_MS = 20_000;
const MAX_RESPONSE_BYTES = 5_000_000;
/** Longest query sent (MediaWiki refuses search strings over 300 characters). */
const MAX_QUERY_LENGTH = 300;

async function mediaWiki(deps: EngineDeps, params: Record<string, string>): Promise<Record<string, unknown>> {
  const res = await deps.http({
    method: 'GET',
    url: `${WIKIPEDIA_API}?${new URLSearchParams({ ...params, format: 'json' })}`,
    headers: { accept: 'application/json' },
    timeoutMs: TIMEOUT_MS,
    maxResponseBytes: MAX_RESPONSE_BYTES,
  });
  // LangChain's own message for any answer that is not 2xx.
  if (res.status < 200 || res.status >= 300) throw new Error('Network response was not ok');
  let json: unknown;
  try {
    json = JSON.parse(res.body);
  } catch {
    throw new Error('Wikipedia answered with something that is not JSON');
  }
  if (json === null || typeof json !== 'object' || Array.isArray(json))
    throw new Error('Wikipedia answered with something that is not a JSON object');
  const error = (json as { error?: { info?: unknown } }).error;
  if (error) throw new Error(`Wikipedia refused the query: ${String(error.info ?? 'unknown error')}`);
  return json as Record<string, unknown>;
}

const record = (v: unknown): Record<string, unknown> =>
  v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {};

/** The titles MediaWiki's full-text search finds for `query` (`list=search`). */
async function searchTitles(deps: EngineDeps, query: string): Promise<string[]> {
  const data = await mediaWiki(deps, { action: 'query', list: 'search', srsearch: query });
  const search = record(data.query).search;
  if (!Array.isArray(search)) throw new Error('Wikipedia answered a search without results');
  return search.map((s) => record(s).title).filter((t): t is string => typeof t === 'string');
}

/** A page's plain-text extract (`prop=extracts&explaintext`, redirects followed), or null if it has none. */
async function pageExtract(deps: EngineDeps, title: string): Promise<string | null> {
  const data = await mediaWiki(deps, {
    action: 'query',
    prop: 'extracts',
    explaintext: 'true',
    redirects: '1',
    titles: title,
  });
  const pages = record(record(data.query).pages);
  const first = record(Object.values(pages)[0]);
  return typeof first.extract === 'string' ? first.extract : null;
}

/**
 * What LangChain's WikipediaQueryRun answers: the top three search results, each `Page: …\nSummary: …`,
 * joined by a blank line and cut at 4,000 characters; a fixed sentence when nothing was found.
 */
export async function wikipediaAnswer(deps: EngineDeps, query: string): Promise<string> {
  const titles = (await searchTitles(deps, query.slice(0, MAX_QUERY_LENGTH))).slice(0, TOP_K_RESULTS);
  const summaries: string[] = [];
  for (const title of titles) {
    const extract = await pageExtract(deps, title);
    if (extract !== null) summaries.push(`Page: ${title}\nSummary: ${extract}`);
  }
  if (summaries.length === 0) return 'No good Wikipedia Search Result was found';
  return summaries.join('\n\n').slice(0, MAX_DOC_CONTENT_LENGTH);
}

/**
 * n8n's Wikipedia tool (LangChain's `wikipedia-api`): MediaWiki's search, then each page's extract,
 * through the platform's guarded outbound client.
 */
export const toolWikipediaNode = defineSubNode({
  type: `${LANGCHAIN}.toolWikipedia`,
  versions: [1],
  schema: Type.Object({ notice: Type.Optional(Type.String()) }, { additionalProperties: false }),
  subNode: 'ai_tool',
  async supply(ctx): Promise<AiTool> {
    return {
      kind: 'tool',
      name: 'wikipedia-api',
      description:
        'A tool for interacting with and fetching data from the Wikipedia API. The input should always be a string query.',
      parameters: {
        type: 'object',
        properties: { input: { type: 'string' } },
        required: ['input'],
      },
      async run(args) {
        if (typeof args.input !== 'string' || args.input.trim() === '')
          throw new Error("the argument 'input' must be a non-empty string");
        return wikipediaAnswer(ctx.deps, args.input);
      },
    };
  },
});
