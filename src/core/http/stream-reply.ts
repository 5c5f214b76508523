import { Readable } from 'node:stream';
import type { FastifyReply } from 'fastify';

/**
 * An AbortSignal that fires when the client goes before its answer is complete: the upstream
 * request is aborted with it, so a closed tab stops the model (and its token bill).
 */
export function clientGone(reply: FastifyReply): AbortSignal {
  const controller = new AbortController();
  reply.raw.once('close', () => {
    if (reply.raw.writableFinished) return;
    controller.abort();
    // A client that half-closed leaves the socket open; nothing more will be written to it.
    reply.raw.socket?.destroy();
  });
  return controller.signal;
}

/** Sends lines as they come (NDJSON or server-sent events), without buffering. */
export function sendLines(
  reply: FastifyReply,
  contentType: string,
  lines: AsyncIterable<string>,
): FastifyReply {
  reply.header('content-type', contentType);
  reply.header('cache-control', 'no-cache');
  // Proxies (nginx) buffer responses unless told otherwise; a buffered stream is no stream.
  reply.header('x-accel-buffering', 'no');
  return reply.send(Readable.from(lines, { objectMode: false, highWaterMark: 1 }));
}

/** Sends a body built from neutral events (its shape is the route's, checked by the serializer). */
export function sendBody(reply: FastifyReply, body: Record<string, unknown>): FastifyReply {
  return reply.send(body);
}
