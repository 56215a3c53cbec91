/**
 * A pod's delivery (docs/agents.md "Getting the work back"): what became of its work, as pods,
 * runs and their events show it. Stored as JSON text on the pod row.
 */
import type { DeliveryReport } from '../../protocol/delivery.ts';
import type { RepositoryRow } from '../../store/schema.ts';
import type { AgentfileConfig, AgentfileLines } from '../pods/agentfile.ts';
import { agentfileError } from '../pods/agentfile-syntax.ts';

export interface MergeRequestRef {
  id: number;
  url: string;
  state: 'opened' | 'merged' | 'closed';
}

export interface Delivery {
  status: 'pending' | 'pushed' | 'no_changes' | 'failed';
  branch: string | null;
  base_commit: string | null;
  head_commit: string | null;
  commits: { sha: string; subject: string }[];
  files_changed: number;
  insertions: number;
  deletions: number;
  merge_request: MergeRequestRef | null;
  error: string | null;
}

export const PENDING_DELIVERY: Delivery = {
  status: 'pending',
  branch: null,
  base_commit: null,
  head_commit: null,
  commits: [],
  files_changed: 0,
  insertions: 0,
  deletions: 0,
  merge_request: null,
  error: null,
};

export function parseDelivery(text: string | null): Delivery | null {
  if (text === null) return null;
  try {
    return JSON.parse(text) as Delivery;
  } catch {
    return null;
  }
}

/** The delivery a runner reported (without its patch); null: no workspace was made, nothing to deliver. */
export function deliveryFromReport(report: DeliveryReport | null | undefined): Delivery {
  if (!report) return { ...PENDING_DELIVERY, status: 'no_changes' };
  const { patch: _patch, ...fields } = report;
  return { ...fields, merge_request: null };
}

/**
 * `CONFIG deliver` and `deliver_branch` checked against the pod's repository: `merge_request`
 * needs a provider with merge requests, both need a repository, and the work never goes to the
 * base branch. Returns what the pod's config stores.
 */
export function deliverSettings(
  config: AgentfileConfig,
  lines: AgentfileLines,
  repository: Pick<RepositoryRow, 'provider' | 'default_branch'> | null,
): { deliver: 'branch' | 'merge_request' | 'none'; deliver_branch: string | null } {
  const deliver = config.deliver ?? 'branch';
  const branch = config.deliver_branch ?? null;
  const line = (key: 'deliver' | 'deliver_branch') => lines[`CONFIG ${key}`] ?? null;
  if (!repository && config.deliver !== undefined && config.deliver !== 'none') throw agentfileError(line('deliver'), 'CONFIG deliver needs REPO (a repository to deliver to)');
  if (!repository && branch !== null) throw agentfileError(line('deliver_branch'), 'CONFIG deliver_branch needs REPO (a repository to deliver to)');
  if (repository && deliver === 'merge_request' && repository.provider === 'git') {
    throw agentfileError(line('deliver'), 'CONFIG deliver = merge_request needs a github, gitlab or gitea repository; this one is a plain git repository');
  }
  if (repository && branch === repository.default_branch) {
    throw agentfileError(line('deliver_branch'), `CONFIG deliver_branch must not be the base branch ${branch}: the work is never pushed there`);
  }
  return { deliver, deliver_branch: branch };
}
