/**
 * The closed list of error codes and the one place that maps them to HTTP statuses.
 * Domain code throws AppError; the API renders it (src/api/plugins/errors.ts).
 */
export const ERROR_STATUS = {
  AUTH_REQUIRED: 401,
  INVALID_API_KEY: 401,
  INSUFFICIENT_SCOPE: 403,
  NOT_FOUND: 404,
  VALIDATION_FAILED: 400,
  INVALID_JSON: 400,
  ALREADY_EXISTS: 409,
  LOOP_DISABLED: 409,
  RUN_NOT_ACTIVE: 409,
  POD_NOT_ACTIVE: 409,
  CHANNEL_ARCHIVED: 409,
  RUNNER_UNAVAILABLE: 409,
  IDEMPOTENCY_MISMATCH: 409,
  IDEMPOTENCY_IN_PROGRESS: 409,
  /** A delete refused because other records still use the resource (the message names them). */
  RESOURCE_IN_USE: 409,
  /** The request (headers and body) did not arrive in full within the request timeout. */
  REQUEST_TIMEOUT: 408,
  NO_WEBHOOK_EVENT: 409,
  /** A pod token spawning below the deepest level allowed (docs/mcp.md). */
  SPAWN_DEPTH_EXCEEDED: 409,
  /** A pod token spawning while its pod already has the most active children allowed (docs/mcp.md). */
  TOO_MANY_CHILDREN: 409,
  DELIVERY_PENDING: 409,
  PAYLOAD_TOO_LARGE: 413,
  UNSUPPORTED_MEDIA_TYPE: 415,
  /** An `Expect` header other than `100-continue`. */
  EXPECTATION_FAILED: 417,
  RATE_LIMITED: 429,
  /** The request line and headers together exceed the server's limit. */
  HEADERS_TOO_LARGE: 431,
  QUOTA_EXCEEDED: 429,
  /** An event or output stream beyond the concurrent streams allowed per key (or pod token) or per organization. */
  TOO_MANY_STREAMS: 429,
  INTERNAL: 500,
  PROVIDER_ERROR: 502,
  NO_AVAILABLE_RUNNER: 503,
  /** The server is shutting down and takes no new work on this connection. */
  SERVICE_UNAVAILABLE: 503,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

export interface ErrorDetail {
  field: string;
  message: string;
}

export class AppError extends Error {
  readonly status: number;
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly extra: { details?: ErrorDetail[]; required_scopes?: string[]; retryAfterSeconds?: number } = {},
  ) {
    super(message);
    this.name = 'AppError';
    this.status = ERROR_STATUS[code];
  }
}

export const notFound = (what: string): AppError => new AppError('NOT_FOUND', `${what} not found`);

/**
 * A 400 about one field: body fields are named by JSON pointer (`/assignee_id`), query and path
 * parameters by name (`limit`), as the schema validator names them.
 */
export const invalid = (field: string, message: string): AppError => {
  const text = `${field.replace(/^\//, '').replaceAll('/', '.')} ${message}`;
  return new AppError('VALIDATION_FAILED', text, { details: [{ field, message: text }] });
};

export const conflict = (code: ErrorCode, message: string): AppError => new AppError(code, message);
