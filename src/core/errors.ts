/** The closed list of error codes and the one code → status table. */
export const ERROR_STATUS = {
  VALIDATION_ERROR: 400,
  UNAUTHORIZED: 401,
  GAME_AUTH_REQUIRED: 401,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  ROUTE_NOT_FOUND: 404,
  API_KEY_NOT_FOUND: 404,
  ACCOUNT_NOT_FOUND: 404,
  WORKFLOW_NOT_FOUND: 404,
  EXECUTION_NOT_FOUND: 404,
  CREDENTIAL_NOT_FOUND: 404,
  WEBHOOK_NOT_FOUND: 404,
  BLEND_NOT_FOUND: 404,
  NOTE_NOT_FOUND: 404,
  PRODUCT_NOT_FOUND: 404,
  CART_NOT_FOUND: 404,
  ITEM_NOT_FOUND: 404,
  DISCOUNT_NOT_FOUND: 404,
  ORDER_NOT_FOUND: 404,
  MODEL_NOT_FOUND: 404,
  DOCUMENT_NOT_FOUND: 404,
  LLM_REQUEST_NOT_FOUND: 404,
  FLOW_NOT_FOUND: 404,
  AGENT_NOT_FOUND: 404,
  CONVERSATION_NOT_FOUND: 404,
  PROFILE_NOT_FOUND: 404,
  METHOD_NOT_ALLOWED: 405,
  CONFLICT: 409,
  NAME_TAKEN: 409,
  OUT_OF_STOCK: 409,
  PAYLOAD_TOO_LARGE: 413,
  UNSUPPORTED_MEDIA_TYPE: 415,
  INVALID_COMPOSITION: 422,
  INVALID_DISCOUNT_CODE: 422,
  UNPROCESSABLE: 422,
  RATE_LIMIT_EXCEEDED: 429,
  INTERNAL_ERROR: 500,
  UPSTREAM_ERROR: 502,
  SERVICE_UNAVAILABLE: 503,
  GATEWAY_TIMEOUT: 504,
} as const satisfies Record<string, number>;

export type ErrorCode = keyof typeof ERROR_STATUS;
export type ErrorDetails = Record<string, unknown>;

/** A domain error: code from the closed list; only the HTTP layer turns it into a response. */
export class AppError extends Error {
  readonly code: ErrorCode;
  readonly details: ErrorDetails;
  readonly headers: Record<string, string>;

  constructor(
    code: ErrorCode,
    message: string,
    details: ErrorDetails = {},
    headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = 'AppError';
    this.code = code;
    this.details = details;
    this.headers = headers;
  }

  get status(): number {
    return ERROR_STATUS[this.code];
  }
}

export function isAppError(value: unknown): value is AppError {
  return value instanceof AppError;
}

export const notFound = (code: ErrorCode, what: string, id: string): AppError =>
  new AppError(code, `${what} '${id}' was not found`, { id });

export const validationError = (
  message: string,
  fields: Array<{ field: string; message: string }>,
): AppError => new AppError('VALIDATION_ERROR', message, { fields });

/**
 * The 503 of a dependency that is down for now: details name it (`database`, `disk`, `queue`), and
 * Retry-After says when to try again.
 */
export const unavailable = (dependency: string, reason: string, retryAfterSeconds: number): AppError =>
  new AppError(
    'SERVICE_UNAVAILABLE',
    `The ${dependency} is unavailable (${reason}); try again shortly`,
    { dependency, reason, retryAfterSeconds },
    { 'retry-after': String(retryAfterSeconds) },
  );

export function assertNever(value: never): never {
  throw new Error(`Unhandled value: ${JSON.stringify(value)}`);
}
