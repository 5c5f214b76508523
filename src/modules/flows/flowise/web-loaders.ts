import { type CpuPool, CpuTaskError, cpuTask } from '../../../core/cpu/index.js';
import { AppError, validationError } from '../../../core/errors.js';
import { MAX_JSON_DEPTH, nestedDeeperThan } from '../../../core/http/json-guard.js';
import {
  OutboundBlockedError,
  type OutboundHttp,
  type OutboundResponse,
  OutboundTimeoutError,
} from '../../../core/http/outbound.js';
import type { FlowiseLoader } from '../definition.js';

/**
 * Flowise's Cheerio Web Scraper, API Loader, GitHub and SearchApi loaders, run by the vector upsert: each
 * request through the platform's outbound client (private addresses only when `OUTBOUND_ALLOW_HOSTS` names
 * them, every redirect checked again), bounded in pages, bytes and time, and ended when the caller goes.
 * A page is not read here: its HTML (or the part the selector picks) goes to the knowledge base's HTML
 * loader, like any HTML document.
 */
export interface WebLoaderConfig {
  http: OutboundHttp;
  /** One request's time limit. */
  timeoutMs: number;
  /** One page's (or API answer's) size limit. */
  maxPageBytes: number;
  /** What one upsert's loaders may fetch together. */
  maxTotalBytes: number;
  /** Pages one crawl or sitemap loads (a limit of 0, or above this, is this). */
  maxPages: number;
  /** How long one upsert's loaders may take together. */
  deadlineMs: number;
  /** Where CSS selectors run (a CPU worker with a deadline): cheerio's engine can take exponential time. */
  cpu: { pool: CpuPool; timeoutMs: number };
  /** SearchApi.io's base URL (`FLOWISE_SEARCHAPI_URL`): the SearchApi loader asks `{searchApiUrl}/api/v1/search`. */
  searchApiUrl: string;
}

/**
 * Each SearchApi or GitHub loader's key, by loader id: its canvas credential's (`searchApiKey`,
 * `accessToken`), else the account's Flowise variable of LangChain's environment name
 * (`SEARCHAPI_API_KEY`, `GITHUB_ACCESS_TOKEN`); the upsert resolves them.
 */
export type LoaderKeys = Readonly<Record<string, string>>;
export const SEARCHAPI_KEY = 'SEARCHAPI_API_KEY';
export const GITHUB_TOKEN = 'GITHUB_ACCESS_TOKEN';

/** A document a loader produced, as the upsert ingests it. */
export interface LoadedDocument {
  source: 'html' | 'markdown' | 'text';
  content: string;
  title: string;
  metadata: Record<string, unknown>;
  chunkSize?: number;
}

/** The loader inputs the vector upsert's `overrideConfig` may change (Flowise's input names). */
const OVERRIDABLE = new Set([
  'url',
  'selector',
  'limit',
  'relativeLinksMethod',
  'metadata',
  'method',
  'headers',
  'body',
  'chunkSize',
  'repoLink',
  'branch',
  'recursive',
  'githubInstanceApi',
  'ignorePath',
  'query',
  'customParameters',
]);
const USER_AGENT = 'api-platform-flowise-loader/0.1';
const HTML_ACCEPT = 'text/html, application/xhtml+xml, text/plain;q=0.8, */*;q=0.5';

/**
 * Each loader with the upsert's `overrideConfig` applied (by input name, or `{input: {nodeId: value}}`).
 * `known` is every loader id of the flow (of all its vector stores): a per-node value names one of them,
 * and applies to that loader only.
 */
