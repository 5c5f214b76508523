import type { Socket } from 'node:net';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { dependencyFault } from '../db/faults.js';
import { AppError, ERROR_STATUS, type ErrorCode, unavailable } from '../errors.js';
import { isRedisDown } from '../process-faults.js';
import { trackAllowedMethods } from './allowed-methods.js';
import { requestIdFrom } from './request-id.js';

/**
 * Whose error body a route answers with: `platform`, or a name a compatible surface registered with
 * `registerErrorFormat` (DESIGN.md, "Compatible surfaces"). Core names no product: each adapter
 * registers its own renderer.
 */
export type ErrorFormat = string;

declare module 'fastify' {
  interface FastifyContextConfig {
    errorFormat?: ErrorFormat;
  }
}

/** The platform's fields, which every compatible body carries beside the product's own. */
interface PlatformErrorFields {
  code: ErrorCode;
  message: string;
  details: Record<string, unknown>;
  requestId: string;
}

/**
 * Renders another product's error body. `message` already names the offending fields (other
 * products' clients show only the message); `platform` holds the fields to spread beside.
 */
export type ErrorRenderer = (
  error: AppError,
  message: string,
  platform: PlatformErrorFields,
) => Record<string, unknown>;

interface RegisteredFormat {
  render: ErrorRenderer;
  /** The shared OpenAPI component its error bodies are written once under (`OllamaError`). */
  schemaName: string;
}

const formats = new Map<string, RegisteredFormat>();

/**
 * A compatible surface registers its error body under the name its routes give as
 * `config.errorFormat`. Registering a name twice with another renderer is a programming error.
 */
export function registerErrorFormat(
  name: string,
  render: ErrorRenderer,
  options: { schemaName: string },
): void {
  if (name === 'platform') throw new Error("'platform' is the platform's own error format");
  const existing = formats.get(name);
  if (existing && existing.render !== render) throw new Error(`error format '${name}' is registered twice`);
  formats.set(name, { render, schemaName: options.schemaName });
}

/** The OpenAPI component name of a registered compatible format, or null (the platform's body). */
export function errorFormatSchemaName(name: string | undefined): string | null {
  return (name && formats.get(name)?.schemaName) || null;
}

/**
 * Other products' clients show only the message: a validation error names its fields in it
 * (`Invalid body: body.temperature must be <= 2`).
 */
function withFieldNames(error: AppError): string {
  const fields = error.details.fields;
  if (!Array.isArray(fields) || fields.length === 0 || error.message.includes(':')) return error.message;
  const named = (fields as Array<{ field?: unknown; message?: unknown }>)
    .slice(0, 5)
    .map((f) => `${String(f.field)} ${String(f.message)}`);
  return `${error.message}: ${named.join('; ')}`;
}

/** The error body of a format: the platform's own, or a registered product's with the platform's fields added. */
export function errorBody(format: ErrorFormat, error: AppError, requestId: string): Record<string, unknown> {
  const registered = format === 'platform' ? undefined : formats.get(format);
  if (!registered)
    return { error: true, code: error.code, message: error.message, details: error.details, requestId };
  const message = withFieldNames(error);
  return registered.render(error, message, { code: error.code, message, details: error.details, requestId });
}

interface ErrorBodyShape {
  error: true;
  code: ErrorCode;
  message: string;
  details: Record<string, unknown>;
  requestId: string;
}

/**
 * Paths a compatible surface owns but the platform does not serve (OpenAI's `/v1/files`, Ollama's
 * `/api/pull`): their 404 and 405 come in that product's error body, so its clients show the message
 * (Ollama's client would show `true` for the platform's `error`). The adapter that registered the
 * format says which paths are its own.
 */
const unroutedFormats: Array<{ owns: (path: string) => boolean; format: ErrorFormat }> = [];

export function registerUnroutedFormat(owns: (path: string) => boolean, format: ErrorFormat): void {
  if (!unroutedFormats.some((f) => f.owns === owns && f.format === format))
    unroutedFormats.push({ owns, format });
}

/**
 * The error body a request gets: its route's format; on a path no route matched (a body refused
 * before the not-found handler runs, say), the format of the product that owns the path.
 */
