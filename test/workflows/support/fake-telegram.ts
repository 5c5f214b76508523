import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One Bot API call as the fake server saw it (multipart bodies parsed into fields and files). */
export interface TelegramCall {
  token: string;
  method: string;
  headers: IncomingHttpHeaders;
  /** JSON body, or the multipart text fields. */
  body: Record<string, unknown>;
  files: Array<{ field: string; fileName: string; contentType: string; bytes: Buffer }>;
}

type Answer = { status?: number; body: unknown } | 'hang';

/**
 * A local Telegram Bot API server speaking Telegram's wire format: `POST /bot{token}/{method}` with JSON
 * or multipart bodies, answered `{ok: true, result}` (or what a test set per method: `{ok: false,
 * description}`, or a hang), and `GET /file/bot{token}/{path}` serving files. Only `TOKEN` and
 * `OTHER_TOKEN` (a second bot) are known bots: another token gets Telegram's 401 `Unauthorized`.
 * Every call is recorded.
 */
export class FakeTelegram {
  static readonly TOKEN = '123456:TEST-token_abc';
  static readonly OTHER_TOKEN = '654321:OTHER-token_xyz';
  readonly calls: TelegramCall[] = [];
  readonly files = new Map<string, Buffer>();
  private readonly answers = new Map<string, Answer>();
  private server: Server | null = null;
  base = '';

  async start(): Promise<void> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const raw = Buffer.concat(chunks);
        const url = req.url ?? '';
        const file = /^\/file\/bot([^/]+)\/(.+)$/.exec(url);
        if (file) {
          const bytes =
            file[1] === FakeTelegram.TOKEN ? this.files.get(decodeURIComponent(file[2] ?? '')) : undefined;
          if (!bytes) return json(res, 404, { ok: false, error_code: 404, description: 'Not Found' });
          res.writeHead(200, { 'content-type': 'application/octet-stream' }).end(bytes);
          return;
        }
        const call = /^\/bot([^/]+)\/([A-Za-z]+)$/.exec(url.split('?')[0] ?? '');
        if (!call) return json(res, 404, { ok: false, error_code: 404, description: 'Not Found' });
        const [, token = '', method = ''] = call;
        const parsed = parseBody(req.headers, raw);
        this.calls.push({ token, method, headers: req.headers, ...parsed });
        if (token !== FakeTelegram.TOKEN && token !== FakeTelegram.OTHER_TOKEN)
          return json(res, 401, { ok: false, error_code: 401, description: 'Unauthorized' });
        const answer = this.answers.get(method);
        if (answer === 'hang') return; // never answers: the client's timeout must end it
        if (answer) return json(res, answer.status ?? 200, answer.body);
        json(res, 200, { ok: true, result: defaultResult(method, parsed.body) });
      });
    });
    await new Promise<void>((resolve) => this.server?.listen(0, '127.0.0.1', resolve));
    this.base = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  /** How `method` answers from now on (`'hang'`: never). */
  answer(method: string, answer: Answer): void {
    this.answers.set(method, answer);
  }

  refuse(method: string, description: string, code = 400): void {
    this.answer(method, { status: code, body: { ok: false, error_code: code, description } });
  }

  called(method: string): TelegramCall[] {
    return this.calls.filter((c) => c.method === method);
  }

  reset(): void {
    this.calls.length = 0;
    this.answers.clear();
    this.files.clear();
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => this.server?.close(() => resolve()));
  }
}

function json(res: import('node:http').ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
}

let nextMessageId = 100;

/** What Telegram answers a successful call with, close enough for the nodes to read. */
function defaultResult(method: string, body: Record<string, unknown>): unknown {
  if (method.startsWith('send') && method !== 'sendChatAction') {
    const message = {
      message_id: nextMessageId++,
      chat: { id: Number(body.chat_id) || body.chat_id, type: 'private' },
      date: 1_700_000_000,
      ...(typeof body.text === 'string' ? { text: body.text } : {}),
    };
    return method === 'sendMediaGroup' ? [message] : message;
  }
  if (method === 'editMessageText') return { message_id: Number(body.message_id), text: body.text };
  if (method === 'getChat') return { id: Number(body.chat_id), type: 'group', title: 'Team' };
  if (method === 'getChatAdministrators')
    return [
      { status: 'creator', user: { id: 1, is_bot: false, first_name: 'Ada' } },
      { status: 'administrator', user: { id: 2, is_bot: false, first_name: 'Bob' } },
    ];
  if (method === 'getChatMember') return { status: 'member', user: { id: Number(body.user_id) } };
  if (method === 'getFile')
    return {
      file_id: body.file_id,
      file_unique_id: 'u1',
      file_size: 4,
      file_path: `photos/${String(body.file_id)}.jpg`,
    };
  if (method === 'getWebhookInfo') return { url: '', pending_update_count: 0 };
  return true;
}

/** JSON or multipart/form-data (the fields as text, the files as bytes). */
function parseBody(headers: IncomingHttpHeaders, raw: Buffer): Pick<TelegramCall, 'body' | 'files'> {
  const type = headers['content-type'] ?? '';
  const boundary = /boundary=(?:"([^"]+)"|([^;]+))/.exec(type);
  if (!type.startsWith('multipart/form-data') || !boundary) {
    try {
      return {
        body: raw.length ? (JSON.parse(raw.toString('utf8')) as Record<string, unknown>) : {},
        files: [],
      };
    } catch {
      return { body: { __raw: raw.toString('utf8') }, files: [] };
    }
  }
  const delimiter = Buffer.from(`--${boundary[1] ?? boundary[2]}`);
  const body: Record<string, unknown> = {};
  const files: TelegramCall['files'] = [];
  let start = raw.indexOf(delimiter);
  while (start !== -1) {
    const next = raw.indexOf(delimiter, start + delimiter.length);
    if (next === -1) break;
    const part = raw.subarray(start + delimiter.length + 2, next - 2);
    const split = part.indexOf('\r\n\r\n');
    const head = part.subarray(0, split).toString('utf8');
    const content = part.subarray(split + 4);
    const name = /name="([^"]*)"/.exec(head)?.[1] ?? '';
    const fileName = /filename="([^"]*)"/.exec(head)?.[1];
    if (fileName !== undefined)
      files.push({
        field: name,
        fileName,
        contentType: /content-type:\s*([^\r\n]+)/i.exec(head)?.[1] ?? '',
        bytes: Buffer.from(content),
      });
    else body[name] = content.toString('utf8');
    start = next;
  }
  return { body, files };
}
