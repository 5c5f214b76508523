import type { ServerResponse } from 'node:http';
import { isValidHeader } from '../../../core/http/header-check.js';
import type { StreamChunk, WebhookNodeInfo } from '../engine/index.js';
import type { StoredResponse } from './response.js';
import type { StreamSink } from './service.js';

/** Bytes a slow reader may leave unread before the stream is cut (the execution goes on). */
const MAX_UNREAD_BYTES = 8 * 1024 * 1024;

/** n8n's head of a streamed answer (its Webhook node and Chat Trigger write the same). */
const STREAM_HEADERS = {
  'content-type': 'application/json; charset=utf-8',
  'cache-control': 'no-cache',
  connection: 'keep-alive',
};

/**
 * A webhook answered as n8n's stream (`responseMode: 'streaming'`): newline-delimited JSON chunks
 * (`{type: begin|item|end|error, content?, metadata}`), written as the execution sends them. The head
 * (200, chunked) goes out with the first chunk (n8n sends it before the run), so a call refused before
 * its execution starts (its authentication, a bad body, a full queue) is answered in the platform's
 * error shape. Once streaming, the end is
 * the execution's: a failure is an `error` chunk, then the end; an execution no node streamed from
 * answers its last node's answer as one item. A client that goes away only stops the writing.
 */
/** What the stream writes to: the HTTP response and taking it over from the framework (a Fastify reply is one). */
export interface StreamTarget {
  raw: ServerResponse;
  hijack(): void;
}

export async function sendStreamed<R extends StreamTarget>(
  reply: R,
  hook: WebhookNodeInfo,
  extra: Record<string, string>,
  run: (sink: StreamSink) => Promise<{ response: StoredResponse }>,
): Promise<R> {
  const raw = reply.raw;
  let opened = false;
  let gone = false;
  let lines = 0;
  raw.on('close', () => {
    gone = true;
  });
  const open = () => {
    if (opened) return;
    opened = true;
    reply.hijack();
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(extra)) if (isValidHeader(name, value)) headers[name] = value;
    raw.writeHead(200, { ...headers, ...STREAM_HEADERS });
  };
  const write = (line: string) => {
    open();
    lines++;
    if (gone || raw.destroyed) return;
    if (raw.writableLength > MAX_UNREAD_BYTES) {
      gone = true;
      raw.destroy();
      return;
    }
    raw.write(`${line}\n`);
  };
  const chunk = (type: StreamChunk['type'], content?: string, nodeName = hook.nodeName) =>
    JSON.stringify({
      type,
      ...(content === undefined ? {} : { content }),
      metadata: {
        nodeId: nodeName === hook.nodeName ? hook.nodeId : '',
        nodeName,
        itemIndex: 0,
        runIndex: 0,
        timestamp: Date.now(),
      },
    } satisfies StreamChunk);

  let response: StoredResponse;
  try {
    ({ response } = await run({ write }));
  } catch (error) {
    // Refused before anything was streamed: the platform's error answer, status and all.
    if (!opened) throw error;
    response = {
      kind: 'error',
      code: 'INTERNAL_ERROR',
      message: error instanceof Error ? error.message : String(error),
      details: {},
    };
  }
  if (response.kind === 'error') {
    write(chunk('error', response.message));
    write(chunk('end'));
  } else if (lines === 0) {
    write(chunk('begin'));
    write(chunk('item', answerText(response.body)));
    write(chunk('end'));
  }
  if (!raw.destroyed) raw.end();
  return reply;
}

/** The last node's answer as a chat message: an agent's `output`, else the JSON of the answer. */
function answerText(body: unknown): string {
  const output = (body as { output?: unknown } | null)?.output;
  if (typeof output === 'string') return output;
  if (typeof body === 'string') return body;
  return JSON.stringify(body ?? null);
}