export function withOverrides(
  loaders: FlowiseLoader[],
  override: Record<string, unknown>,
  known: ReadonlySet<string> = new Set(loaders.map((l) => l.id)),
): FlowiseLoader[] {
  const refused = Object.keys(override).filter((k) => !OVERRIDABLE.has(k));
  if (refused.length > 0)
    throw validationError('Invalid overrideConfig', [
      {
        field: 'overrideConfig',
        message: `the vector upsert changes loader inputs (${[...OVERRIDABLE].join(', ')}), not: ${refused.slice(0, 10).join(', ')}`,
      },
    ]);
  const ids = known;
  return loaders.map((loader) => {
    const out: Record<string, unknown> = { ...loader };
    for (const [key, raw] of Object.entries(override)) {
      let value: unknown = raw;
      // Per node, as Flowise allows: `{"url": {"cheerioWebScraper_0": "…"}}`. An object input
      // (metadata, headers, body) is per node only when every key is a loader's id.
      const object = typeof raw === 'object' && raw !== null && !Array.isArray(raw);
      const objectInput =
        key === 'metadata' || key === 'headers' || key === 'body' || key === 'customParameters';
      const entries = object ? (raw as Record<string, unknown>) : {};
      const perNode =
        object &&
        (objectInput
          ? Object.keys(entries).length > 0 && Object.keys(entries).every((k) => ids.has(k))
          : true);
      if (perNode) {
        const strangers = Object.keys(entries).filter((id) => !ids.has(id));
        if (strangers.length > 0 || Object.keys(entries).length === 0)
          throw validationError('Invalid overrideConfig', [
            {
              field: `overrideConfig.${key}`,
              message: `names loaders this flow does not have: ${strangers.slice(0, 10).join(', ') || '(none)'}`,
            },
          ]);
        if (!(loader.id in entries)) continue;
        value = entries[loader.id];
      }
      out[key] = checkedInput(key, value);
    }
    // The canvas's headers (an Authorization key) belong to the canvas's address: a caller who moves the
    // loader to another origin without sending headers of its own does not get them sent there.
    if (loader.type === 'api' && !('headers' in override) && originOf(out.url) !== originOf(loader.url))
      out.headers = {};
    // The GitHub token (the node's githubApi credential or the account's variable) goes to the flow's own
    // API origin only: a caller who may only upsert does not get to send it to a host of its choosing.
    if (loader.type === 'github') out.tokenOrigin = loader.tokenOrigin ?? originOf(loader.githubInstanceApi);
    return out as FlowiseLoader;
  });
}

const originOf = (url: unknown): string | null => {
  try {
    return typeof url === 'string' ? new URL(url).origin : null;
  } catch {
    return null;
  }
};

function checkedInput(key: string, value: unknown): unknown {
  const bad = (message: string) =>
    validationError('Invalid overrideConfig', [{ field: `overrideConfig.${key}`, message }]);
  switch (key) {
    case 'recursive':
      if (typeof value !== 'boolean' && value !== 'true' && value !== 'false') throw bad('must be a boolean');
      return value === true || value === 'true';
    case 'ignorePath': {
      const parsed = typeof value === 'string' ? parseJson(value, bad) : value;
      if (!Array.isArray(parsed) || !parsed.every((p) => typeof p === 'string'))
        throw bad('must be a JSON array of paths');
      return parsed;
    }
    case 'githubInstanceApi':
      if (typeof value !== 'string' || value.length > 4_000) throw bad('must be a string');
      return value.trim().replace(/\/+$/, '');
    case 'repoLink':
    case 'branch':
    case 'url':
    case 'selector':
    case 'query':
      if (typeof value !== 'string' || value.length > 4_000) throw bad('must be a string');
      return value.trim();
    case 'relativeLinksMethod':
      if (value !== '' && value !== 'webCrawl' && value !== 'scrapeXMLSitemap')
        throw bad('must be webCrawl, scrapeXMLSitemap or empty');
      return value;
    case 'method':
      if (value !== 'GET' && value !== 'POST') throw bad('must be GET or POST');
      return value;
    case 'limit':
    case 'chunkSize': {
      const n = typeof value === 'number' ? value : Number(value);
      const [min, max] = key === 'limit' ? [0, 1_000_000] : [50, 20_000];
      if (!Number.isInteger(n) || n < min || n > max)
        throw bad(`must be a whole number from ${min} to ${max}`);
      return n;
    }
    case 'headers':
    case 'customParameters':
    case 'metadata': {
      const parsed = typeof value === 'string' ? parseJson(value, bad) : value;
      if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
        throw bad('must be a JSON object');
      return key === 'headers'
        ? Object.fromEntries(Object.entries(parsed).map(([k, v]) => [k, String(v)]))
        : parsed;
    }
    default:
      return typeof value === 'string' ? parseJson(value, bad) : value;
  }
}

