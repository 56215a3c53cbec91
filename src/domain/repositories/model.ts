/**
 * What a repository record may hold (docs/api.md, docs/api.md). The checks run when an administrator
 * registers a repository, so that a bad record fails there with a 400 rather than later, on
 * every branch listing, as a provider error.
 */
import type { ProviderKind } from './providers/index.ts';

export const PROVIDERS = ['github', 'gitlab', 'gitea', 'git'] as const satisfies readonly ProviderKind[];
export type Provider = (typeof PROVIDERS)[number];

export const MERGE_REQUEST_STATES = ['opened', 'merged', 'closed', 'all'] as const;

export const DEFAULT_BRANCH = 'main';
/** Longer than any real provider token, short enough to keep junk out of memory and headers. */
export const MAX_TOKEN_LENGTH = 4096;

/** C0 controls and DEL: never part of a token, a URL or a name (and CR/LF would split headers). */
function hasControl(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code < 0x20 || code === 0x7f) return true;
  }
  return false;
}
const hasWhitespaceOrControl = (text: string): boolean => /\s/.test(text) || hasControl(text);
/** `[user@]host:path` as git reads it (scp-like syntax); we require the user part. */
const SCP_LIKE = /^[A-Za-z0-9._~-]+@[A-Za-z0-9.-]+:(?!\/\/)\S+$/;

/** null when the token is usable, else why not (never quoting it). */
export function tokenProblem(token: string): string | null {
  if (token.length === 0) return 'must not be empty';
  if (token.length > MAX_TOKEN_LENGTH) return `must be at most ${MAX_TOKEN_LENGTH} characters`;
  if (hasWhitespaceOrControl(token)) return 'must not contain whitespace or control characters';
  return null;
}

function parseUrl(raw: string): URL | null {
  try {
    return new URL(raw);
  } catch {
    return null;
  }
}

/** Clone URL: http(s), ssh, `user@host:path`, and for `git` also file:// or an absolute path. */
export function urlProblem(provider: Provider, url: string): string | null {
  const local = provider === 'git' ? ', a file:// URL or an absolute path' : '';
  const expected = `must be an http(s) or ssh:// URL or user@host:path${local}`;
  if (hasControl(url)) return 'must not contain control characters';
  if (url.startsWith('-')) return expected;
  const scheme = /^([a-z][a-z0-9+.-]*):\/\//i.exec(url)?.[1].toLowerCase();
  if (scheme === undefined) {
    if (SCP_LIKE.test(url)) return null;
    if (provider === 'git' && url.startsWith('/')) return null;
    return expected;
  }
  const parsed = parseUrl(url);
  if (!parsed || /\s/.test(url)) return expected;
  switch (scheme) {
    case 'http':
    case 'https':
      if (!parsed.hostname) return expected;
      // A token in the URL would be stored and shown in clear; it belongs in `token`.
      if (parsed.username || parsed.password) return 'must not contain credentials (give the token in `token`)';
      return null;
    case 'ssh':
      if (!parsed.hostname) return expected;
      if (parsed.password) return 'must not contain a password';
      return null;
    case 'file':
      return provider === 'git' && parsed.pathname.length > 1 ? null : expected;
    default:
      return expected;
  }
}

/** The provider's API root: an http(s) URL without credentials, query or fragment. */
export function apiBaseUrlProblem(raw: string): string | null {
  const url = parseUrl(raw);
  if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:') || !url.hostname || /\s/.test(raw)) {
    return 'must be an http(s) URL';
  }
  if (url.username || url.password || url.search || url.hash) return 'must not contain credentials, a query or a fragment';
  return null;
}

/** GitHub and Gitea address `owner/repo`; GitLab `group/sub/project`; plain git anything. */
export function fullNameProblem(provider: Provider, fullName: string): string | null {
  if (provider === 'git') return hasControl(fullName) ? 'must not contain control characters' : null;
  const parts = fullName.split('/');
  const bad = parts.some((p) => p === '' || hasWhitespaceOrControl(p));
  if (provider === 'gitlab') return parts.length < 2 || bad ? 'must look like group/project (subgroups allowed)' : null;
  return parts.length !== 2 || bad ? 'must look like owner/repo' : null;
}
