import type { OutboundHttp } from '../../../core/http/outbound.js';
import type { SearchProvider } from '../definition.js';

/**
 * Flowise's web-search tools (LangChain's SerpAPI, Serper, Google Custom Search and Brave Search): each
 * one request in its service's wire format, its answer read into text as LangChain's tool does. The key
 * is the account's Flowise variable of LangChain's environment name (a canvas's credential id points
 * into Flowise's own credential store, which is not served here); the base URL is the server's.
 */
export interface SearchConfig {
  http: OutboundHttp;
  baseUrls: Record<SearchProvider, string>;
  timeoutMs: number;
}

/** The variables each service's key is read from (LangChain's environment names). */
export const SEARCH_KEYS: Record<SearchProvider, readonly string[]> = {
  serpapi: ['SERPAPI_API_KEY'],
  serper: ['SERPER_API_KEY'],
  google: ['GOOGLE_API_KEY', 'GOOGLE_CSE_ID'],
  brave: ['BRAVE_SEARCH_API_KEY'],
};

/** An answer larger than this is not read (a search answer is a few kB). */
const MAX_RESPONSE_BYTES = 2 * 1024 * 1024;
/** A query longer than this is cut (the services refuse long ones anyway). */
const MAX_QUERY_CHARS = 2_000;
const NOTHING = 'No good search result found';

type Json = Record<string, unknown>;

/** Runs one search; a missing key, a refusal or a bad answer throws (the agent's model is told). */
export async function webSearch(
  config: SearchConfig,
  provider: SearchProvider,
  query: string,
  vars: Record<string, string>,
): Promise<string> {
  const keys = SEARCH_KEYS[provider].map((name) => vars[name] ?? '');
  const missing = SEARCH_KEYS[provider].filter((_, i) => keys[i] === '');
  if (missing.length > 0)
    throw new Error(`${missing.join(' and ')} not set: add it as a Flowise variable of the account`);
  const q = query.slice(0, MAX_QUERY_CHARS);
  const base = config.baseUrls[provider].replace(/\/+$/, '');
  const [key, cx] = keys as [string, string | undefined];
  const request = { timeoutMs: config.timeoutMs, maxResponseBytes: MAX_RESPONSE_BYTES, maxRedirects: 0 };
  switch (provider) {
    case 'serpapi': {
      const params = new URLSearchParams({ api_key: key, q });
      const res = await config.http({
        ...request,
        method: 'GET',
        url: `${base}/search?${params}`,
        headers: {},
      });
      const body = parse(res.body, 'SerpAPI');
      if (body.error) throw new Error(`Got error from serpAPI: ${String(body.error)}`);
      return serpApiAnswer(body);
    }
    case 'serper': {
      const res = await config.http({
        ...request,
        method: 'POST',
        url: `${base}/search`,
        headers: { 'x-api-key': key, 'content-type': 'application/json' },
        credentialHeaders: ['x-api-key'],
        body: JSON.stringify({ q }),
      });
      if (res.status < 200 || res.status > 299) throw new Error(`Got ${res.status} error from serper`);
      return serperAnswer(parse(res.body, 'Serper'));
    }
    case 'google': {
      const params = new URLSearchParams({ key, cx: cx ?? '', q });
      const res = await config.http({
        ...request,
        method: 'GET',
        url: `${base}/customsearch/v1?${params}`,
        headers: {},
      });
      if (res.status < 200 || res.status > 299)
        throw new Error(`Got ${res.status} error from Google custom search`);
      const items = parse(res.body, 'Google custom search').items;
      return JSON.stringify(results(items, 'link', 'snippet'));
    }
    case 'brave': {
      const res = await config.http({
        ...request,
        method: 'GET',
        url: `${base}/res/v1/web/search?${new URLSearchParams({ q })}`,
        headers: { 'x-subscription-token': key, accept: 'application/json' },
        credentialHeaders: ['x-subscription-token'],
      });
      if (res.status < 200 || res.status > 299) throw new Error(`HTTP error ${res.status}`);
      const web = parse(res.body, 'Brave Search').web as Json | undefined;
      return JSON.stringify(results(web?.results, 'url', 'description'));
    }
  }
}

function parse(text: string, service: string): Json {
  try {
    const body = JSON.parse(text) as unknown;
    if (body && typeof body === 'object' && !Array.isArray(body)) return body as Json;
  } catch {
    // answered below
  }
  throw new Error(`${service} did not answer JSON`);
}

