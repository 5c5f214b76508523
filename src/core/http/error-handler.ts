import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError, ERROR_STATUS, type ErrorCode } from '../errors.js';

interface ErrorBodyShape {
  error: true;
  code: ErrorCode;
  message: string;
  details: Record<string, unknown>;
  requestId: string;
}

export function sendError(request: FastifyRequest, reply: FastifyReply, error: AppError): FastifyReply {
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

/** Turns anything thrown into the platform's error body; 5xx never leak internals. */
export function toAppError(error: FastifyError | Error): AppError {
  if (error instanceof AppError) return error;
  const fe = error as FastifyError;
  if (fe.validation) {
    const fields = fe.validation.map((v) => {
      const missing = (v.params as { missingProperty?: string } | undefined)?.missingProperty;
      const extra = (v.params as { additionalProperty?: string } | undefined)?.additionalProperty;
      const base = v.instancePath.replace(/^\//, '').replaceAll('/', '.');
      const name = [base, missing ?? extra].filter(Boolean).join('.');
      const message = extra ? 'is not an allowed field' : (v.message ?? 'is invalid');
      return { field: `${fe.validationContext ?? 'body'}${name ? `.${name}` : ''}`, message };
    });
    return new AppError('VALIDATION_ERROR', `Invalid ${fe.validationContext ?? 'request'}`, { fields });
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

export function registerErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler((error: FastifyError, request, reply) => {
    const appError = toAppError(error);
    if (appError.status >= 500 && appError.code === 'INTERNAL_ERROR')
      request.log.error({ err: error }, 'unhandled');
    else if (appError.status >= 500)
      request.log.error({ code: appError.code, msg: appError.message }, 'failed');
    else request.log.warn({ code: appError.code }, appError.message);
    return sendError(request, reply, appError);
  });
  app.setNotFoundHandler((request, reply) =>
    sendError(
      request,
      reply,
      new AppError('ROUTE_NOT_FOUND', `No route ${request.method} ${request.url.split('?')[0]}`),
    ),
  );
}
