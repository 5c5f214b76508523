import type { FastifyBaseLogger, FastifyReply, FastifyRequest } from 'fastify';
import { LogController } from 'fastify';

type Bindings = Parameters<FastifyBaseLogger['child']>[0];
type ChildLoggerOptions = NonNullable<Parameters<FastifyBaseLogger['child']>[1]>;
type Level = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace';
type LevelTest = FastifyBaseLogger & { isLevelEnabled?: (level: string) => boolean };

/**
 * A request's logger, made only when something logs through it at an enabled level. Fastify makes
 * a pino child (its bindings serialized) for every request; most requests log nothing, so that child
 * is pure cost. This stands in for it: a call at a level the parent has off returns at once, any other
 * call makes the child (the same bindings and options Fastify gives) and goes to it.
 */
class LazyRequestLogger {
  private made: FastifyBaseLogger | null = null;

  constructor(
    private readonly parent: FastifyBaseLogger,
    private readonly bindings: Bindings,
    private readonly options: ChildLoggerOptions,
  ) {}

  private real(): FastifyBaseLogger {
    if (this.made === null) this.made = this.parent.child(this.bindings, this.options);
    return this.made;
  }

  /** pino's own test; a logger without one is asked through a real child. */
  isLevelEnabled(level: string): boolean {
    const logger = (this.made ?? this.parent) as LevelTest;
    return logger.isLevelEnabled ? logger.isLevelEnabled(level) : true;
  }

  private write(level: Level, args: unknown[]): void {
    if (this.made === null && !this.isLevelEnabled(level)) return;
    (this.real()[level] as (...a: unknown[]) => void)(...args);
  }

  get level(): string {
    return (this.made ?? this.parent).level;
  }

  set level(level: string) {
    this.real().level = level;
  }

  fatal(...args: unknown[]): void {
    this.write('fatal', args);
  }
  error(...args: unknown[]): void {
    this.write('error', args);
  }
  warn(...args: unknown[]): void {
    this.write('warn', args);
  }
  info(...args: unknown[]): void {
    this.write('info', args);
  }
  debug(...args: unknown[]): void {
    this.write('debug', args);
  }
  trace(...args: unknown[]): void {
    this.write('trace', args);
  }
  silent(): void {}

  child(bindings: Bindings, options?: ChildLoggerOptions): FastifyBaseLogger {
    return this.real().child(bindings, options);
  }
}

/**
 * Fastify's `childLoggerFactory`: a lazy child per request. A route with its own log level gets a real
 * child at once (its level is not the parent's, so the parent cannot say what is enabled).
 */
export function lazyChildLogger(
  logger: FastifyBaseLogger,
  bindings: Bindings,
  options: ChildLoggerOptions,
): FastifyBaseLogger {
  if (options.level !== undefined) return logger.child(bindings, options);
  return new LazyRequestLogger(logger, bindings, options) as unknown as FastifyBaseLogger;
}

/**
 * One access line per request instead of Fastify's two ("incoming request" then "request
 * completed"): the completed line carries the request (method, path, address) as the incoming one
 * did, so nothing is lost and an info-level server writes half the lines. The other lines Fastify
 * writes (stream errors, serializer failures) are unchanged.
 */
export class RequestLogController extends LogController {
  override incomingRequest(): void {}

  override requestCompleted(
    error: Error | null | undefined,
    request: FastifyRequest,
    reply: FastifyReply,
  ): void {
    if (error) {
      reply.log.error(
        { req: request, res: reply, err: error, responseTime: reply.elapsedTime },
        'request errored',
      );
    } else {
      const log = reply.log as LevelTest;
      if (log.isLevelEnabled && !log.isLevelEnabled('info')) return;
      log.info({ req: request, res: reply, responseTime: reply.elapsedTime }, 'request completed');
    }
  }
}