function parseJson(text: string, bad: (message: string) => Error): unknown {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text) as unknown;
  } catch {
    throw bad('is not JSON');
  }
  // It becomes the documents' metadata (or a request body): nesting past the limit overflows their save.
  if (nestedDeeperThan(parsed)) throw bad(`is nested deeper than ${MAX_JSON_DEPTH} levels`);
  return parsed;
}

/** One upsert's time and byte budget, shared by all the loaders it runs (of every vector store). */
export function loaderBudget(config: WebLoaderConfig, signal?: AbortSignal): Budget {
  return { bytes: 0, until: Date.now() + config.deadlineMs, signal };
}

/**
 * Runs the loaders one after the other, within one time and byte budget (the upsert's, when given);
 * `keys` are the account's variables the SearchApi and GitHub loaders read their keys from.
 */
export async function runLoaders(
  config: WebLoaderConfig,
  loaders: FlowiseLoader[],
  budget: Budget = loaderBudget(config),
  keys: LoaderKeys = {},
): Promise<LoadedDocument[]> {
  const out: LoadedDocument[] = [];
  for (const loader of loaders) {
    const docs =
      loader.type === 'web'
        ? await scrape(config, loader, budget)
        : loader.type === 'api'
          ? await callApi(config, loader, budget)
          : loader.type === 'searchapi'
            ? await searchApi(config, loader, budget, keys[loader.id] ?? '')
            : await githubFiles(config, loader, budget, keys[loader.id] ?? '');
    for (const doc of docs)
      out.push({
        ...doc,
        metadata: { ...doc.metadata, ...loader.metadata },
        ...(loader.chunkSize !== undefined ? { chunkSize: loader.chunkSize } : {}),
      });
  }
  return out;
}

export interface Budget {
  bytes: number;
  until: number;
  /** The caller's going (a client that disconnected): the loaders stop, their request in flight too. */
  signal: AbortSignal | undefined;
}

/**
 * A URL as errors show it: its origin and path, never its query or fragment (which may hold a key, as
 * SearchApi's and SerpAPI's `api_key` do) nor user info.
 */
export function shownUrl(raw: string | URL): string {
  try {
    const url = typeof raw === 'string' ? new URL(raw) : raw;
    return `${url.origin}${url.pathname}`;
  } catch {
    return '(an invalid URL)';
  }
}

const cancelled = () => new AppError('GATEWAY_TIMEOUT', 'The upsert was cancelled: the client went away');

/** A parsed http(s) URL of a loader, or a 400 naming the loader's input. */
function loaderUrl(raw: string, loader: FlowiseLoader): URL {
  return loaderUrlOf(raw, loader, 'url');
}

function loaderUrlOf(raw: string, loader: FlowiseLoader, input: string): URL {
  let url: URL | null = null;
  try {
    url = new URL(raw);
  } catch {
    url = null;
  }
  if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:'))
    throw validationError(`Loader '${loader.id}' has no http(s) ${input}`, [
      {
        field: `flowData.${loader.id}.${input}`,
        message: `must be an absolute http(s) URL (or overrideConfig.${input})`,
      },
    ]);
  return url;
}

async function fetchOne(
  config: WebLoaderConfig,
  budget: Budget,
  request: { method: string; url: string; headers: Record<string, string>; body?: string },
  credentialHeaders: string[] = [],
  /** false: any status is answered (the caller reads the service's own error). */
  okOnly = true,
): Promise<OutboundResponse> {
  const left = budget.until - Date.now();
  if (budget.signal?.aborted) throw cancelled();
  if (left <= 0)
    throw new AppError('GATEWAY_TIMEOUT', `The loaders took longer than ${config.deadlineMs} ms`, {
      timeoutMs: config.deadlineMs,
    });
  const maxBytes = Math.min(config.maxPageBytes, config.maxTotalBytes - budget.bytes);
  if (maxBytes <= 0) throw tooMuch(config);
  let res: OutboundResponse;
  try {
    res = await config.http({
      ...request,
      headers: { 'user-agent': USER_AGENT, ...request.headers },
      timeoutMs: Math.min(config.timeoutMs, left),
      maxResponseBytes: maxBytes,
      credentialHeaders,
      ...(budget.signal ? { signal: budget.signal } : {}),
    });
  } catch (error) {
    if (budget.signal?.aborted) throw cancelled();
    // Over what the upsert has left, not over one page's limit: the budget is spent.
    if (
      error instanceof OutboundBlockedError &&
      error.message.startsWith('Response is larger than') &&
      maxBytes < config.maxPageBytes
    )
      throw tooMuch(config);
    throw fetchError(error, request.url, config);
  }
  budget.bytes += res.bytes?.length ?? Buffer.byteLength(res.body, 'utf8');
  if (budget.bytes > config.maxTotalBytes) throw tooMuch(config);
  if (okOnly && (res.status < 200 || res.status > 299))
    throw new AppError('UPSTREAM_ERROR', `${shownUrl(request.url)} answered with status ${res.status}`, {
      url: shownUrl(request.url),
      status: res.status,
    });
  return res;
}

