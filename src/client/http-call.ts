/**
 * One API call and its whole answer over node:http(s), for the client's calls; its event streams
 * still go through fetch (src/client/sse.ts).
 *
 * Why not fetch: a process's first fetch() costs ~120 ms before any byte is sent (undici compiles
 * its HTTP parser, a WebAssembly module, and sets up its dispatcher), against ~10 ms for node:http.
 * A `drover` command or a `drover mcp` started per agent session makes one or two calls, so that
 * start-up was most of its wall time (docs/cli.md "The typed client"). What fetch did that this
 * keeps: the same request (method, headers, body, the caller's abort signal), the whole deadline
 * as a `TimeoutError`, network failures as the system's error (ECONNREFUSED, ENOTFOUND…). What it
 * does not: redirects are not followed (the API never redirects; a proxy's redirect comes back as
 * an error answer rather than re-sending the key elsewhere), and nothing is decompressed (no
 * `accept-encoding` is sent, so nothing comes compressed).
 */
import http from 'node:http';
import https from 'node:https';

export interface HttpAnswer {
  status: number;
  statusText: string;
  headers: [string, string][];
  text: string;
}

/** Statuses whose answer has no body (a Response with a body for them is refused). */
const NULL_BODY = new Set([101, 204, 205, 304]);

/** The answer as a Response (the shape openapi-fetch reads). */
export function toResponse(answer: HttpAnswer): Response {
  const body = answer.text === '' && NULL_BODY.has(answer.status) ? null : answer.text;
  return new Response(body, { status: answer.status, statusText: answer.statusText, headers: answer.headers });
}

function timeoutError(): Error {
  const error = new Error('The operation was aborted due to timeout');
  error.name = 'TimeoutError';
  return error;
}

function abortReason(signal: AbortSignal): unknown {
  if (signal.reason !== undefined) return signal.reason;
  const error = new Error('This operation was aborted');
  error.name = 'AbortError';
  return error;
}

/** What one call sends. */
export interface HttpCall {
  url: string;
  method: string;
  headers: Record<string, string>;
  body: Buffer | string | null;
  signal?: AbortSignal;
}

/** The call a fetch Request describes (what openapi-fetch builds), its body read. */
export async function callOfRequest(request: Request): Promise<HttpCall> {
  const headers: Record<string, string> = {};
  request.headers.forEach((value, name) => (headers[name] = value));
  const body = request.body === null ? null : Buffer.from(await request.arrayBuffer());
  return { url: request.url, method: request.method, headers, body, signal: request.signal };
}

/** Sends `call` and reads its whole answer, within `timeoutMs` (null: no deadline). */
export async function callOverHttp(call: HttpCall, timeoutMs: number | null): Promise<HttpAnswer> {
  const url = new URL(call.url);
  const transport = url.protocol === 'https:' ? https : url.protocol === 'http:' ? http : null;
  if (!transport) throw new Error(`unsupported protocol "${url.protocol}" (http: or https:)`);
  const { body, signal } = call;
  const headers = { ...call.headers };
  if (body !== null) headers['content-length'] = String(Buffer.byteLength(body));
  if (signal?.aborted) throw abortReason(signal);

  return new Promise<HttpAnswer>((resolve, reject) => {
    let settled = false;
    const finish = (error: unknown, answer?: HttpAnswer) => {
      if (settled) return;
      settled = true;
      if (timer) clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      if (error === null) resolve(answer!);
      else {
        outgoing.destroy();
        reject(error);
      }
    };
    const onAbort = () => finish(abortReason(signal!));
    const timer = timeoutMs === null ? null : setTimeout(() => finish(timeoutError()), timeoutMs);
    signal?.addEventListener('abort', onAbort, { once: true });

    const outgoing = transport.request(url, { method: call.method, headers }, (incoming) => {
      const chunks: Buffer[] = [];
      incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
      incoming.on('error', (error) => finish(error));
      incoming.on('end', () => {
        const pairs: [string, string][] = [];
        for (let i = 0; i < incoming.rawHeaders.length; i += 2) pairs.push([incoming.rawHeaders[i], incoming.rawHeaders[i + 1]]);
        finish(null, { status: incoming.statusCode ?? 0, statusText: incoming.statusMessage ?? '', headers: pairs, text: Buffer.concat(chunks).toString('utf8') });
      });
    });
    outgoing.on('error', (error) => finish(error));
    outgoing.end(body ?? undefined);
  });
}
