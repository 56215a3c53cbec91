import crypto from 'node:crypto';
import http from 'node:http';
import type { Duplex } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { AppError, type ErrorDetail } from '../../errors.ts';
import { toErrorBody } from './errors.ts';

/** The request line and headers together (a URL carrying a 4,096-character non-ASCII token fits). */
export const MAX_HEADER_BYTES = 64 * 1024;

/** Random bytes for request ids, drawn 256 ids at a time (one call to the generator instead of one per request). */
const ID_BYTES = 16;
let idPool = Buffer.alloc(0);
let idOffset = 0;
export function newRequestId(): string {
  if (idOffset === idPool.length) {
    idPool = crypto.randomBytes(ID_BYTES * 256);
    idOffset = 0;
  }
  const id = idPool.toString('hex', idOffset, idOffset + ID_BYTES);
  idOffset += ID_BYTES;
  return `req_${id}`;
}

type ClientError = Error & { code?: string; reason?: string };

const invalid = (field: string, message: string) =>
  new AppError('VALIDATION_FAILED', `${field}: ${message}`, { details: [{ field, message } satisfies ErrorDetail] });

/**
 * What Node's HTTP parser or its request timeout refused, in the API's terms (docs/api.md "Errors"). Unknown methods
 * (the parser knows no `FOO`) are answered like an unknown route.
 */
export function clientErrorToAppError(error: ClientError, requestTimeoutMs: number): AppError {
  switch (error.code) {
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return new AppError('REQUEST_TIMEOUT', `the request did not arrive in full within ${requestTimeoutMs / 1000} s`);
    case 'HPE_HEADER_OVERFLOW':
      return new AppError('HEADERS_TOO_LARGE', `the request line and headers are larger than ${MAX_HEADER_BYTES / 1024} KiB`);
    case 'HPE_INVALID_METHOD':
      return new AppError('NOT_FOUND', 'no route for this method');
    case 'HPE_INVALID_URL':
      return invalid('path', 'the request URL is malformed');
    case 'HPE_INVALID_CONTENT_LENGTH':
    case 'HPE_UNEXPECTED_CONTENT_LENGTH':
      return invalid('Content-Length', 'is malformed or contradicts Transfer-Encoding');
    case 'HPE_INVALID_TRANSFER_ENCODING':
    case 'HPE_INVALID_CHUNK_SIZE':
      return invalid('Transfer-Encoding', 'the chunked body is malformed');
    case 'HPE_INVALID_HEADER_TOKEN':
    case 'HPE_LF_EXPECTED':
    case 'HPE_CR_EXPECTED':
      return invalid('headers', 'a header line is malformed');
    default:
      return invalid('request', 'the HTTP request is malformed');
  }
}

/** Writes an error response straight onto a socket the HTTP layer has given up on, then closes it. */
export function writeRawError(socket: Duplex, error: AppError, requestId: string): void {
  const body = JSON.stringify(toErrorBody(error, requestId));
  const head = [
    `HTTP/1.1 ${error.status} ${http.STATUS_CODES[error.status] ?? 'Error'}`,
    'content-type: application/json; charset=utf-8',
    `content-length: ${Buffer.byteLength(body)}`,
    `x-request-id: ${requestId}`,
    'connection: close',
  ];
  socket.end(`${head.join('\r\n')}\r\n\r\n${body}`);
  // A client that keeps the other half open (or keeps sending) loses the socket anyway.
  setTimeout(() => socket.destroy(), 1000).unref();
}

/** The request id already given to a request on this socket (the timeout case), else a new one. */
function requestIdOf(socket: Duplex): string {
  const response = (socket as { _httpMessage?: http.ServerResponse })._httpMessage;
  const id = response?.getHeader?.('x-request-id');
  return typeof id === 'string' ? id : newRequestId();
}

/**
 * Fastify's `clientErrorHandler`: parse errors, oversized headers and the request timeout get the
 * API's error body (Fastify's own answer has neither `code` nor `request_id`). The error
 * itself is not logged: it carries the raw bytes of the request, credentials included.
 */
export function clientErrorHandler(requestTimeoutMs: number) {
  // Fastify calls it with `this` bound to the instance.
  return function onClientError(this: FastifyInstance, error: ClientError, socket: Duplex): void {
    if (error.code === 'ECONNRESET' || socket.destroyed) return;
    const response = (socket as { _httpMessage?: http.ServerResponse })._httpMessage;
    if (!socket.writable || response?.headersSent) {
      socket.destroy();
      return;
    }
    const appError = clientErrorToAppError(error, requestTimeoutMs);
    const requestId = requestIdOf(socket);
    this.log.info({ reqId: requestId, status: appError.status, reason: error.code }, 'client error');
    writeRawError(socket, appError, requestId);
  };
}

/**
 * Node answers two kinds of request on its own, outside Fastify: `Expect` values other than
 * `100-continue` (417 with an empty body) and `CONNECT` (no listener: the socket is dropped).
 */
export function answerNodeLevelRequests(server: http.Server): void {
  server.on('checkExpectation', (request: http.IncomingMessage, response: http.ServerResponse) => {
    const requestId = newRequestId();
    const body = JSON.stringify(toErrorBody(new AppError('EXPECTATION_FAILED', 'only "Expect: 100-continue" is supported'), requestId));
    response.writeHead(417, { 'content-type': 'application/json; charset=utf-8', 'x-request-id': requestId, connection: 'close' });
    response.end(body);
    request.resume();
  });
  server.on('connect', (_request: http.IncomingMessage, socket: Duplex) => {
    writeRawError(socket, new AppError('NOT_FOUND', 'no route for CONNECT'), newRequestId());
  });
}
