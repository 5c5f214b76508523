import type { OutgoingHttpHeaders, ServerResponse } from 'node:http';
import type { FastifyReply } from 'fastify';
import { serverClosing } from './graceful-close.js';
import { holdStreamSlot } from './stream-slots.js';

/**
 * The client's going before its answer is complete, for work done on its behalf (an upstream call):
 * that work follows it through plain callbacks, and an AbortSignal is made only when one is asked
 * for. A model call then costs one abort controller (its attempt's, which the upstream request
 * needs), not one for the client plus one per attempt linked through EventTarget listeners, which
 * are dear on Node 20.
 */
export class ClientGone {
  /** True once the client went before its answer was complete. */
  gone = false;
  private controller: AbortController | null = null;
  private followers: Array<() => void> | null = null;

  constructor(reply: FastifyReply) {
    reply.raw.once('close', () => {
      if (reply.raw.writableFinished) return;
      this.gone = true;
      this.controller?.abort();
      const followers = this.followers;
      this.followers = null;
      if (followers) for (const follower of followers) follower();
      // A client that half-closed leaves the socket open; nothing more will be written to it.
      reply.raw.socket?.destroy();
    });
  }

  /** A signal that fires when the client goes (made on first use). */
  get signal(): AbortSignal {
    if (this.controller === null) {
      this.controller = new AbortController();
      if (this.gone) this.controller.abort();
    }
    return this.controller.signal;
  }

  /** Calls `follower` when the client goes (at once if it has); returns the way to stop following. */
  follow(follower: () => void): () => void {
    if (this.gone) {
      follower();
      return () => {};
    }
    const followers = this.followers ?? [];
    this.followers = followers;
    followers.push(follower);
    return () => {
      const at = followers.indexOf(follower);
      if (at !== -1) followers.splice(at, 1);
    };
  }
}

/**
 * An AbortSignal that fires when the client goes before its answer is complete: the upstream
 * request is aborted with it, so a closed tab stops the model (and its token bill).
 */
export function clientGone(reply: FastifyReply): AbortSignal {
  return new ClientGone(reply).signal;
}

/**
 * Sends lines as they come (NDJSON or server-sent events), without buffering, written straight to
 * the response (docs/decisions.md, "Streamed answers written straight to the socket"): a PassThrough
 * piped by Fastify cost a stream, its end-of-stream listeners and a write of its own for the
 * response's end. The stream's slot is taken first (a refusal is the route's 429). Nothing is sent
 * before the first line: a failure before it is an error answer in the route's format, as any
 * other. From the first line on the reply is the stream's own, so Fastify's onSend hooks do not run
 * for it; what they add to a stream (the closing server's `connection: close`) is added here.
 * `onResponse` hooks still run when it finishes. The lines' iterator is returned when the client
 * goes, so their `finally` blocks run.
 */
export async function sendLines(
  reply: FastifyReply,
  contentType: string,
  lines: AsyncIterable<string>,
): Promise<FastifyReply> {
  const iterator = lines[Symbol.asyncIterator]();
  const res = reply.raw;
  if (res.destroyed) {
    // The client went while the route worked: nothing to stream, nobody to answer.
    await finish(iterator);
    reply.hijack();
    return reply;
  }
  let first: IteratorResult<string>;
  try {
    holdStreamSlot(reply.request, reply);
    first = await iterator.next();
  } catch (error) {
    await finish(iterator);
    throw error;
  }
  reply.hijack();
  try {
    const headers = reply.getHeaders();
    headers['content-type'] = contentType;
    headers['cache-control'] = 'no-cache';
    // Proxies (nginx) buffer responses unless told otherwise; a buffered stream is no stream.
    headers['x-accel-buffering'] = 'no';
    if (serverClosing(reply)) headers.connection = 'close';
    res.writeHead(reply.statusCode, headers as OutgoingHttpHeaders);
  } catch (error) {
    // Hijacked: Fastify answers nothing more, so a head that cannot be written cuts the response.
    reply.log.error({ err: error }, 'a streamed answer’s head could not be written');
    res.destroy();
    await finish(iterator);
    return reply;
  }
  // The pump catches what the lines and the writes throw.
  void pump(res, iterator, first, reply);
  return reply;
}

/** Ends the lines' iterator (their `finally` blocks run); a cleanup that fails is not the caller's error. */
async function finish(iterator: AsyncIterator<string>): Promise<void> {
  await iterator.return?.()?.catch(() => undefined);
}

/**
 * Writes the lines, waiting while the client is behind; ends the response when they end (in the same
 * write as the last line when it follows it at once). A failure after the first line can only cut
 * the response: its socket is destroyed, as Fastify does for a stream that fails.
 */
async function pump(
  res: ServerResponse,
  iterator: AsyncIterator<string>,
  first: IteratorResult<string>,
  reply: FastifyReply,
): Promise<void> {
  try {
    for (let next = first; !next.done; next = await iterator.next()) {
      if (res.destroyed) break;
      if (!res.write(next.value)) await drainedOrClosed(res);
      if (res.destroyed) break;
    }
    if (!res.destroyed) {
      res.end();
      return;
    }
  } catch (error) {
    reply.log.warn({ err: error }, 'a streamed answer failed after its first line');
    // What was written goes out first (a write is held until the turn ends), then the cut.
    if (res.writableCorked) res.uncork();
    res.destroy();
  }
  // The client went, or the answer failed: the lines' cleanup runs (nothing for ended lines).
  await finish(iterator);
}

/** Resolves when the response drains or closes (a destroyed response never drains). */
function drainedOrClosed(res: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    res.on('drain', done);
    res.on('close', done);
  });
}

/** Sends a body built from neutral events (its shape is the route's, checked by the serializer). */
export function sendBody(reply: FastifyReply, body: Record<string, unknown>): FastifyReply {
  return reply.send(body);
}
