import type { Config } from '../../../config.js';
import { createOutboundHttp } from '../../../core/http/outbound.js';
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
