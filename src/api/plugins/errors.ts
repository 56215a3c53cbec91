import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError, ERROR_STATUS, type ErrorCode, type ErrorDetail } from '../../errors.ts';
import { validationDetails } from '../validation.ts';

export interface ErrorBody {
  error: string;
  code: ErrorCode;
  request_id: string;
  details?: ErrorDetail[];
  required_scopes?: string[];
}

/** Fastify's own errors, by code, in the API's terms (docs/api.md "Errors"). */
const FASTIFY_CODES: Record<string, { code: ErrorCode; message?: string; field?: string }> = {
  FST_ERR_CTP_BODY_TOO_LARGE: { code: 'PAYLOAD_TOO_LARGE', message: 'request body is larger than 1 MiB' },
  FST_ERR_CTP_INVALID_MEDIA_TYPE: { code: 'UNSUPPORTED_MEDIA_TYPE', message: 'request body must be sent as application/json' },
  FST_ERR_CTP_INVALID_TYPE: { code: 'UNSUPPORTED_MEDIA_TYPE', message: 'request body must be sent as application/json' },
  FST_ERR_CTP_EMPTY_JSON_BODY: { code: 'INVALID_JSON', message: 'request body is empty but its content type is application/json' },
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: { code: 'VALIDATION_FAILED', message: 'Content-Length does not match the body', field: 'Content-Length' },
  FST_ERR_BAD_URL: { code: 'VALIDATION_FAILED', message: 'the request URL is malformed', field: 'path' },
  FST_ERR_MAX_PARAM_LENGTH: { code: 'VALIDATION_FAILED', message: 'a path parameter is longer than 200 characters', field: 'path' },
};

export function toErrorBody(error: AppError, requestId: string): ErrorBody {
  const body: ErrorBody = { error: error.message, code: error.code, request_id: requestId };
  if (error.extra.details) body.details = error.extra.details;
  if (error.extra.required_scopes) body.required_scopes = error.extra.required_scopes;
  return body;
}

/** Any thrown value → one AppError; unknown failures become INTERNAL and are logged by the caller. */
export function toAppError(error: FastifyError | AppError | Error): AppError {
  if (error instanceof AppError) return error;
  const fastifyError = error as FastifyError;
  if (fastifyError.validation) {
    const details = validationDetails(fastifyError.validation as never, fastifyError.validationContext ?? 'body');
    const first = details[0]?.message ?? 'request is invalid';
    return new AppError('VALIDATION_FAILED', details.length > 1 ? `${first} (and ${details.length - 1} more)` : first, {
      details,
    });
  }
  const known = fastifyError.code ? FASTIFY_CODES[fastifyError.code] : undefined;
  if (known) {
    const message = known.message ?? fastifyError.message;
    return new AppError(known.code, message, known.field ? { details: [{ field: known.field, message }] } : {});
  }
  const status = fastifyError.statusCode ?? 500;
  if (status === 404) return new AppError('NOT_FOUND', 'not found');
  if (status >= 400 && status < 500) return new AppError('VALIDATION_FAILED', fastifyError.message);
  return new AppError('INTERNAL', 'internal error; the request id identifies it in the server log');
}

export function sendError(reply: FastifyReply, request: FastifyRequest, error: AppError): FastifyReply {
  if (error.extra.retryAfterSeconds !== undefined) reply.header('retry-after', String(error.extra.retryAfterSeconds));
  return reply.code(ERROR_STATUS[error.code]).type('application/json').send(toErrorBody(error, request.id));
}

/**
 * Only a fault of the server (INTERNAL: an unexpected error) is an error-level line, with its stack.
 * Any other 5xx is an answer the server chose (no runner offers the agent, a Git provider failed,
 * shutting down): one warn line with its code and no stack. A 4xx is the client's doing: the
 * request line (info) says it. See docs/decisions.md "Operations" (log levels).
 */
function logFailure(request: FastifyRequest, error: Error, answer: AppError): void {
  if (answer.code === 'INTERNAL') request.log.error({ err: error, reqId: request.id }, 'request failed');
  else if (answer.status >= 500) request.log.warn({ reqId: request.id, code: answer.code, error: answer.message }, 'request refused');
}

export function registerErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler((error: FastifyError, request, reply) => {
    const appError = toAppError(error);
    logFailure(request, error, appError);
    return sendError(reply, request, appError);
  });
  app.setNotFoundHandler((request, reply) =>
    sendError(reply, request, new AppError('NOT_FOUND', `no route for ${request.method} ${request.url.split('?')[0]}`)),
  );
}
