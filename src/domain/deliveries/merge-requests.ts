/**
 * After a pod's work was pushed with `CONFIG deliver = merge_request` (docs/agents.md "Getting
 * the work back"): one merge request from its branch into the base branch, opened or updated
 * through the provider's API, recorded on the pod's delivery; a pod with a ticket moves the
 * ticket to `in_review` (unless done), and the ticket lists the request (tickets view).
 */
import * as pods from '../../store/pods.ts';
import * as repositories from '../../store/repositories.ts';
import type { PodRow } from '../../store/schema-runners.ts';
import { findTicketBySlug } from '../../store/tickets.ts';
import type { DomainContext } from '../context.ts';
import type { PodConfig } from '../pods/model.ts';
import { transitionWithEvent } from '../pods/events.ts';
import { usageOf } from '../pods/results.ts';
import { setTicketStatus } from '../tickets/service.ts';
import { parseDelivery, type Delivery } from './model.ts';
import { setDelivery } from './record.ts';
import { upsertMergeRequest } from './provider-writes.ts';

/**
 * Called once a pod's delivery is settled. Does its provider work in the background (a slow
 * provider must not hold up the runner's link); the outcome lands on the pod's delivery.
 */
export function afterDelivery(ctx: DomainContext, pod: PodRow): Promise<void> {
  const delivery = parseDelivery(pod.delivery);
  const config = JSON.parse(pod.config) as PodConfig;
  if (delivery?.status !== 'pushed' || config.deliver !== 'merge_request' || pod.repository_id === null) return Promise.resolve();
  const pending = openMergeRequest(ctx, pod, delivery).catch(() => undefined);
  inFlight.add(pending);
  void pending.finally(() => inFlight.delete(pending));
  return Promise.resolve();
}

/** Merge requests being opened (so a test or a shutdown can wait for them). */
export const inFlight = new Set<Promise<unknown>>();

/**
 * How long a stopping server waits for merge requests being opened: a provider call is bounded
 * (15 s per call: a list, then an update or a create), so one in flight ends within this.
 */
export const MERGE_REQUESTS_SHUTDOWN_MS = 35_000;

/**
 * Resolves once the merge requests being opened are opened and recorded (each in one transaction:
 * one still running after `timeoutMs` records nothing once the store is closed, and the next
 * delivery to its branch updates the request it may have opened). True when none is left.
 */
export async function mergeRequestsSettled(timeoutMs = MERGE_REQUESTS_SHUTDOWN_MS): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), timeoutMs)));
  try {
    while (inFlight.size > 0) {
      if ((await Promise.race([Promise.allSettled([...inFlight]).then(() => true as const), timedOut])) === false) return false;
    }
    return true;
  } finally {
    clearTimeout(timer);
  }
}

async function openMergeRequest(ctx: DomainContext, pod: PodRow, delivery: Delivery): Promise<void> {
  const repo = await repositories.findRepository(ctx.store.db, pod.org_id, pod.repository_id!);
  if (!repo || !delivery.branch) return;
  const ticket = pod.ticket_slug ? await findTicketBySlug(ctx.store.db, pod.org_id, pod.ticket_slug) : undefined;
  let outcome: Partial<Delivery>;
  if (!repo.token_encrypted || !ctx.secrets) {
    outcome = { error: 'merge request not opened: the repository has no access token' };
  } else {
    try {
      const target = { provider: repo.provider as 'github', fullName: repo.full_name, url: repo.url, apiBaseUrl: repo.api_base_url };
      const draft = { branch: delivery.branch, base: repo.default_branch, title: title(pod, ticket), body: body(pod, delivery) };
      outcome = { merge_request: await upsertMergeRequest(target, ctx.secrets.decrypt(repo.token_encrypted), draft), error: null };
    } catch (error) {
      outcome = { error: `merge request not opened: ${(error as Error).message}`.slice(0, 2000) };
    }
  }
  await transitionWithEvent(ctx, async (trx) => {
    const now = await pods.findPodByKey(trx, pod.key);
    const current = now && parseDelivery(now.delivery);
    return now && current ? setDelivery(trx, now, { ...current, ...outcome }, ctx.now()) : undefined;
  });
  if (ticket && outcome.merge_request && ticket.status !== 'done' && ticket.status !== 'in_review') {
    await setTicketStatus(ctx, pod.org_id, ticket.slug, 'in_review');
  }
}

function title(pod: PodRow, ticket: { slug: string; title: string } | undefined): string {
  if (ticket) return `${ticket.slug}: ${ticket.title}`.slice(0, 250);
  const first = (pod.result ?? '').split('\n').map((l) => l.trim()).find((l) => l !== '');
  return (first ?? `Work of pod ${pod.key}`).slice(0, 250);
}

function body(pod: PodRow, delivery: Delivery): string {
  const usage = usageOf(pod);
  const tokens = [usage.input_tokens, usage.output_tokens].some((n) => n !== null)
    ? `${usage.input_tokens ?? 0} input / ${usage.output_tokens ?? 0} output tokens`
    : 'not reported';
  const cost = usage.cost_usd === null ? 'not reported' : `$${usage.cost_usd.toFixed(4)}`;
  const commits = delivery.commits.map((c) => `- ${c.sha.slice(0, 12)} ${c.subject}`).join('\n');
  return [
    pod.result ?? '(the agent reported no result)',
    '',
    '---',
    `Pod: ${pod.key} (${pod.agent_slug})`,
    `Usage: ${tokens}; cost: ${cost}`,
    `Changes: ${delivery.files_changed} files, +${delivery.insertions} -${delivery.deletions}`,
    commits,
  ].join('\n').slice(0, 60_000);
}
