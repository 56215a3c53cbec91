/**
 * Helpers shared by the provider clients: error mapping, response validation, URL checks.
 * Nothing here ever puts an access token into a message.
 */
import { scrub } from '../../../git/scrub.ts';
import { MAX_PAGES, ProviderError } from './types.ts';

export type ProviderName = 'github' | 'gitlab' | 'gitea' | 'git';

export const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

export const unexpectedAnswer = (provider: ProviderName, what: string): ProviderError =>
  new ProviderError('unavailable', `unexpected answer from ${provider}: ${what}`);

export const timedOut = (provider: ProviderName, timeoutMs: number): ProviderError =>
  new ProviderError('unavailable', `${provider} did not answer within ${timeoutMs} ms`);

export const tooManyPages = (provider: ProviderName): ProviderError =>
  new ProviderError('unavailable', `${provider} returned more than ${MAX_PAGES} pages; giving up`);

/** 401/403 mean the provider refused the credentials; every other failure is "unavailable". */
export function statusError(provider: ProviderName, status: number): ProviderError {
  if (status === 401 || status === 403) {
    return new ProviderError('rejected', `${provider} rejected the access token (HTTP ${status})`);
  }
  if (status === 404) {
    return new ProviderError('unavailable', `${provider} answered HTTP 404: repository not found or not visible with this token`);
  }
  return new ProviderError('unavailable', `${provider} answered HTTP ${status}`);
}


/** Turns anything thrown while talking to a provider into a ProviderError. */
export function toProviderError(
  err: unknown,
  provider: ProviderName,
  ctx: { signal: AbortSignal; token: string; timeoutMs: number },
): ProviderError {
  if (ctx.signal.aborted) return timedOut(provider, ctx.timeoutMs);
  if (err instanceof ProviderError) return new ProviderError(err.kind, scrub(err.message, ctx.token));
  const raw = err instanceof Error ? describeError(err) : String(err);
  return new ProviderError('unavailable', `could not read from ${provider}: ${scrub(raw, ctx.token)}`);
}

function describeError(err: Error): string {
  // fetch() wraps network failures as TypeError('fetch failed') with the useful part in `cause`.
  const cause = (err as { cause?: unknown }).cause;
  if (err.message === 'fetch failed' && cause instanceof Error) return cause.message || cause.name;
  return err.message || err.name;
}

/** Parses and checks an API root; returns `origin + path` without trailing slashes. */
export function parseApiBase(raw: string, provider: ProviderName): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ProviderError('unavailable', `${provider} api_base_url is not a valid URL`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw new ProviderError('unavailable', `${provider} api_base_url must be an http(s) URL`);
  }
  if (url.username || url.password || url.search || url.hash) {
    throw new ProviderError('unavailable', `${provider} api_base_url must not contain credentials, a query or a fragment`);
  }
  return `${url.origin}${url.pathname.replace(/\/+$/, '')}`;
}

/** `owner/repo` → its two parts; GitHub and Gitea have exactly two. */
export function splitOwnerRepo(fullName: string, provider: ProviderName): { owner: string; repo: string } {
  const parts = fullName.split('/');
  if (parts.length !== 2 || parts.some((p) => p.trim() === '')) {
    throw new ProviderError('unavailable', `${provider} full_name must look like owner/repo`);
  }
  return { owner: parts[0], repo: parts[1].replace(/\.git$/, '') };
}

/** Link header → URL of rel="next", or null. */
export function nextLink(header: string | null | undefined): string | null {
  if (!header) return null;
  for (const part of header.split(',')) {
    const m = /<([^>]*)>\s*;(.*)$/.exec(part.trim());
    if (!m) continue;
    const rel = /\brel\s*=\s*(?:"([^"]*)"|([^\s;,]+))/i.exec(m[2]);
    const values = (rel?.[1] ?? rel?.[2] ?? '').toLowerCase().split(/\s+/);
    if (values.includes('next')) return m[1];
  }
  return null;
}

/** Any parseable timestamp → ISO 8601 UTC with milliseconds. */
export function isoTimestamp(v: unknown, provider: ProviderName): string {
  if (typeof v !== 'string') throw unexpectedAnswer(provider, 'created_at is missing');
  const d = new Date(v);
  if (Number.isNaN(d.getTime())) throw unexpectedAnswer(provider, 'created_at is not a timestamp');
  return d.toISOString();
}

export function requireString(obj: Record<string, unknown>, key: string, provider: ProviderName): string {
  const v = obj[key];
  if (typeof v !== 'string') throw unexpectedAnswer(provider, `${key} is not a string`);
  return v;
}

export function requireInt(obj: Record<string, unknown>, key: string, provider: ProviderName): number {
  const v = obj[key];
  if (typeof v !== 'number' || !Number.isSafeInteger(v)) throw unexpectedAnswer(provider, `${key} is not an integer`);
  return v;
}

/** `obj[key].ref` / `obj[key].username` and the like. */
export function nestedString(obj: Record<string, unknown>, key: string, inner: string, provider: ProviderName): string {
  const v = obj[key];
  if (!isRecord(v) || typeof v[inner] !== 'string') throw unexpectedAnswer(provider, `${key}.${inner} is not a string`);
  return v[inner] as string;
}

/** A user object's name field, or '' when the account is gone (the provider sends null). */
export function userName(v: unknown, key: string): string {
  return isRecord(v) && typeof v[key] === 'string' ? (v[key] as string) : '';
}

/** Branch objects (`[{name: ...}]`, GitHub/GitLab/Gitea alike) → names. */
export function branchNames(page: unknown, provider: ProviderName): string[] {
  if (!Array.isArray(page)) throw unexpectedAnswer(provider, 'branch list is not an array');
  return page.map((b) => {
    if (!isRecord(b) || typeof b.name !== 'string') throw unexpectedAnswer(provider, 'branch without a name');
    return b.name;
  });
}

export function assertArray(page: unknown, provider: ProviderName, what: string): unknown[] {
  if (!Array.isArray(page)) throw unexpectedAnswer(provider, `${what} is not an array`);
  return page;
}

export function assertRecord(item: unknown, provider: ProviderName, what: string): Record<string, unknown> {
  if (!isRecord(item)) throw unexpectedAnswer(provider, `${what} is not an object`);
  return item;
}

export const dedupe = (names: Iterable<string>): string[] => [...new Set(names)];