const tooMuch = (config: WebLoaderConfig) =>
  new AppError('PAYLOAD_TOO_LARGE', `The loaders fetched more than ${config.maxTotalBytes} bytes`, {
    maxBytes: config.maxTotalBytes,
    budget: true,
  });

function fetchError(error: unknown, fullUrl: string, config: WebLoaderConfig): AppError {
  if (error instanceof AppError) return error;
  const url = shownUrl(fullUrl);
  if (error instanceof OutboundTimeoutError)
    return new AppError('GATEWAY_TIMEOUT', `${url} did not answer within ${config.timeoutMs} ms`, { url });
  if (error instanceof OutboundBlockedError) {
    if (error.message.startsWith('Response is larger than'))
      return new AppError('PAYLOAD_TOO_LARGE', `${url} sent more than ${config.maxPageBytes} bytes`, {
        url,
        maxBytes: config.maxPageBytes,
      });
    // The guard's message names the address it refused, not the URL's query.
    return new AppError('FORBIDDEN', `The URL is not allowed: ${error.message.replaceAll(fullUrl, url)}`, {
      url,
    });
  }
  const code = (error as { code?: unknown } | null)?.code;
  return new AppError('UPSTREAM_ERROR', `Fetching ${url} failed`, {
    url,
    reason: typeof code === 'string' ? code : 'network error',
  });
}

