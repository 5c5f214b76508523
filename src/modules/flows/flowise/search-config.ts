import type { Config } from '../../../config.js';
import { createOutboundHttp } from '../../../core/http/outbound.js';
import type { WebLoaderConfig } from './web-loaders.js';
import type { SearchConfig } from './web-search.js';

/**
 * The search tools' services as the server is configured: each base URL its own setting (a test or a
 * proxy points one elsewhere), reached like every outbound call — private addresses only when
 * `OUTBOUND_ALLOW_HOSTS` names them.
 */
export function searchConfig(config: Config): SearchConfig {
  const timeoutMs = Math.min(config.FLOWISE_SEARCH_TIMEOUT_MS, config.OUTBOUND_TIMEOUT_MS);
  return {
    http: createOutboundHttp({
      allowHosts: config.OUTBOUND_ALLOW_HOSTS.split(',')
        .map((h) => h.trim())
        .filter(Boolean),
      timeoutMs,
    }),
    baseUrls: {
      serpapi: config.FLOWISE_SERPAPI_URL,
      serper: config.FLOWISE_SERPER_URL,
      google: config.FLOWISE_GOOGLE_SEARCH_URL,
      brave: config.FLOWISE_BRAVE_SEARCH_URL,
    },
    timeoutMs,
  };
}

/** Pages one web crawl or sitemap loads, and how long one upsert's loaders may take together. */
const LOADER_MAX_PAGES = 50;
const LOADER_DEADLINE_MS = 120_000;
/** One page is parsed as one HTML document (the knowledge base's HTML limit). */
const LOADER_PAGE_BYTES = 10 * 1024 * 1024;

/**
 * The document loaders' outbound client (Cheerio Web Scraper, API Loader, GitHub, SearchApi): the outbound rule, a page at
 * most 10 MB (and `DOCUMENT_MAX_BYTES`), twice `DOCUMENT_MAX_BYTES` for one upsert, 50 pages a crawl.
 */
export function webLoaderConfig(config: Config, cpu: WebLoaderConfig['cpu']): WebLoaderConfig {
  const timeoutMs = config.OUTBOUND_TIMEOUT_MS;
  return {
    http: createOutboundHttp({
      allowHosts: config.OUTBOUND_ALLOW_HOSTS.split(',')
        .map((h) => h.trim())
        .filter(Boolean),
      timeoutMs,
      maxResponseBytes: Math.min(LOADER_PAGE_BYTES, config.DOCUMENT_MAX_BYTES),
    }),
    timeoutMs,
    maxPageBytes: Math.min(LOADER_PAGE_BYTES, config.DOCUMENT_MAX_BYTES),
    maxTotalBytes: 2 * config.DOCUMENT_MAX_BYTES,
    maxPages: LOADER_MAX_PAGES,
    deadlineMs: LOADER_DEADLINE_MS,
    cpu,
    searchApiUrl: config.FLOWISE_SEARCHAPI_URL.replace(/\/+$/, ''),
  };
}