function formatOf(request: FastifyRequest): ErrorFormat | undefined {
  if (request.routeOptions?.url !== undefined) return request.routeOptions.config?.errorFormat;
  const path = request.url.split('?')[0] ?? '/';
  return unroutedFormats.find((f) => f.owns(path))?.format;
}

function sendError(
  request: FastifyRequest,
  reply: FastifyReply,
  error: AppError,
  format: ErrorFormat | undefined = formatOf(request),
): FastifyReply {
  if (format && format !== 'platform') {
    for (const [name, value] of Object.entries(error.headers)) reply.header(name, value);
    return reply
      .code(error.status)
      .type('application/json; charset=utf-8')
      .send(errorBody(format, error, request.id));
  }
  const body: ErrorBodyShape = {
    error: true,
    code: error.code,
    message: error.message,
    details: error.details,
    requestId: request.id,
  };
  for (const [name, value] of Object.entries(error.headers)) reply.header(name, value);
  return reply.code(error.status).type('application/json; charset=utf-8').send(body);
}

const STATUS_CODES: Record<number, ErrorCode> = {
  400: 'VALIDATION_ERROR',
  401: 'UNAUTHORIZED',
  403: 'FORBIDDEN',
  404: 'NOT_FOUND',
  405: 'METHOD_NOT_ALLOWED',
  409: 'CONFLICT',
  413: 'PAYLOAD_TOO_LARGE',
  415: 'UNSUPPORTED_MEDIA_TYPE',
  422: 'UNPROCESSABLE',
  429: 'RATE_LIMIT_EXCEEDED',
  503: 'SERVICE_UNAVAILABLE',
};

type ValidationIssue = NonNullable<FastifyError['validation']>[number];

/**
 * One entry per offending field. A union of literals (`asc` | `desc`) fails once per branch and
 * once more for the union: those become a single "must be one of" naming the allowed values.
 */