const mediaType = (res: OutboundResponse) =>
  (res.headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase() ?? '';

/** Flowise's API Loader: one document, the answer's JSON pretty-printed (or its text). */
async function callApi(
  config: WebLoaderConfig,
  loader: FlowiseLoader & { type: 'api' },
  budget: Budget,
): Promise<Omit<LoadedDocument, 'chunkSize'>[]> {
  const url = loaderUrl(loader.url, loader);
  const post = loader.method === 'POST';
  const res = await fetchOne(
    config,
    budget,
    {
      method: loader.method,
      url: url.toString(),
      headers: {
        accept: 'application/json, text/plain;q=0.9, */*;q=0.5',
        ...(post ? { 'content-type': 'application/json' } : {}),
        ...loader.headers,
      },
      ...(post && loader.body !== undefined ? { body: JSON.stringify(loader.body) } : {}),
    },
    // Every header the canvas sets may carry a key: none follows a redirect to another origin.
    Object.keys(loader.headers),
  );
  let content = res.body;
  try {
    const parsed = JSON.parse(res.body) as unknown;
    // Pretty-printing recurses: an answer nested past the limit is kept as sent.
    if (!nestedDeeperThan(parsed)) content = JSON.stringify(parsed, null, 2);
  } catch {
    // Not JSON: the text as sent, as axios hands it to the loader.
  }
  if (content.trim() === '')
    throw new AppError('UNPROCESSABLE', `${shownUrl(url)} answered with an empty body`, {
      url: shownUrl(url),
    });
  return [{ source: 'text', content, title: url.toString(), metadata: { url: url.toString() } }];
}

/** Flowise's Cheerio Web Scraper: the page, or the pages of a crawl or a sitemap. */
async function scrape(
  config: WebLoaderConfig,
  loader: FlowiseLoader & { type: 'web' },
  budget: Budget,
): Promise<Omit<LoadedDocument, 'chunkSize'>[]> {
  const start = loaderUrl(loader.url, loader);
  const limit = loader.limit === 0 ? config.maxPages : Math.min(loader.limit, config.maxPages);
  const docs: Omit<LoadedDocument, 'chunkSize'>[] = [];
  const add = async (url: URL, html: string) => {
    const content = loader.selector ? await selected(config, html, loader.selector, loader) : html;
    if (content.trim() !== '')
      docs.push({ source: 'html', content, title: url.toString(), metadata: { source: url.toString() } });
  };
  if (loader.relativeLinksMethod === '') {
    const page = await fetchPage(config, budget, start);
    if (page === null)
      throw new AppError('UNSUPPORTED_MEDIA_TYPE', `${shownUrl(start)} is not an HTML page`, {
        url: shownUrl(start),
      });
    await add(start, page);
    return docs;
  }
  if (loader.relativeLinksMethod === 'scrapeXMLSitemap') {
    const sitemap = await fetchOne(config, budget, {
      method: 'GET',
      url: start.toString(),
      headers: { accept: 'application/xml, text/xml, */*;q=0.5' },
    });
    const pages = sitemapLinks(sitemap.body, start).slice(0, limit);
    if (pages.length === 0)
      throw new AppError('UNPROCESSABLE', 'No relative links found', { url: shownUrl(start) });
    for (const url of pages) {
      const page = await pageOrSkip(config, budget, url);
      if (page !== null) await add(url, page);
    }
    return docs;
  }
  // A web crawl: breadth first from the URL, links of the same origin, each page fetched once.
  const queue = [start];
  const seen = new Set([key(start)]);
  let loaded = 0;
  while (queue.length > 0 && loaded < limit) {
    const url = queue.shift() as URL;
    const page =
      loaded === 0 && url === start
        ? await fetchPage(config, budget, url)
        : await pageOrSkip(config, budget, url);
    if (page === null) continue;
    loaded++;
    await add(url, page);
    for (const link of pageLinks(page, url)) {
      if (link.origin !== start.origin || seen.has(key(link))) continue;
      seen.add(key(link));
      queue.push(link);
    }
  }
  if (docs.length === 0)
    throw new AppError('UNPROCESSABLE', 'No relative links found', { url: shownUrl(start) });
  return docs;
}

const key = (url: URL) => `${url.origin}${url.pathname}${url.search}`;

/** A page's HTML (text pages too); null for what is not a web page (a PDF: Flowise skips it too). */
async function fetchPage(config: WebLoaderConfig, budget: Budget, url: URL): Promise<string | null> {
  if (url.pathname.toLowerCase().endsWith('.pdf')) return null;
  const res = await fetchOne(config, budget, {
    method: 'GET',
    url: url.toString(),
    headers: { accept: HTML_ACCEPT },
  });
  const type = mediaType(res);
  if (type !== '' && !type.startsWith('text/') && type !== 'application/xhtml+xml') return null;
  return res.body;
}

/** A later page of a crawl: one that fails is skipped (as Flowise does); the budget's limits still end it. */
async function pageOrSkip(config: WebLoaderConfig, budget: Budget, url: URL): Promise<string | null> {
  try {
    return await fetchPage(config, budget, url);
  } catch (error) {
    // The upsert's own limits end the crawl; one page that fails is skipped.
    if (error instanceof AppError && (error.code === 'GATEWAY_TIMEOUT' || error.details.budget === true))
      throw error;
    return null;
  }
}

/** The largest page a CSS selector is applied to. */
const MAX_SELECTOR_BYTES = 2 * 1024 * 1024;
// Linear scans: `[^<>]` stops at the next tag, so a page of unclosed `<a ` cannot backtrack over itself.
const HREF = /<a\b[^<>]*?\bhref\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'<>]+))/gi;
const LOC = /<loc>([^<]*)<\/loc>/gi;
const MAX_LINKS = 10_000;

/** The page's links as absolute http(s) URLs without their fragment (a scan of `<a href>`, no DOM). */
export function pageLinks(html: string, base: URL): URL[] {
  const out: URL[] = [];
  for (const match of html.matchAll(HREF)) {
    const href = decodeEntities(match[1] ?? match[2] ?? match[3] ?? '');
    const url = absolute(href, base);
    if (url) out.push(url);
    if (out.length >= MAX_LINKS) break;
  }
  return out;
}

/** A sitemap's `<loc>` addresses of the sitemap's origin (Flowise's "relative links" of a sitemap). */
export function sitemapLinks(xml: string, base: URL): URL[] {
  const out: URL[] = [];
  for (const match of xml.matchAll(LOC)) {
    const url = absolute(decodeEntities((match[1] ?? '').trim()), base);
    if (url && url.origin === base.origin) out.push(url);
    if (out.length >= MAX_LINKS) break;
  }
  return out;
}

function absolute(href: string, base: URL): URL | null {
  try {
    const url = new URL(href.trim(), base);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') return null;
    url.hash = '';
    return url;
  } catch {
    return null;
  }
}

const decodeEntities = (s: string) =>
  s
    .replace(/&amp;/g, '&')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&#39;|&apos;/g, "'");

/** The elements the selector picks, as HTML (cheerio's selector engine on a CPU worker; a bad selector is a 400). */
async function selected(
  config: WebLoaderConfig,
  html: string,
  selector: string,
  loader: FlowiseLoader,
): Promise<string> {
  // The page crosses to the worker whole: a larger page is refused.
  if (Buffer.byteLength(html, 'utf8') > MAX_SELECTOR_BYTES)
    throw new AppError(
      'PAYLOAD_TOO_LARGE',
      `A page over ${MAX_SELECTOR_BYTES} bytes is not read with a CSS selector (loader '${loader.id}')`,
      { maxBytes: MAX_SELECTOR_BYTES },
    );
  try {
    return await config.cpu.pool.run(SELECT_TASK, { html, selector }, { timeoutMs: config.cpu.timeoutMs });
  } catch (error) {
    if (error instanceof CpuTaskError && error.limit === null && error.message.includes('invalid selector'))
      throw validationError(`Loader '${loader.id}' has an invalid CSS selector`, [
        { field: `flowData.${loader.id}.selector`, message: 'is not a CSS selector' },
      ]);
    if (error instanceof CpuTaskError && (error.limit === 'time' || error.limit === 'memory'))
      throw new AppError(
        'UNPROCESSABLE',
        `Loader '${loader.id}': the CSS selector took too long on this page (it ${error.message}); use a simpler selector`,
      );
    if (error instanceof CpuTaskError && error.limit === 'queue')
      throw new AppError('SERVICE_UNAVAILABLE', 'The server is busy; try again', {}, { 'retry-after': '5' });
    throw error;
  }
}

const SELECT_TASK = cpuTask<{ html: string; selector: string }, string>(
  new URL('./selector-task.js', import.meta.url),
  'selectHtml',
);

/** Files LangChain's loader leaves out as binary (by extension), plus anything holding a NUL byte. */
const BINARY_FILE =
  /\.(png|jpe?g|gif|bmp|ico|webp|svgz|tiff?|psd|pdf|zip|gz|tgz|bz2|xz|7z|rar|tar|jar|war|exe|dll|so|dylib|bin|o|a|class|pyc|wasm|woff2?|ttf|otf|eot|mp[34]|m4a|wav|ogg|flac|avi|mov|mkv|webm|sqlite|db|docx?|xlsx?|pptx?|odt|ods|odp)$/i;
/** Files one GitHub loader reads, and directory listings it asks for. */
const MAX_GITHUB_FILES = 500;
const MAX_GITHUB_LISTINGS = 200;

interface GithubEntry {
  type: string;
  path: string;
  size?: number;
  download_url?: string | null;
}

/**
 * Flowise's GitHub loader, as LangChain's GithubRepoLoader reads a repository: the contents API
 * (`GET {api}/repos/{owner}/{repo}/contents/{path}?ref={branch}`) for each directory (subdirectories
 * when `recursive`), each file's text from its `download_url`; binary files, empty entries (submodules)
 * and `ignorePath` left out. A document a file: `{source: path, repository, branch}`.
 * With a token (a private repository), `Authorization: Bearer` goes to the API's origin only: not to a
 * `download_url` elsewhere (GitHub's raw host gets a private file's own token in its URL), and the
 * outbound client drops it on a redirect to another origin.
 */
async function githubFiles(
  config: WebLoaderConfig,
  loader: FlowiseLoader & { type: 'github' },
  budget: Budget,
  token: string,
): Promise<Omit<LoadedDocument, 'chunkSize'>[]> {
  const link = loaderUrlOf(loader.repoLink, loader, 'repoLink');
  const [, owner, repo, , initialPath = ''] =
    /^\/([^/]+)\/([^/]+?)(?:\.git)?\/?(\/tree\/[^/]+\/(.+))?$/.exec(link.pathname) ?? [];
  if (!owner || !repo)
    throw validationError(`Loader '${loader.id}' names no repository`, [
      { field: `flowData.${loader.id}.repoLink`, message: 'must be https://<host>/<owner>/<repo>' },
    ]);
  const api = loaderUrlOf(loader.githubInstanceApi, loader, 'githubInstanceApi');
  const base = api.toString().replace(/\/+$/, '');
  // Only to the API's origin, and only when that is the flow's own (not an upsert's override).
  const tokenOrigin = loader.tokenOrigin === undefined ? api.origin : loader.tokenOrigin;
  const auth = (url: string): Record<string, string> =>
    token !== '' && new URL(url).origin === api.origin && api.origin === tokenOrigin
      ? { authorization: `Bearer ${token}` }
      : {};
  const repository = `${link.origin}/${owner}/${repo}`;
  const ignored = loader.ignorePath.map((p) => p.replace(/^\/+/, '').replace(/\*+$/, '').replace(/\/+$/, ''));
  const skip = (path: string) => ignored.some((p) => p !== '' && (path === p || path.startsWith(`${p}/`)));
  const docs: Omit<LoadedDocument, 'chunkSize'>[] = [];
  const dirs = [initialPath];
  let listings = 0;
  while (dirs.length > 0) {
    const dir = dirs.shift() as string;
    if (++listings > MAX_GITHUB_LISTINGS)
      throw new AppError(
        'PAYLOAD_TOO_LARGE',
        `The repository has more than ${MAX_GITHUB_LISTINGS} directories`,
      );
    const path = dir.split('/').map(encodeURIComponent).join('/');
    const listing = `${base}/repos/${encodeURIComponent(owner)}/${encodeURIComponent(repo)}/contents/${path}?ref=${encodeURIComponent(loader.branch)}`;
    let res: OutboundResponse;
    try {
      res = await fetchOne(config, budget, {
        method: 'GET',
        url: listing,
        headers: { accept: 'application/vnd.github+json', ...auth(listing) },
      });
    } catch (error) {
      // GitHub answers 404 (or 401/403) for a private repository asked without a token.
      const status = error instanceof AppError ? error.details.status : undefined;
      if (token === '' && (status === 401 || status === 403 || status === 404))
        throw new AppError(
          'UPSTREAM_ERROR',
          `GitHub answered ${String(status)} for ${repository}: a private repository needs a token (a githubApi credential named by the node, or the account's ${GITHUB_TOKEN} Flowise variable)`,
          { url: shownUrl(listing), status },
        );
      throw error;
    }
    let listed: unknown;
    try {
      listed = JSON.parse(res.body);
    } catch {
      throw new AppError('UPSTREAM_ERROR', 'GitHub answered a directory listing that is not JSON', {
        path: dir,
      });
    }
    const entries = (Array.isArray(listed) ? listed : [listed]) as GithubEntry[];
    for (const entry of entries) {
      if (typeof entry !== 'object' || entry === null || typeof entry.path !== 'string') continue;
      if (skip(entry.path)) continue;
      if (entry.type === 'dir') {
        if (loader.recursive) dirs.push(entry.path);
        continue;
      }
      if (entry.type !== 'file' || entry.size === 0 || BINARY_FILE.test(entry.path)) continue;
      if (typeof entry.download_url !== 'string') continue;
      if (docs.length >= MAX_GITHUB_FILES)
        throw new AppError(
          'PAYLOAD_TOO_LARGE',
          `The repository has more than ${MAX_GITHUB_FILES} files to load`,
        );
      const download = new URL(entry.download_url, api).toString();
      const file = await fetchOne(config, budget, { method: 'GET', url: download, headers: auth(download) });
      const content = file.bytes ? file.bytes.toString('utf8') : file.body;
      if (content.includes('\u0000') || content.trim() === '') continue;
      docs.push({
        source: /\.(md|mdx|markdown)$/i.test(entry.path) ? 'markdown' : 'text',
        content,
        title: entry.path,
        metadata: { source: entry.path, repository, branch: loader.branch },
      });
    }
  }
  if (docs.length === 0)
    throw new AppError('UNPROCESSABLE', `No text files found in ${repository}`, { repository });
  return docs;
}

/** The answer's parts LangChain's SearchApiLoader makes documents of, in its order. */
const SEARCHAPI_PARTS = [
  'answer_box',
  'shopping_results',
  'knowledge_graph',
  'organic_results',
  'transcripts',
] as const;

/**
 * Flowise's SearchApi loader, as LangChain's SearchApiLoader reads SearchApi.io: one
 * `GET {FLOWISE_SEARCHAPI_URL}/api/v1/search?engine=google&q=…` with the custom parameters (an engine
 * of their own: `youtube_transcripts` with `video_id`), the key as `Authorization: Bearer` (SearchApi
 * takes it so; LangChain puts it in the query, where logs and errors would show it). A transcript is
 * one document (its lines' `text`, a line each); each answer box, shopping, knowledge-graph or organic
 * result is one (its JSON), `{source: 'SearchApi', responseType}`.
 */
async function searchApi(
  config: WebLoaderConfig,
  loader: FlowiseLoader & { type: 'searchapi' },
  budget: Budget,
  key: string,
): Promise<Omit<LoadedDocument, 'chunkSize'>[]> {
  if (key === '')
    throw validationError(`Loader '${loader.id}' has no SearchApi key`, [
      {
        field: `flowData.${loader.id}.credential`,
        message: `name a searchApi credential of the account (/api/v1/credentials), or add the key as the account's Flowise variable ${SEARCHAPI_KEY} (/flowise/api/v1/variables)`,
      },
    ]);
  const params = new URLSearchParams({ engine: 'google', q: loader.query });
  for (const [name, value] of Object.entries(loader.customParameters)) {
    // The key is the account's, sent in the header: none rides in the query.
    if (name === 'api_key' || name === 'apiKey' || value === undefined || value === null) continue;
    params.set(name, typeof value === 'object' ? JSON.stringify(value) : String(value));
  }
  const url = `${config.searchApiUrl}/api/v1/search?${params}`;
  const res = await fetchOne(
    config,
    budget,
    { method: 'GET', url, headers: { accept: 'application/json', authorization: `Bearer ${key}` } },
    [],
    false,
  );
  let body: Record<string, unknown> | null = null;
  try {
    const parsed = JSON.parse(res.body) as unknown;
    if (parsed && typeof parsed === 'object' && !Array.isArray(parsed))
      body = parsed as Record<string, unknown>;
  } catch {
    body = null;
  }
  const said = typeof body?.error === 'string' ? body.error.slice(0, 500) : null;
  if (res.status < 200 || res.status > 299 || said !== null || body === null)
    throw new AppError(
      'UPSTREAM_ERROR',
      `SearchApi ${body === null && res.status < 300 ? 'did not answer JSON' : `answered with status ${res.status}`}${said ? `: ${said}` : ''}`,
      { url: shownUrl(url), status: res.status },
    );
  const docs: Omit<LoadedDocument, 'chunkSize'>[] = [];
  const title = `SearchApi ${params.get('engine')}`;
  for (const part of SEARCHAPI_PARTS) {
    if (!(part in body)) continue;
    const value = body[part];
    const results = Array.isArray(value) ? value : [value];
    const metadata = { source: 'SearchApi', responseType: part };
    if (part === 'transcripts') {
      const content = results
        .map((r) => (r && typeof r === 'object' ? (r as { text?: unknown }).text : undefined))
        .filter((t): t is string => typeof t === 'string')
        .join('\n');
      if (content.trim() !== '') docs.push({ source: 'text', content, title, metadata });
      continue;
    }
    for (const result of results)
      docs.push({ source: 'text', content: JSON.stringify(result), title, metadata });
  }
  if (docs.length === 0)
    throw new AppError('UNPROCESSABLE', `SearchApi answered no results for loader '${loader.id}'`, {
      engine: params.get('engine'),
    });
  return docs;
}
