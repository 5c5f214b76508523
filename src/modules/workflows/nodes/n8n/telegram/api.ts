import { NodeOperationError } from '../../../engine/node-type.js';
import type { OutboundRequest, OutboundResponse } from '../../../engine/types.js';
import { toOutbound } from '../http-request/build.js';

/** Telegram's own Bot API server, n8n's `telegramApi` default. */
export const DEFAULT_BASE_URL = 'https://api.telegram.org';
/** A Bot API call waits this long at most (n8n's request helper has no bound; a hanging server must not hold a run). */
export const TELEGRAM_TIMEOUT_MS = 60_000;
/** The largest file a Bot API server lets bots download is 20 MB; a download above that is refused. */
export const MAX_DOWNLOAD_BYTES = 20 * 1024 * 1024;

/** A bot's access to the Bot API: `${baseUrl}/bot${token}/${method}`, as n8n's `apiRequest`. */
export interface TelegramBot {
  baseUrl: string;
  token: string;
  http(req: OutboundRequest): Promise<OutboundResponse>;
}

/** The bot of an n8n `telegramApi` credential; a missing token is the node's error, the token never in it. */
export function botOf(
  data: Record<string, string>,
  http: (req: OutboundRequest) => Promise<OutboundResponse>,
): TelegramBot {
  const token = data.accessToken ?? '';
  if (token === '') throw new NodeOperationError('The telegramApi credential has no access token');
  const baseUrl = (data.baseUrl || DEFAULT_BASE_URL).replace(/\/+$/, '');
  if (!/^https?:\/\//.test(baseUrl))
    throw new NodeOperationError(`The telegramApi credential's base URL '${baseUrl}' is not http(s)`);
  return { baseUrl, token, http };
}

/** A file part of a multipart call (an upload from an item's binary data). */
export interface TelegramFile {
  bytes: Buffer;
  mimeType: string;
  fileName: string;
}

/**
 * One Bot API method: a JSON body (or, with `file`, multipart with the other fields as text, as n8n's
 * formData sends them). Telegram's `{ok: false, description}` and any other failure become the node's
 * error naming the method and Telegram's description; the token is never part of a message.
 */
export async function callBot(
  bot: TelegramBot,
  method: string,
  body: Record<string, unknown>,
  file?: { field: string; file: TelegramFile },
): Promise<Record<string, unknown>> {
  const url = `${bot.baseUrl}/bot${bot.token}/${method}`;
  let req: OutboundRequest;
  if (file) {
    const fields: Array<[string, unknown]> = Object.entries(body).map(([k, v]) => [
      k,
      typeof v === 'object' && v !== null ? JSON.stringify(v) : String(v),
    ]);
    fields.push([file.field, { file: file.file }]);
    req = toOutbound({
      method: 'POST',
      url,
      qs: {},
      headers: { accept: 'application/json' },
      body: { kind: 'multipart', fields },
      timeoutMs: TELEGRAM_TIMEOUT_MS,
      credentialHeaders: [],
      // The token is in the path: an answer that redirects is an error, never followed elsewhere.
      maxRedirects: 0,
      arrayFormat: 'repeat',
    });
  } else {
    req = {
      method: 'POST',
      url,
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify(body),
      timeoutMs: TELEGRAM_TIMEOUT_MS,
      maxRedirects: 0,
    };
  }
  const res = await send(bot, req, method);
  let parsed: unknown;
  try {
    parsed = JSON.parse(res.body);
  } catch {
    parsed = undefined;
  }
  const answer = parsed && typeof parsed === 'object' && !Array.isArray(parsed) ? parsed : null;
  const fields = answer as { ok?: unknown; description?: unknown; error_code?: unknown } | null;
  if (fields?.ok !== true || res.status < 200 || res.status >= 300) {
    const description =
      typeof fields?.description === 'string'
        ? fields.description
        : `HTTP ${res.status}, not a Bot API answer`;
    throw new NodeOperationError(`Telegram refused ${method}: ${redact(bot, description)}`, {
      description: `Telegram answered ${res.status}${typeof fields?.error_code === 'number' ? ` (error_code ${fields.error_code})` : ''}`,
    });
  }
  return answer as Record<string, unknown>;
}

/** A file's bytes by its `file_path` (from getFile), at most MAX_DOWNLOAD_BYTES. */
export async function downloadFile(bot: TelegramBot, filePath: string): Promise<Buffer> {
  const res = await send(
    bot,
    {
      method: 'GET',
      url: `${bot.baseUrl}/file/bot${bot.token}/${filePath.split('/').map(encodeURIComponent).join('/')}`,
      headers: {},
      timeoutMs: TELEGRAM_TIMEOUT_MS,
      responseType: 'bytes',
      maxRedirects: 0,
      maxResponseBytes: MAX_DOWNLOAD_BYTES,
    },
    'file download',
  );
  if (res.status < 200 || res.status >= 300)
    throw new NodeOperationError(`Telegram refused the file download (HTTP ${res.status})`);
  return res.bytes ?? Buffer.from(res.body);
}

/** The exchange; a transport failure (refused address, timeout, too large) names the method, not the URL. */
async function send(bot: TelegramBot, req: OutboundRequest, what: string): Promise<OutboundResponse> {
  try {
    return await bot.http(req);
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new NodeOperationError(`Telegram ${what} failed: ${redact(bot, reason)}`);
  }
}

/** The token out of a text that may quote the URL (the outbound guard's messages do). */
export function redact(bot: Pick<TelegramBot, 'token'>, text: string): string {
  return bot.token === '' ? text : text.split(bot.token).join('***');
}
