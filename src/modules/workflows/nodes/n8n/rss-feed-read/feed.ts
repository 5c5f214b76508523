import type Parser from 'rss-parser';
import type { OutboundResponse } from '../../../../../core/http/outbound.js';
import { NodeOperationError } from '../../../engine/node-type.js';
import type { EngineDeps, Json } from '../../../engine/types.js';

/** Feeds larger than this are refused before they are parsed (the parser holds the whole tree). */
export const MAX_FEED_BYTES = 5 * 1024 * 1024;
/** Longest one fetch may take (OUTBOUND_TIMEOUT_MS caps it further). */
const FETCH_TIMEOUT_MS = 20_000;
/** Items kept from one feed. */
export const MAX_FEED_ITEMS = 1_000;

/**
 * A feed's items as rss-parser reads them (`title`, `link`, `isoDate`, `content`, …), fetched through
 * the platform's guarded outbound client — never rss-parser's own fetch, which would skip the guard.
 */
export async function readFeed(
  deps: Pick<EngineDeps, 'http'>,
  url: string,
  customFields: string[] = [],
): Promise<Array<Record<string, Json>>> {
  if (!url) throw new NodeOperationError('The parameter "URL" has to be set!');
  try {
    new URL(url);
  } catch {
    throw new NodeOperationError('The provided "URL" is not valid!');
  }
  let res: OutboundResponse;
  try {
    res = await deps.http({
      method: 'GET',
      url,
      headers: { accept: 'application/rss+xml, application/atom+xml, application/xml, text/xml, */*' },
      timeoutMs: FETCH_TIMEOUT_MS,
    });
  } catch (err) {
    throw new NodeOperationError(`The feed at "${url}" could not be fetched: ${(err as Error).message}`);
  }
  if (res.status >= 400) throw new NodeOperationError(`The feed at "${url}" answered HTTP ${res.status}`);
  if (Buffer.byteLength(res.body) > MAX_FEED_BYTES)
    throw new NodeOperationError(`The feed is larger than ${MAX_FEED_BYTES} bytes`);
  // Loaded on first use (with xml2js): a platform that reads no feeds never loads them.
  const { default: FeedParser } = await import('rss-parser');
  const parser: Parser = new FeedParser(
    customFields.length > 0 ? { customFields: { item: customFields } } : {},
  );
  let feed: Awaited<ReturnType<typeof parser.parseString>>;
  try {
    feed = await parser.parseString(res.body);
  } catch (err) {
    throw new NodeOperationError(`The feed at "${url}" is not valid RSS or Atom: ${(err as Error).message}`);
  }
  // JSON round trip: rss-parser's objects may hold undefined fields; items carry plain JSON only.
  return JSON.parse(JSON.stringify((feed.items ?? []).slice(0, MAX_FEED_ITEMS))) as Array<
    Record<string, Json>
  >;
}
