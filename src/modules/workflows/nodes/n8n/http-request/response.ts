import { STATUS_CODES } from 'node:http';
import { redactSecrets } from '../../../../../core/redact.js';
import { binaryOf, fileNameFromDisposition } from '../../../engine/binary.js';
import { NodeOperationError } from '../../../engine/node-type.js';
import type { Item, Json, OutboundResponse } from '../../../engine/types.js';
import type { ResponseParams } from './schema.js';

/** A response with its body; `body` is set when pagination already read it (n8n's `__bodyResolved`). */
export interface ReceivedResponse {
  statusCode: number;
  headers: Record<string, string>;
  text: string;
  body?: unknown;
  /** The bytes as received (a file response). */
  bytes?: Buffer;
}

/** Whether the response is a file: asked for, or autodetected from its content type as n8n does. */
export function isFileResponse(res: ReceivedResponse, options: ResponseParams): boolean {
  if (options.responseFormat === 'file') return true;
  if (options.responseFormat !== 'autodetect') return false;
  const contentType = res.headers['content-type'] ?? '';
  return (
    !contentType.includes('application/json') && BINARY_CONTENT_TYPES.some((t) => contentType.includes(t))
  );
}

/**
 * n8n's file response: the input item's JSON (or the response's headers and status with
 * fullResponse) and its binary data, plus the body under `outputPropertyName` (default `data`).
 */
export function fileItem(res: ReceivedResponse, options: ResponseParams, input: Item | undefined): Item {
  const contentType = res.headers['content-type'] || 'application/octet-stream';
  const bytes = res.bytes ?? Buffer.from(res.text, 'utf8');
  const json: Record<string, Json> = options.fullResponse
    ? { headers: res.headers, statusCode: res.statusCode, statusMessage: STATUS_CODES[res.statusCode] ?? '' }
    : structuredClone(input?.json ?? {});
  const property = options.outputPropertyName || 'data';
  return {
    json,
    binary: {
      ...(input?.binary ?? {}),
      [property]: binaryOf(bytes, contentType, fileNameFromDisposition(res.headers['content-disposition'])),
    },
  };
}

/** Content types n8n's autodetect treats as files. */
const BINARY_CONTENT_TYPES = [
  'image/',
  'audio/',
  'video/',
  'application/octet-stream',
  'application/gzip',
  'application/zip',
  'application/vnd.rar',
  'application/epub+zip',
  'application/x-bzip',
  'application/x-bzip2',
  'application/x-cdf',
  'application/vnd.amazon.ebook',
  'application/msword',
  'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
  'application/vnd.ms-fontobject',
  'application/vnd.oasis.opendocument.presentation',
  'application/pdf',
  'application/x-tar',
  'application/vnd.visio',
  'application/vnd.ms-excel',
  'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
  'application/x-7z-compressed',
];

/** n8n's NodeApiError messages by status. */
const STATUS_MESSAGES: Record<number, string> = {
  400: 'Bad request - please check your parameters',
  401: 'Authorization failed - please check your credentials',
  402: 'Payment required - perhaps check your payment details?',
  403: 'Forbidden - perhaps check your credentials?',
  404: 'The resource you are requesting could not be found',
  405: 'Method not allowed - please check you are using the right HTTP method',
  429: "Try spacing your requests out using the batching settings under 'Options'",
  500: 'The service was not able to process your request',
  502: 'Bad gateway - the service failed to handle your request',
  503: 'Service unavailable - try again later or consider setting this node to retry automatically (in the node settings)',
  504: 'Gateway timed out - perhaps try again later?',
};

export const isSuccess = (status: number) => status >= 200 && status < 300;

/** The node error for a non-2xx answer without `neverError`. */
export function statusError(res: OutboundResponse, secrets: readonly string[] = []): NodeOperationError {
  const fallback =
    res.status >= 500
      ? 'The service was not able to process your request'
      : 'Your request is invalid or could not be processed by the service';
  return new NodeOperationError(STATUS_MESSAGES[res.status] ?? fallback, {
    // Redacted before the cut (a server may echo the credential it was sent).
    description: `${res.status} - ${JSON.stringify(redactSecrets(res.body, secrets).slice(0, 1000))}`,
  });
}

function tryJson(text: string): { ok: true; value: unknown } | { ok: false } {
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch {
    return { ok: false };
  }
}

/** What request-promise with `json: true` hands n8n: the parsed body when it is JSON, else the text. */
export const bodyAsRequestParses = (text: string): unknown => {
  const parsed = tryJson(text);
  return parsed.ok ? parsed.value : text;
};

const toText = (v: unknown): unknown => (typeof v === 'object' && v !== null ? JSON.stringify(v) : v);

const jsonOf = (v: unknown): Json => (v === undefined ? null : (v as Json));

const notJson = () =>
  new NodeOperationError('Response body is not valid JSON. Change "Response Format" to "Text"');

/** The output items of one response, in n8n's shapes for each response format. */
export function responseItems(res: ReceivedResponse, options: ResponseParams): Array<Record<string, Json>> {
  const contentType = res.headers['content-type'] ?? '';
  let format = options.responseFormat;
  const autodetect = format === 'autodetect';
  let body: unknown;
  if (autodetect) {
    if (contentType.includes('application/json')) {
      format = 'json';
      if (res.body !== undefined) body = res.body;
      else if (res.text.trim() === '') body = {};
      else {
        const parsed = tryJson(res.text);
        if (!parsed.ok && !options.neverError) throw new NodeOperationError('Invalid JSON in response body');
        body = parsed.ok ? parsed.value : {};
      }
    } else if (BINARY_CONTENT_TYPES.some((t) => contentType.includes(t))) {
      format = 'file';
    } else {
      format = 'text';
      body = res.body !== undefined ? res.body : res.text === '' ? undefined : res.text;
    }
  } else {
    body = res.body !== undefined ? res.body : bodyAsRequestParses(res.text);
  }
  const meta = {
    headers: res.headers,
    statusCode: res.statusCode,
    statusMessage: STATUS_CODES[res.statusCode] ?? '',
  };
  switch (format) {
    case 'file':
      throw new NodeOperationError(
        `The response is a file (${contentType || 'no content type'}): binary data is not supported here yet`,
        { description: 'Set options.response.response.responseFormat to "text" or "json".' },
      );
    case 'text': {
      const text = toText(body);
      const out: Record<string, Json> = options.fullResponse ? { ...meta } : {};
      if (text !== undefined) out[options.outputPropertyName] = jsonOf(text);
      return [out];
    }
    case 'json': {
      if (options.fullResponse) {
        let full = body;
        if (typeof full === 'string') {
          if (full.trim() === '') full = {};
          else {
            const parsed = tryJson(full);
            if (!parsed.ok) throw notJson();
            full = parsed.value;
          }
        }
        return [{ body: jsonOf(full), ...meta }];
      }
      let value = body;
      if (typeof value === 'string') {
        if (value.trim() === '') value = {};
        else {
          const parsed = tryJson(value);
          if (!parsed.ok) throw notJson();
          value = parsed.value;
        }
      }
      const list = Array.isArray(value) ? value : [value];
      return list.map((v) => (v === null || v === undefined ? {} : asObject(v)));
    }
    default:
      // 'autodetect' was resolved above.
      throw new NodeOperationError(`Unknown response format '${format}'`);
  }
}

/** n8n would emit a non-object as an item's json; here it is wrapped so items stay objects. */
const asObject = (v: unknown): Record<string, Json> =>
  typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, Json>) : { data: v as Json };