function validationFields(issues: ValidationIssue[], context: string) {
  const byField = new Map<string, { messages: string[]; allowed: unknown[] }>();
  for (const v of issues) {
    const params = (v.params ?? {}) as {
      missingProperty?: string;
      additionalProperty?: string;
      allowedValue?: unknown;
    };
    const base = v.instancePath.replace(/^\//, '').replaceAll('/', '.');
    const name = [base, params.missingProperty ?? params.additionalProperty].filter(Boolean).join('.');
    const field = `${context}${name ? `.${name}` : ''}`;
    const entry = byField.get(field) ?? { messages: [], allowed: [] };
    if ('allowedValue' in params) entry.allowed.push(params.allowedValue);
    else if (v.keyword !== 'anyOf')
      entry.messages.push(
        params.additionalProperty ? 'is not an allowed field' : (v.message ?? 'is invalid'),
      );
    byField.set(field, entry);
  }
  return [...byField].map(([field, { messages, allowed }]) => ({
    field,
    message:
      messages.length > 0
        ? messages.join('; ')
        : allowed.length > 0
          ? `must be one of: ${allowed.map(String).join(', ')}`
          : 'is invalid',
  }));
}

/** Retry-After of a dependency's 503 when the app does not say (registerErrorHandling's option). */
const DEFAULT_RETRY_AFTER_SECONDS = 2;

/**
 * Turns anything thrown into the platform's error body; 5xx never leak internals. A dependency that
 * is down (database unreachable or restarting, no free connection, disk full) is a 503 with
 * Retry-After naming it: the caller may simply try again.
 */
export function toAppError(
  error: FastifyError | Error,
  retryAfterSeconds = DEFAULT_RETRY_AFTER_SECONDS,
): AppError {
  if (error instanceof AppError) return error;
  const fault = dependencyFault(error);
  if (fault) return unavailable(fault.dependency, fault.reason, retryAfterSeconds);
  // A Redis call that no module mapped (each maps its own: the queue's is `queue`) is still a 503.
  if (isRedisDown(error)) return unavailable('redis', 'unreachable', retryAfterSeconds);
  const fe = error as FastifyError;
  if (fe.validation) {
    return new AppError('VALIDATION_ERROR', `Invalid ${fe.validationContext ?? 'request'}`, {
      fields: validationFields(fe.validation, fe.validationContext ?? 'body'),
    });
  }
  switch (fe.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new AppError('PAYLOAD_TOO_LARGE', 'Request body is too large');
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new AppError('UNSUPPORTED_MEDIA_TYPE', 'Unsupported content type; send application/json');
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return new AppError('VALIDATION_ERROR', 'Body is empty but content type is application/json');
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return new AppError('VALIDATION_ERROR', 'Malformed JSON body');
  }
  const status = fe.statusCode ?? 500;
  if (status === 400 && error instanceof SyntaxError)
    return new AppError('VALIDATION_ERROR', 'Malformed JSON body');
  if (status >= 400 && status < 500) {
    const code = STATUS_CODES[status] ?? 'VALIDATION_ERROR';
    return new AppError(code, ERROR_STATUS[code] === status ? fe.message : 'Bad request');
  }
  return new AppError('INTERNAL_ERROR', 'Internal server error');
}

/**
 * Errors the router raises before a route is found (Fastify's `frameworkErrors`): a path that is
 * not valid percent-encoding, or a path parameter over the router's length limit. Hooks do not
 * run for them, so the request id header is set here.
 */
export function frameworkErrors(error: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  const appError =
    error.code === 'FST_ERR_MAX_PARAM_LENGTH'
      ? new AppError('VALIDATION_ERROR', 'A path parameter is too long', { maxLength: 100 })
      : error.code === 'FST_ERR_BAD_URL'
        ? new AppError('VALIDATION_ERROR', 'The path is not valid percent-encoding')
        : new AppError('INTERNAL_ERROR', 'Internal server error');
  reply.header('x-request-id', request.id);
  sendError(request, reply, appError);
}

const CLIENT_ERROR_MESSAGES: Record<string, string> = {
  HPE_HEADER_OVERFLOW: 'Request headers are too large',
  ERR_HTTP_REQUEST_TIMEOUT: 'The request did not arrive in time',
};

/**
 * Requests Node's HTTP parser refuses (bad framing, a body longer than its Content-Length,
 * oversized headers, a timeout) get the platform's error body too, then the connection closes:
 * after a framing error nothing more on it can be trusted.
 */
export function clientErrorHandler(error: Error & { code?: string }, socket: Socket): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  if (socket.writable) {
    const requestId = requestIdFrom({ headers: {} } as Parameters<typeof requestIdFrom>[0]);
    const body = JSON.stringify({
      error: true,
      code: 'VALIDATION_ERROR',
      message: CLIENT_ERROR_MESSAGES[error.code ?? ''] ?? 'Malformed HTTP request',
      details: {},
      requestId,
    });
    socket.write(
      `HTTP/1.1 400 Bad Request\r\nContent-Type: application/json; charset=utf-8\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\nX-Request-Id: ${requestId}\r\n` +
        `Connection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy(error);
}

export function registerErrorHandling(
  app: FastifyInstance,
  options: { retryAfterSeconds?: number } = {},
): void {
  app.setErrorHandler((error: FastifyError, request, reply) => {
    const appError = toAppError(error, options.retryAfterSeconds);
    if (appError.code === 'SERVICE_UNAVAILABLE' && appError.details.dependency)
      request.log.warn({ ...appError.details, err: error }, 'dependency unavailable');
    else if (appError.status >= 500 && appError.code === 'INTERNAL_ERROR')
      request.log.error({ err: error }, 'unhandled');
    else if (appError.status >= 500)
      request.log.error({ code: appError.code, msg: appError.message }, 'failed');
    else request.log.warn({ code: appError.code }, appError.message);
    return sendError(request, reply, appError);
  });
  const allowedMethods = trackAllowedMethods(app);
  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split('?')[0] ?? '/';
    const format = unroutedFormats.find((f) => f.owns(path))?.format;
    const allowed = allowedMethods(path);
    if (allowed && allowed.size > 0 && !allowed.has(request.method)) {
      const list = [...allowed].sort();
      reply.header('allow', list.join(', '));
      return sendError(
        request,
        reply,
        new AppError('METHOD_NOT_ALLOWED', `${request.method} is not allowed on ${path}`, { allowed: list }),
        format,
      );
    }
    return sendError(
      request,
      reply,
      new AppError('ROUTE_NOT_FOUND', `No route ${request.method} ${path}`),
      format,
    );
  });
}
