import { Writable } from 'node:stream';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { lazyChildLogger, RequestLogController } from '../../src/core/http/request-logger.js';

/** A Fastify app logging as the platform's does (app.ts), its lines collected as parsed JSON. */
function appLogging(level: string): { app: FastifyInstance; lines: Array<Record<string, unknown>> } {
  const lines: Array<Record<string, unknown>> = [];
  const stream = new Writable({
    write(chunk, _encoding, done) {
      for (const line of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(line));
      done();
    },
  });
  const app = Fastify({
    logger: {
      level,
      stream,
      serializers: {
        req: (req: { method: string; url: string }) => ({ method: req.method, path: req.url.split('?')[0] }),
      },
    },
    logController: new RequestLogController(),
    childLoggerFactory: lazyChildLogger,
  });
  app.get('/quiet', async () => ({ ok: true }));
  app.get('/loud', async (request) => {
    request.log.warn({ what: 'something' }, 'a warning');
    request.log.debug('not at this level');
    return { ok: true };
  });
  app.get('/child', async (request) => {
    request.log.child({ part: 'inner' }).warn('from a child');
    return { ok: true };
  });
  app.get('/fails', async () => {
    throw new Error('boom');
  });
  return { app, lines };
}

describe('request logging (lazy child logger, one access line)', () => {
  let app: FastifyInstance | undefined;
  afterEach(async () => {
    await app?.close();
    app = undefined;
  });

  it('writes one line per request at info, with the request, the status, the time and the request id', async () => {
    const made = appLogging('info');
    app = made.app;
    const res = await app.inject({ method: 'GET', url: '/quiet?secret=1' });
    expect(res.statusCode).toBe(200);
    expect(made.lines).toHaveLength(1);
    const [line] = made.lines;
    expect(line).toMatchObject({
      msg: 'request completed',
      reqId: expect.any(String),
      req: { method: 'GET', path: '/quiet' },
      res: { statusCode: 200 },
      responseTime: expect.any(Number),
    });
  });

  it('writes no access line below info, and a route’s own warning still carries the request id', async () => {
    const made = appLogging('warn');
    app = made.app;
    expect((await app.inject({ method: 'GET', url: '/quiet' })).statusCode).toBe(200);
    expect(made.lines).toHaveLength(0);
    expect((await app.inject({ method: 'GET', url: '/loud' })).statusCode).toBe(200);
    expect(made.lines).toHaveLength(1);
    expect(made.lines[0]).toMatchObject({ msg: 'a warning', what: 'something', reqId: expect.any(String) });
    expect((await app.inject({ method: 'GET', url: '/child' })).statusCode).toBe(200);
    expect(made.lines[1]).toMatchObject({ msg: 'from a child', part: 'inner', reqId: expect.any(String) });
  });

  it('logs a failed request (the default error handler’s line) with its request id', async () => {
    const made = appLogging('warn');
    app = made.app;
    expect((await app.inject({ method: 'GET', url: '/fails' })).statusCode).toBe(500);
    expect(made.lines.some((l) => l.level === 50 && typeof l.reqId === 'string')).toBe(true);
  });

  it('follows a level changed at run time', async () => {
    const made = appLogging('warn');
    app = made.app;
    app.log.level = 'info';
    expect((await app.inject({ method: 'GET', url: '/quiet' })).statusCode).toBe(200);
    expect(made.lines.map((l) => l.msg)).toEqual(['request completed']);
  });
});
