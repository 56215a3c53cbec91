import type { Session } from './session.ts';

/** An API error as the API answered it: its sentence, code and, for 403, the scopes it needs. */
export class ApiError extends Error {
  constructor(
    message: string,
    readonly status: number,
    readonly code: string,
    readonly requiredScopes: string[] = [],
  ) {
    super(message);
  }
}

let current: Session | null = null;
let onUnauthorized: () => void = () => undefined;

export function useSessionForApi(session: Session | null, unauthorized: () => void): void {
  current = session;
  onUnauthorized = unauthorized;
}

export const orgBase = (org: string) => `/api/v1/ext/orgs/${encodeURIComponent(org)}`;

export function authHeaders(session: Session): Record<string, string> {
  return { 'X-API-Key': session.key };
}

/** Reads an error body `{error, code, request_id, required_scopes?}` into an ApiError. */
export async function errorOf(response: Response): Promise<ApiError> {
  try {
    const body = (await response.json()) as { error?: string; code?: string; required_scopes?: string[] };
    return new ApiError(body.error ?? `HTTP ${response.status}`, response.status, body.code ?? 'HTTP_ERROR', body.required_scopes ?? []);
  } catch {
    return new ApiError(`HTTP ${response.status}`, response.status, 'HTTP_ERROR');
  }
}

/**
 * Reads started before the first render (docs/dashboard.md "Loading a page"): a signed-in tab asks
 * for what its page will read while it checks its key's scopes, not after. Each is taken once, by
 * the first `api('GET', path)` of the same session (another session's call drops it and asks anew).
 */
const prefetched = new Map<string, { session: Session; response: Promise<unknown> }>();

export function prefetch(session: Session, paths: string[]): void {
  for (const path of paths) {
    const response = request('GET', path, undefined, session);
    response.catch(() => undefined); // an error is the taker's, if any
    prefetched.set(path, { session, response });
  }
}

/** One API call under the org, with the session's key. `path` starts with `/` (e.g. `/tickets`). */
export async function api<T>(method: string, path: string, body?: unknown, session: Session | null = current): Promise<T> {
  const early = method === 'GET' ? prefetched.get(path) : undefined;
  if (early) {
    prefetched.delete(path);
    if (early.session === session) return (await early.response) as T;
  }
  return request<T>(method, path, body, session);
}

async function request<T>(method: string, path: string, body: unknown, session: Session | null): Promise<T> {
  if (!session) throw new ApiError('not signed in', 401, 'AUTH_REQUIRED');
  let response: Response;
  try {
    response = await fetch(orgBase(session.org) + path, {
      method,
      headers: { ...authHeaders(session), ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch (error) {
    throw new ApiError(`the server could not be reached (${(error as Error).message})`, 0, 'NETWORK');
  }
  if (!response.ok) {
    const error = await errorOf(response);
    if (response.status === 401 && session === current) onUnauthorized();
    throw error;
  }
  return (await response.json()) as T;
}

export const query = (params: Record<string, string | number | undefined | null>): string => {
  const entries = Object.entries(params).filter(([, v]) => v !== undefined && v !== null && v !== '') as [string, string | number][];
  return entries.length ? '?' + entries.map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(String(v))}`).join('&') : '';
};
