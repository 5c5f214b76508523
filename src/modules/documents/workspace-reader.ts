import { AppError } from '../../core/errors.js';
import type { OutboundHttp } from '../../core/http/outbound.js';
import type { WorkspacePage } from './loaders/index.js';

/** The workspace API version the platform speaks (Notion's, as the workspace-to-docs workflow). */
const NOTION_VERSION = '2022-06-28';
const PAGE_SIZE = 100;
/** 20 requests of 100: a page of more top-level blocks is refused rather than cut short. */
const MAX_REQUESTS = 20;

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

export interface WorkspaceReaderDeps {
  /** `WORKSPACE_API_URL`, e.g. `https://api.notion.com/v1`. */
  baseUrl: string;
  http: OutboundHttp;
  timeoutMs: number;
  /** The account's workspace token (its `workspace-api-token` credential), or null. */
  token: (accountId: string) => Promise<string | null>;
  toMarkdown: (blocks: Json) => string;
}

function titleOf(page: Record<string, Json>): string {
  const properties = (page.properties ?? {}) as Record<string, Json>;
  for (const value of Object.values(properties)) {
    const property = value as Record<string, Json> | null;
    if (property?.type === 'title' && Array.isArray(property.title))
      return property.title.map((t) => String((t as Record<string, Json>)?.plain_text ?? '')).join('');
  }
  return '';
}

/**
 * Reads a workspace page as the workspace-to-docs workflow does: the page (for its title), then its
 * top-level blocks, page by page, converted to Markdown. Through the account's own credential.
 */
export function workspaceReader(deps: WorkspaceReaderDeps) {
  const base = deps.baseUrl.endsWith('/') ? deps.baseUrl.slice(0, -1) : deps.baseUrl;
  return (accountId: string) =>
    async (pageId: string): Promise<WorkspacePage> => {
      const token = await deps.token(accountId);
      if (!token)
        throw new AppError(
          'UNPROCESSABLE',
          "No workspace credential: create 'workspace-api-token' (httpBearerAuth, {token}) first",
        );
      const get = async (path: string): Promise<Record<string, Json>> => {
        const res = await deps.http({
          method: 'GET',
          url: `${base}${path}`,
          headers: {
            authorization: `Bearer ${token}`,
            'notion-version': NOTION_VERSION,
            accept: 'application/json',
          },
          timeoutMs: deps.timeoutMs,
        });
        let body: Record<string, Json> = {};
        try {
          body = JSON.parse(res.body) as Record<string, Json>;
        } catch {
          // reported below
        }
        if (res.status === 404)
          throw new AppError('NOT_FOUND', `Workspace page '${pageId}' was not found`, { pageId });
        if (res.status < 200 || res.status >= 300)
          throw new AppError('UPSTREAM_ERROR', `The workspace answered ${res.status}`, {
            status: res.status,
            message: typeof body.message === 'string' ? body.message : undefined,
          });
        return body;
      };
      const id = encodeURIComponent(pageId);
      const page = await get(`/pages/${id}`);
      const blocks: Json[] = [];
      let cursor: string | null = null;
      for (let requests = 0; ; requests++) {
        if (requests >= MAX_REQUESTS)
          throw new AppError(
            'UNPROCESSABLE',
            `The page has more than ${MAX_REQUESTS * PAGE_SIZE} top-level blocks`,
          );
        const query: string = cursor ? `&start_cursor=${encodeURIComponent(cursor)}` : '';
        const list = await get(`/blocks/${id}/children?page_size=${PAGE_SIZE}${query}`);
        if (Array.isArray(list.results)) blocks.push(...list.results);
        if (list.has_more !== true || typeof list.next_cursor !== 'string') break;
        cursor = list.next_cursor;
      }
      return { title: titleOf(page), markdown: deps.toMarkdown(blocks) };
    };
}