const obj = (value: unknown): Json | undefined =>
  value && typeof value === 'object' && !Array.isArray(value) ? (value as Json) : undefined;

/** `{title, link, snippet}` of each result, as LangChain's Google and Brave tools answer. */
function results(items: unknown, link: string, snippet: string) {
  if (!Array.isArray(items)) return [];
  return items.map((raw) => {
    const item = obj(raw) ?? {};
    return { title: item.title, link: item[link], snippet: item[snippet] };
  });
}

/** Serper: the answer box, sports, knowledge graph, then the first organic snippet (LangChain's order). */
function serperAnswer(json: Json): string {
  const box = obj(json.answerBox);
  if (box?.answer) return String(box.answer);
  if (box?.snippet) return String(box.snippet);
  if (Array.isArray(box?.snippet_highlighted_words)) return String(box.snippet_highlighted_words[0]);
  const spotlight = obj(json.sportsResults)?.game_spotlight;
  if (spotlight) return typeof spotlight === 'string' ? spotlight : JSON.stringify(spotlight);
  const graph = obj(json.knowledgeGraph);
  if (graph?.description) return String(graph.description);
  const first = Array.isArray(json.organic) ? obj(json.organic[0]) : undefined;
  if (first?.snippet) return String(first.snippet);
  return NOTHING;
}

/** Result lists SerpAPI's tool answers whole when present, in LangChain's order. */
const SERPAPI_LISTS: Array<(json: Json) => unknown> = [
  (j) => j.events_results,
  (j) => j.sports_results,
  (j) => j.top_stories,
  (j) => j.news_results,
  (j) => obj(j.jobs_results)?.jobs,
  (j) => j.questions_and_answers,
  (j) => obj(j.popular_destinations)?.destinations,
];

/** SerpAPI: LangChain's reading of a Google result page (answer box, lists, knowledge graph, first result). */
function serpApiAnswer(json: Json): string {
  const box = Array.isArray(json.answer_box_list) ? obj(json.answer_box_list[0]) : obj(json.answer_box);
  if (box) {
    if (box.result) return String(box.result);
    if (box.answer) return String(box.answer);
    if (box.snippet) return String(box.snippet);
    if (box.snippet_highlighted_words) return String(box.snippet_highlighted_words);
    const flat = Object.fromEntries(
      Object.entries(box).filter(
        ([, v]) => typeof v !== 'object' && !(typeof v === 'string' && v.startsWith('http')),
      ),
    );
    return JSON.stringify(flat);
  }
  for (const list of SERPAPI_LISTS) {
    const found = list(json);
    if (found) return JSON.stringify(found);
  }
  const sights = obj(json.top_sights)?.sights;
  if (Array.isArray(sights))
    return JSON.stringify(
      sights
        .slice(0, 8)
        .map((s) => ({ title: obj(s)?.title, description: obj(s)?.description, price: obj(s)?.price })),
    );
  const shopping = json.shopping_results;
  if (Array.isArray(shopping) && obj(shopping[0])?.title) return JSON.stringify(shopping.slice(0, 3));
  const images = json.images_results;
  if (Array.isArray(images) && obj(images[0])?.thumbnail)
    return images
      .slice(0, 10)
      .map((i) => obj(i)?.thumbnail)
      .toString();
  const snippets: unknown[] = [];
  const graph = obj(json.knowledge_graph);
  if (graph) {
    if (graph.description) snippets.push(graph.description);
    const title = typeof graph.title === 'string' ? graph.title : '';
    for (const [k, v] of Object.entries(graph))
      if (
        typeof v === 'string' &&
        k !== 'title' &&
        k !== 'description' &&
        !k.endsWith('_stick') &&
        !k.endsWith('_link') &&
        !k.startsWith('http')
      )
        snippets.push(`${title} ${k}: ${v}`);
  }
  const first = Array.isArray(json.organic_results) ? obj(json.organic_results[0]) : undefined;
  if (first) {
    const value =
      first.snippet ??
      first.snippet_highlighted_words ??
      first.rich_snippet ??
      first.rich_snippet_table ??
      first.link;
    if (value) snippets.push(value);
  }
  if (json.buying_guide) snippets.push(json.buying_guide);
  const places = obj(json.local_results)?.places;
  if (places) snippets.push(places);
  return snippets.length > 0 ? JSON.stringify(snippets) : NOTHING;
}
