/**
 * GitLab through @gitbeaker/rest.
 *
 * What gitbeaker 43 does, read from its source, and how we live with it:
 * - Base URL: it always builds `${host}/api/v4/`; `prefixUrl` is appended *after* `api/v4`,
 *   so it cannot express another API root. GitLab's API root is always `<instance>/api/v4`, so
 *   we strip that suffix from api_base_url to get `host` (a bare instance URL is accepted too).
 * - Timeout: `queryTimeout` becomes one AbortSignal.timeout shared by every page of an
 *   `all()` call, i.e. it bounds the whole operation. index.ts races a deadline on top.
 * - Pagination: follows `Link: rel="next"` (GitLab sends it with offset pagination), reusing
 *   only the query string of the link, so the token never goes to another host. It stops once
 *   `maxPages * perPage` items are collected; we ask for one page more than MAX_PAGES to tell
 *   "done" from "cut off".
 * - Retries: 429 and 502 are retried up to 10 times with 0.25 ms…128 ms pauses (≈ 0.3 s in
 *   all), inside the same timeout, so a failing provider still fails fast.
 * - Auth: `oauthToken` is sent as `Authorization: Bearer <t>` (GitLab accepts personal,
 *   project and group access tokens that way); `token` would use the PRIVATE-TOKEN header.
 * - Its errors keep the Request (with our Authorization header) in `cause`: we never pass them
 *   on, only the status.
 * Only the two resource classes we need are built, not the whole `Gitlab` bundle.
 */
import { Branches, MergeRequests, GitbeakerRequestError, GitbeakerRetryError, GitbeakerTimeoutError } from '@gitbeaker/rest';
import {
  assertArray,
  assertRecord,
  branchNames,
  isoTimestamp,
  nestedString,
  parseApiBase,
  requireInt,
  requireString,
  statusError,
  tooManyPages,
} from './common.ts';
import {
  MAX_PAGES,
  ProviderError,
  type MergeRequest,
  type MergeRequestFilter,
  type ProviderCall,
  type ProviderTarget,
} from './types.ts';

const DEFAULT_API = 'https://gitlab.com/api/v4';
const PER_PAGE = 100;

function resourceOptions(target: ProviderTarget, call: ProviderCall) {
  const host = parseApiBase(target.apiBaseUrl ?? DEFAULT_API, 'gitlab').replace(/\/api\/v4$/i, '');
  if (target.fullName.trim() === '' || target.fullName.startsWith('/') || target.fullName.endsWith('/')) {
    throw new ProviderError('unavailable', 'gitlab full_name must look like group/project');
  }
  return { host, oauthToken: call.token, queryTimeout: call.timeoutMs };
}

function mapGitbeakerError(err: unknown): unknown {
  if (err instanceof GitbeakerRequestError) {
    const status = err.cause?.response?.status;
    return typeof status === 'number' ? statusError('gitlab', status) : new ProviderError('unavailable', 'gitlab request failed');
  }
  if (err instanceof GitbeakerRetryError) {
    return new ProviderError('unavailable', 'gitlab kept answering 429/502');
  }
  if (err instanceof GitbeakerTimeoutError) {
    return new ProviderError('unavailable', 'gitlab did not answer in time');
  }
  return err;
}

/** The paginated result as an array, refusing a cut-off listing. */
function checkedList(result: unknown, what: string): unknown[] {
  const list = assertArray(result, 'gitlab', what);
  if (list.length > MAX_PAGES * PER_PAGE) throw tooManyPages('gitlab');
  return list;
}

export async function listBranches(target: ProviderTarget, call: ProviderCall): Promise<string[]> {
  const api = new Branches(resourceOptions(target, call));
  try {
    // gitbeaker URL-encodes the project path (group/sub/repo → group%2Fsub%2Frepo).
    const result: unknown = await api.all(target.fullName, { pagination: 'offset', perPage: PER_PAGE, maxPages: MAX_PAGES + 1 });
    return branchNames(checkedList(result, 'branch list'), 'gitlab');
  } catch (err) {
    throw mapGitbeakerError(err);
  }
}

function toMergeRequest(raw: unknown): MergeRequest {
  const mr = assertRecord(raw, 'gitlab', 'merge request');
  const state = requireString(mr, 'state', 'gitlab');
  return {
    id: requireInt(mr, 'iid', 'gitlab'),
    title: requireString(mr, 'title', 'gitlab'),
    // GitLab states: opened, closed, locked, merged. `locked` is reported as closed.
    state: state === 'opened' ? 'opened' : state === 'merged' ? 'merged' : 'closed',
    source_branch: requireString(mr, 'source_branch', 'gitlab'),
    target_branch: requireString(mr, 'target_branch', 'gitlab'),
    author: nestedString(mr, 'author', 'username', 'gitlab'),
    url: requireString(mr, 'web_url', 'gitlab'),
    created_at: isoTimestamp(mr.created_at, 'gitlab'),
  };
}

export async function listMergeRequests(
  target: ProviderTarget,
  call: ProviderCall,
  filter: MergeRequestFilter,
): Promise<MergeRequest[]> {
  const api = new MergeRequests(resourceOptions(target, call));
  let result: unknown;
  try {
    result = await api.all({
      projectId: target.fullName,
      pagination: 'offset',
      perPage: PER_PAGE,
      maxPages: MAX_PAGES + 1,
      ...(filter.state === 'all' ? {} : { state: filter.state }),
      ...(filter.branch === undefined ? {} : { sourceBranch: filter.branch }),
    });
  } catch (err) {
    throw mapGitbeakerError(err);
  }
  return checkedList(result, 'merge request list').map(toMergeRequest);
}
