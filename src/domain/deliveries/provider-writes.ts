/**
 * Opening or updating a pod's merge (pull) request through the provider's REST API (GitHub,
 * GitLab, Gitea), for `CONFIG deliver = merge_request` (docs/agents.md "Getting the work back").
 * One request per branch: an open one for the same source branch is updated, not duplicated.
 * The token goes in the Authorization header only; errors never carry it.
 */
import { parseApiBase, splitOwnerRepo } from '../repositories/providers/common.ts';
import { ProviderError, type ProviderTarget } from '../repositories/providers/types.ts';
import { scrub } from '../../git/scrub.ts';
import type { MergeRequestRef } from './model.ts';

export interface MergeRequestDraft {
  branch: string;
  base: string;
  title: string;
  body: string;
}

const TIMEOUT_MS = 15_000;

interface Shape {
  api: string;
  auth: string;
  /** Open requests whose source branch is `branch` (the list URL). */
  list: (branch: string) => string;
  one: (id: number) => string;
  create: string;
  createBody: (d: MergeRequestDraft) => unknown;
  updateBody: (d: MergeRequestDraft) => unknown;
  updateMethod: 'PATCH' | 'PUT';
  read: (raw: Record<string, unknown>) => { id: number; url: string; state: string; branch: string };
}

function shapeOf(target: ProviderTarget, token: string): Shape {
  if (target.provider === 'gitlab') {
    const api = parseApiBase(target.apiBaseUrl ?? 'https://gitlab.com/api/v4', 'gitlab');
    const project = `${api}/projects/${encodeURIComponent(target.fullName)}`;
    return {
      api,
      auth: `Bearer ${token}`,
      list: (branch) => `${project}/merge_requests?state=opened&source_branch=${encodeURIComponent(branch)}`,
      one: (id) => `${project}/merge_requests/${id}`,
      create: `${project}/merge_requests`,
      createBody: (d) => ({ source_branch: d.branch, target_branch: d.base, title: d.title, description: d.body }),
      updateBody: (d) => ({ title: d.title, description: d.body }),
      updateMethod: 'PUT',
      read: (raw) => ({ id: Number(raw.iid), url: String(raw.web_url), state: String(raw.state), branch: String(raw.source_branch) }),
    };
  }
  const github = target.provider === 'github';
  const api = parseApiBase(target.apiBaseUrl ?? (github ? 'https://api.github.com' : ''), target.provider === 'gitea' ? 'gitea' : 'github');
  const { owner, repo } = splitOwnerRepo(target.fullName, github ? 'github' : 'gitea');
  const pulls = `${api}/repos/${encodeURIComponent(owner)}/${encodeURIComponent(repo)}/pulls`;
  return {
    api,
    auth: github ? `Bearer ${token}` : `token ${token}`,
    list: (branch) => (github ? `${pulls}?state=open&head=${encodeURIComponent(`${owner}:${branch}`)}&per_page=100` : `${pulls}?state=open&limit=50`),
    one: (id) => `${pulls}/${id}`,
    create: pulls,
    createBody: (d) => ({ head: d.branch, base: d.base, title: d.title, body: d.body }),
    updateBody: (d) => ({ title: d.title, body: d.body }),
    updateMethod: 'PATCH',
    read: (raw) => {
      const head = raw.head as Record<string, unknown> | undefined;
      const merged = raw.merged === true || (typeof raw.merged_at === 'string' && raw.merged_at !== '');
      return { id: Number(raw.number), url: String(raw.html_url), state: raw.state === 'open' ? 'opened' : merged ? 'merged' : 'closed', branch: String(head?.ref ?? '') };
    },
  };
}

async function call(shape: Shape, token: string, method: string, url: string, body?: unknown): Promise<unknown> {
  let response: Response;
  try {
    response = await fetch(url, {
      method,
      headers: { Authorization: shape.auth, Accept: 'application/json', 'Content-Type': 'application/json', 'User-Agent': 'drover' },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(TIMEOUT_MS),
    });
  } catch (error) {
    throw new ProviderError('unavailable', `the provider could not be reached: ${scrub((error as Error).message, token)}`);
  }
  const text = await response.text();
  if (response.status === 401 || response.status === 403) throw new ProviderError('rejected', `the provider refused the repository token (${response.status})`);
  if (!response.ok) throw new ProviderError('unavailable', `the provider answered ${response.status}: ${scrub(text.slice(0, 200), token)}`);
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new ProviderError('unavailable', 'the provider answered something other than JSON');
  }
}

const mapState = (state: string): MergeRequestRef['state'] => (state === 'opened' || state === 'merged' || state === 'closed' ? state : 'opened');

/** Opens the merge request of `draft.branch`, or updates the open one; what it is now. */
export async function upsertMergeRequest(target: ProviderTarget, token: string, draft: MergeRequestDraft): Promise<MergeRequestRef> {
  const shape = shapeOf(target, token);
  const listed = await call(shape, token, 'GET', shape.list(draft.branch));
  const open = (Array.isArray(listed) ? listed : [])
    .filter((raw): raw is Record<string, unknown> => typeof raw === 'object' && raw !== null)
    .map(shape.read)
    .find((mr) => mr.branch === draft.branch && mr.state === 'opened');
  const raw = open
    ? await call(shape, token, shape.updateMethod, shape.one(open.id), shape.updateBody(draft))
    : await call(shape, token, 'POST', shape.create, shape.createBody(draft));
  const mr = shape.read(raw as Record<string, unknown>);
  if (!Number.isInteger(mr.id) || mr.id <= 0) throw new ProviderError('unavailable', 'the provider answered a merge request without an id');
  return { id: mr.id, url: mr.url, state: mapState(mr.state) };
}
