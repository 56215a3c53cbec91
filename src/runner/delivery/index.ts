/**
 * Delivering a pod's work at its end (docs/agents.md "Getting the work back"): capture inside the
 * pod's sandbox (./capture.ts), then describe and push from the runner's clone cache (./push.ts).
 * Whatever fails, the report carries what was captured (the patch above all), so a failed push
 * never loses the only copy.
 */
import fs from 'node:fs/promises';
import type { DeliverSpec, DeliveryReport } from '../../protocol/delivery.ts';
import type { Sandbox } from '../sandbox/index.ts';
import { removeTree } from '../workspace/files.ts';
import { branchNameProblem } from '../workspace/git.ts';
import { capture, cacheGit, CaptureError } from './capture.ts';
import { describeWork, listCommits, measureWork, pushWork, PushError, type Work } from './push.ts';

export interface DeliveryRequest {
  podKey: string;
  /** A persistent workspace's key: its runs deliver to one branch, drover/<this key> (by default). */
  persistentKey?: string | null;
  repo: { url: string; token: string | null; defaultBranch: string };
  deliver: DeliverSpec;
  workspace: { path: string; home: string; readOnly: string[]; base: string; cache: string };
  /** A directory of the runner's for this delivery, removed afterwards. */
  outDir: string;
  sandbox: Sandbox | null;
  timeoutMs: number;
}

const EMPTY: Omit<DeliveryReport, 'status' | 'error'> = {
  branch: null,
  base_commit: null,
  head_commit: null,
  commits: [],
  files_changed: 0,
  insertions: 0,
  deletions: 0,
  patch: null,
};

/**
 * The branch the work goes to: the one asked for, else the agent's own unless it is the base
 * branch, else drover/<pod key>, or for a persistent loop's runs drover/<persistent key> (one
 * branch the runs add to; docs/agents.md "Getting the work back").
 */
export function targetBranch(request: Pick<DeliveryRequest, 'podKey' | 'persistentKey' | 'repo' | 'deliver'>, agentBranch: string | null): string {
  if (request.deliver.branch) return request.deliver.branch;
  if (agentBranch !== null && agentBranch !== request.repo.defaultBranch && branchNameProblem(agentBranch) === null) return agentBranch;
  return `drover/${request.persistentKey ?? request.podKey}`;
}

export async function deliverWork(request: DeliveryRequest): Promise<DeliveryReport> {
  const { workspace, timeoutMs } = request;
  const at = { cache: workspace.cache, timeoutMs };
  const base = workspace.base;
  await removeTree(request.outDir);
  await fs.mkdir(request.outDir, { recursive: true, mode: 0o700 });
  let ref: string | null = null;
  let branch: string | null = null;
  let head: string | null = null;
  let work: Work | null = null;
  try {
    const captured = await capture({ podKey: request.podKey, workspace: workspace.path, home: workspace.home, readOnly: workspace.readOnly, outDir: request.outDir, cache: workspace.cache, sandbox: request.sandbox, timeoutMs });
    ref = captured.ref;
    head = captured.head;
    branch = targetBranch(request, captured.branch);
    if (head === base) return { ...EMPTY, status: 'no_changes', base_commit: base, head_commit: head, error: null };
    const commits = await listCommits(at, base, head);
    if (commits.length === 0) return { ...EMPTY, status: 'no_changes', base_commit: base, head_commit: head, error: null };
    const problem = branch === request.repo.defaultBranch ? `the work is never pushed to the base branch ${branch}; name another with CONFIG deliver_branch` : branchNameProblem(branch);
    if (problem) {
      work = await describeWork(at, base, head);
      return { ...EMPTY, ...work, branch, base_commit: base, head_commit: head, status: 'failed', error: problem };
    }
    // The push and the diff stat and patch side by side: the push needs neither (docs/agents.md "Getting the work back").
    const [measured, pushed] = await Promise.allSettled([measureWork(at, base, head), pushWork(at, request.repo.url, request.repo.token ?? '', head, branch)]);
    work = measured.status === 'fulfilled' ? { commits, ...measured.value } : { ...EMPTY, commits };
    if (pushed.status === 'rejected') throw pushed.reason;
    // Pushed: a diff stat that could not be read does not make it less so.
    const error = measured.status === 'rejected' ? `pushed, but ${(measured.reason as Error).message}`.slice(0, 2000) : null;
    return { ...EMPTY, ...work, branch, base_commit: base, head_commit: head, status: 'pushed', error };
  } catch (error) {
    const known = error instanceof CaptureError || error instanceof PushError;
    const message = known ? (error as Error).message : `delivering failed: ${(error as Error).message}`;
    return { ...EMPTY, ...(work ?? {}), status: 'failed', branch, base_commit: base, head_commit: head, error: message.slice(0, 2000) };
  } finally {
    await Promise.all([ref ? cacheGit(at, ['update-ref', '-d', ref]).catch(() => undefined) : undefined, removeTree(request.outDir).catch(() => undefined)]);
  }
}

/** Git's budget for a delivery's commands (capture, describe, push). */
const DELIVERY_GIT_TIMEOUT_MS = 5 * 60_000;

/**
 * A pod's delivery at its end, as its outcome reports it: null without a repository, with
 * `CONFIG deliver = none`, or when no workspace was ever made (nothing to deliver).
 */
export async function deliverPod(
  spec: { key: string; persistent_key?: string | null; repo: { url: string; token: string | null; default_branch: string } | null; deliver?: DeliverSpec },
  workspace: { path: string; home: string; readOnly: string[]; origin: { base: string; cache: string } | null } | null,
  options: { sandbox: Sandbox | null; outDir: string },
): Promise<DeliveryReport | null> {
  const deliver = spec.deliver ?? { mode: 'branch', branch: null };
  if (!spec.repo || deliver.mode === 'none' || !workspace?.origin) return null;
  const request = {
    podKey: spec.key,
    persistentKey: spec.persistent_key ?? null,
    repo: { url: spec.repo.url, token: spec.repo.token, defaultBranch: spec.repo.default_branch },
    deliver,
    workspace: { path: workspace.path, home: workspace.home, readOnly: workspace.readOnly, ...workspace.origin },
    outDir: options.outDir,
    sandbox: options.sandbox,
    timeoutMs: DELIVERY_GIT_TIMEOUT_MS,
  };
  // deliverWork reports its own failures; this catches what it cannot (the work dir unwritable).
  return deliverWork(request).catch((error: unknown) => ({ ...EMPTY, status: 'failed' as const, error: `delivering failed: ${(error as Error).message}` }));
}
