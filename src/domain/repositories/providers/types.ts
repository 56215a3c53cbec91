/**
 * Shared types of the Git provider clients (branches and merge requests read live from
 * GitHub, GitLab, Gitea or a plain git remote). See docs/api.md.
 */

export type ProviderKind = 'github' | 'gitlab' | 'gitea' | 'git';

export interface ProviderTarget {
  provider: ProviderKind;
  /** `owner/repo` (GitHub, Gitea) or `group/sub/repo` (GitLab). */
  fullName: string;
  /** Clone URL; the only address the `git` provider uses. */
  url: string;
  /** The provider's API root (e.g. `https://gitlab.com/api/v4`); null means the provider default. */
  apiBaseUrl: string | null;
}

export type MergeRequestStateValue = 'opened' | 'merged' | 'closed';

export interface MergeRequest {
  id: number;
  title: string;
  state: MergeRequestStateValue;
  source_branch: string;
  target_branch: string;
  author: string;
  url: string;
  /** ISO 8601 UTC with milliseconds. */
  created_at: string;
}

export type MergeRequestState = MergeRequestStateValue | 'all';

export interface MergeRequestFilter {
  state: MergeRequestState;
  /** Source branch. */
  branch?: string;
}

export interface ProviderCallOptions {
  /** Budget for the whole operation, every page included. Default 10 000 ms. */
  timeoutMs?: number;
}

export type ProviderErrorKind = 'rejected' | 'unavailable';

/**
 * `rejected`: the provider refused the credentials (401/403).
 * `unavailable`: unreachable, timed out, 5xx, or an answer we could not use.
 * The message never contains the access token.
 */
export class ProviderError extends Error {
  readonly kind: ProviderErrorKind;
  constructor(kind: ProviderErrorKind, message: string) {
    super(message);
    this.name = 'ProviderError';
    this.kind = kind;
  }
}

export const DEFAULT_TIMEOUT_MS = 10_000;
/** Upper bound on pages read per operation, so a misbehaving provider cannot loop forever. */
export const MAX_PAGES = 100;

/** What index.ts hands to each provider implementation. */
export interface ProviderCall {
  token: string;
  timeoutMs: number;
  /** Aborts when the operation's budget is spent. */
  signal: AbortSignal;
}
