/**
 * The typed Drover API client: openapi-fetch over the types generated from the OpenAPI document
 * (schema.ts, `npm run client`), plus what every caller needs around it: the base URL and key,
 * API errors as an ApiError carrying the error body's `code` and `request_id`, an unreachable server
 * as an UnreachableError naming the URL and the cause, and each response's JSON text as sent.
 */
import createClient, { type Client } from 'openapi-fetch';
import { callOfRequest, callOverHttp, toResponse, type HttpAnswer } from './http-call.ts';
import { networkCause } from './network.ts';
import type { components, paths } from './schema.ts';

export { networkCause } from './network.ts';

export type { components, paths } from './schema.ts';
export type Schemas = components['schemas'];
export type ErrorBody = Schemas['ErrorBody'];

/** The prefix of every organization's resources; `{org}` is filled from the client's organization. */
export const ORG_BASE = '/api/v1/ext/orgs/{org}';

/** The API answered with an error (docs/api.md): its status, code, sentence and request id. */
export class ApiError extends Error {
  readonly status: number;
  readonly code: string;
  readonly requestId: string | null;
  readonly details: ErrorBody['details'];
  readonly requiredScopes: string[] | undefined;

  constructor(status: number, body: Partial<ErrorBody> | null, requestId: string | null) {
    super(body?.error ?? `HTTP ${status}`);
    this.name = 'ApiError';
    this.status = status;
    this.code = body?.code ?? `HTTP_${status}`;
    this.requestId = body?.request_id ?? requestId;
    this.details = body?.details;
    this.requiredScopes = body?.required_scopes;
  }
}

/** No answer at all: the server could not be reached (the cause: ECONNREFUSED, ENOTFOUND, a timeout…). */
export class UnreachableError extends Error {
  constructor(
    readonly url: string,
    /** ECONNREFUSED, ENOTFOUND…, with the system's words. */
    readonly reason: string,
  ) {
    super(`cannot reach ${url}: ${reason}`);
    this.name = 'UnreachableError';
  }
}

export interface ClientOptions {
  /** The server's base URL, e.g. http://127.0.0.1:7070 (the /api/v1/… paths are appended). */
  server: string;
  org: string;
  apiKey: string;
  /** Budget of one request (default 30 s). */
  timeoutMs?: number;
}

export interface Answer<T> {
  data: T;
  /** The response body exactly as the server sent it. */
  raw: string;
  status: number;
}

type Outcome = { data?: unknown; error?: unknown; response: Response };

export class DroverClient {
  readonly api: Client<paths>;
  readonly org: string;
  readonly server: string;
  private readonly apiKey: string;
  private readonly timeoutMs: number;
  private readonly bodies = new WeakMap<Response, string>();

  constructor(options: ClientOptions) {
    this.server = options.server.replace(/\/+$/, '');
    this.org = options.org;
    this.apiKey = options.apiKey;
    this.timeoutMs = options.timeoutMs ?? 30_000;
    this.api = createClient<paths>({
      baseUrl: this.server,
      headers: this.headers(),
      fetch: (request) => this.fetchKeepingBody(request),
    });
  }

  /** The headers every call carries. */
  headers(extra: Record<string, string> = {}): Record<string, string> {
    return { 'x-api-key': this.apiKey, 'user-agent': 'drover-cli', ...extra };
  }

  /** `{org}` for the path parameters of the organization's resources. */
  get path(): { org: string } {
    return { org: this.org };
  }

  /**
   * One call's outcome, settled: the data (typed by the operation) with its raw text, or an
   * ApiError for an error answer. Network failures have already become UnreachableError.
   */
  async call<R extends Outcome>(pending: Promise<R>): Promise<Answer<Exclude<R['data'], undefined>>> {
    const { data, error, response } = await pending;
    const raw = this.bodies.get(response) ?? '';
    if (!response.ok) {
      const body = error !== null && typeof error === 'object' ? (error as Partial<ErrorBody>) : null;
      throw new ApiError(response.status, body, response.headers.get('x-request-id'));
    }
    return { data: data as Exclude<R['data'], undefined>, raw, status: response.status };
  }

  /** fetch with the client's deadline, turning a missing answer into UnreachableError: for event streams, read as they come. */
  async send(input: Request | string, init?: RequestInit, timeoutMs: number | null = this.timeoutMs): Promise<Response> {
    const url = typeof input === 'string' ? input : input.url;
    try {
      return await fetch(input, { ...init, signal: timeoutMs === null ? init?.signal : AbortSignal.any([AbortSignal.timeout(timeoutMs), ...(init?.signal ? [init.signal] : [])]) });
    } catch (error) {
      if (init?.signal?.aborted) throw error;
      throw new UnreachableError(url.split('?')[0], networkCause(error));
    }
  }

  /** An API call (not an event stream: see `send`) over node:http, its body kept as sent (src/client/http-call.ts). */
  private async fetchKeepingBody(request: Request): Promise<Response> {
    let answer: HttpAnswer;
    try {
      answer = await callOverHttp(await callOfRequest(request), this.timeoutMs);
    } catch (error) {
      throw new UnreachableError(request.url.split('?')[0], networkCause(error));
    }
    const response = toResponse(answer);
    this.bodies.set(response, answer.text);
    return response;
  }
}
