import { PassThrough } from 'node:stream';
import type { FastifyReply } from 'fastify';

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
  return reply.send(pumped(lines));
}

/** What a streamed answer holds in memory before it waits for the client (its socket's buffer aside). */
const STREAM_BUFFER_BYTES = 16 * 1024;

/**
 * The lines as a byte stream, written by a loop that waits while the client is behind. Not
 * `Readable.from`: its pull through a one-byte buffer cost about 80 µs of CPU per streamed answer
 * (docs/decisions.md, "Gateway CPU on a quiet machine"). When the stream is destroyed (the
 * client went), the lines' iterator is returned, so their `finally` blocks run as they did.
 */
export function pumped(lines: AsyncIterable<string>): PassThrough {
  const out = new PassThrough({ highWaterMark: STREAM_BUFFER_BYTES });
  const iterator = lines[Symbol.asyncIterator]();
  const pump = async (): Promise<void> => {
    for (;;) {
      const next = await iterator.next();
      if (next.done) {
        out.end();
        return;
      }
      if (out.destroyed) break;
      if (!out.write(next.value)) await drainedOrClosed(out);
      if (out.destroyed) break;
    }
    await iterator.return?.();
  };
  pump().catch((error: unknown) => {
    out.destroy(error instanceof Error ? error : new Error(String(error)));
  });
  return out;
}

/** Resolves when the stream drains or closes (a destroyed stream never drains). */
function drainedOrClosed(stream: PassThrough): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      stream.off('drain', done);
      stream.off('close', done);
      resolve();
    };
    stream.on('drain', done);
    stream.on('close', done);
  });
}

/** Sends a body built from neutral events (its shape is the route's, checked by the serializer). */
export function sendBody(reply: FastifyReply, body: Record<string, unknown>): FastifyReply {
  return reply.send(body);
}
