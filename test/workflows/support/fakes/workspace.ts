import { type FakeServer, json, type ReceivedRequest, startFakeServer } from './fake-server.js';

/** A Notion rich-text object. */
export function richText(
  content: string,
  annotations: Partial<Record<'bold' | 'italic' | 'strikethrough' | 'underline' | 'code', boolean>> = {},
  href: string | null = null,
) {
  return {
    type: 'text',
    text: { content, link: href ? { url: href } : null },
    annotations: {
      bold: false,
      italic: false,
      strikethrough: false,
      underline: false,
      code: false,
      color: 'default',
      ...annotations,
    },
    plain_text: content,
    href,
  };
}

type RichText = ReturnType<typeof richText>;
const TIME = '2030-01-01T10:00:00.000Z';
const USER = { object: 'user', id: '9a3b5c1e-0000-4000-8000-000000000001' };
let seq = 0;

/** A Notion block object (`paragraph`, `heading_1`, `bulleted_list_item`, `code`, `to_do`, `divider`, …). */
export function notionBlock(
  type: string,
  text: Array<RichText | string> = [],
  extra: Record<string, unknown> = {},
) {
  seq += 1;
  return {
    object: 'block',
    id: `b0000000-0000-4000-8000-${String(seq).padStart(12, '0')}`,
    parent: { type: 'page_id', page_id: 'p' },
    created_time: TIME,
    last_edited_time: TIME,
    created_by: USER,
    last_edited_by: USER,
    has_children: false,
    archived: false,
    in_trash: false,
    type,
    [type]:
      type === 'divider'
        ? {}
        : {
            rich_text: text.map((t) => (typeof t === 'string' ? richText(t) : t)),
            color: 'default',
            ...extra,
          },
  };
}

export interface FakePage {
  title: string;
  blocks: Array<ReturnType<typeof notionBlock>>;
}

export interface FakeWorkspaceOptions {
  /** Pages by id; default: one page `page-123` titled "Release notes". */
  pages?: Record<string, FakePage>;
  /** The integration token the API expects as `Authorization: Bearer …`. */
  token?: string;
  /** Largest page of children answered (Notion: 100); smaller values exercise pagination. */
  maxPageSize?: number;
}

export const releaseNotesPage = (): FakePage => ({
  title: 'Release notes',
  blocks: [
    notionBlock('heading_1', ['Release notes']),
    notionBlock('paragraph', ['Faster ', richText('webhooks', { bold: true }), '.']),
    notionBlock('bulleted_list_item', ['HMAC signatures']),
    notionBlock('bulleted_list_item', [richText('See the docs', {}, 'https://docs.example.com')]),
    notionBlock('code', ['npm start'], { language: 'bash' }),
  ],
});

const notionError = (status: number, code: string, message: string) =>
  json(status, { object: 'error', status, code, message, request_id: 'req-fake' });

/**
 * A Notion-style workspace API (version 2022-06-28): `GET /v1/pages/{id}` and
 * `GET /v1/blocks/{id}/children?page_size=&start_cursor=` answering `{object: 'list', results,
 * next_cursor, has_more, type: 'block', block: {}}`. `url` includes `/v1` (use it as WORKSPACE_API_URL).
 */
export async function startFakeWorkspace(options: FakeWorkspaceOptions = {}): Promise<FakeServer> {
  const pages = options.pages ?? { 'page-123': releaseNotesPage() };
  const maxPageSize = options.maxPageSize ?? 100;
  const handler = (req: ReceivedRequest) => {
    if (options.token !== undefined && req.headers.authorization !== `Bearer ${options.token}`) {
      return notionError(401, 'unauthorized', 'API token is invalid.');
    }
    if (req.headers['notion-version'] !== '2022-06-28') {
      return notionError(400, 'missing_version', 'Notion-Version header failed validation.');
    }
    if (req.method !== 'GET') return notionError(405, 'invalid_request', 'Unsupported method.');
    const pageMatch = req.path.match(/^\/v1\/pages\/([^/]+)$/);
    if (pageMatch) {
      const id = decodeURIComponent(pageMatch[1] as string);
      const page = pages[id];
      if (!page) return notionError(404, 'object_not_found', `Could not find page with ID: ${id}.`);
      return json(200, {
        object: 'page',
        id,
        created_time: TIME,
        last_edited_time: TIME,
        created_by: USER,
        last_edited_by: USER,
        cover: null,
        icon: null,
        parent: { type: 'workspace', workspace: true },
        archived: false,
        in_trash: false,
        properties: { title: { id: 'title', type: 'title', title: [richText(page.title)] } },
        url: `https://www.notion.so/${page.title.replace(/\W+/g, '-')}-${id}`,
        public_url: null,
      });
    }
    const childrenMatch = req.path.match(/^\/v1\/blocks\/([^/]+)\/children$/);
    if (childrenMatch) {
      const id = decodeURIComponent(childrenMatch[1] as string);
      const page = pages[id];
      if (!page) return notionError(404, 'object_not_found', `Could not find block with ID: ${id}.`);
      const size = Math.min(Number(req.query.page_size ?? 100) || 100, maxPageSize);
      const cursor = req.query.start_cursor;
      const start = cursor ? page.blocks.findIndex((b) => b.id === cursor) : 0;
      if (start < 0) return notionError(400, 'validation_error', 'start_cursor is invalid.');
      const results = page.blocks.slice(start, start + size);
      const next = page.blocks[start + size];
      return json(200, {
        object: 'list',
        results,
        next_cursor: next ? next.id : null,
        has_more: next !== undefined,
        type: 'block',
        block: {},
        request_id: 'req-fake',
      });
    }
    return notionError(404, 'invalid_request_url', 'Invalid request URL.');
  };
  const server = await startFakeServer(handler, (status) => ({
    object: 'error',
    status,
    code: status >= 500 ? 'internal_server_error' : 'invalid_request',
    message: 'Fake failure',
  }));
  return { ...server, url: `${server.url}/v1` };
}
