import { AppError, notFound } from '../../errors.ts';
import * as pods from '../../store/pods.ts';
import * as runners from '../../store/runners.ts';
import type { RunnerWithCount } from '../../store/runners.ts';
import { requireOrg } from '../admin/service.ts';
import type { DomainContext } from '../context.ts';
import { podLost } from '../pods/lifecycle.ts';
import { runnerDeleted } from './status.ts';

/** How long POST …/rotate-credential waits for the runner to confirm that it stored the new credential. */
export const ROTATE_CONFIRM_TIMEOUT_MS = 10_000;

async function requireRunner(ctx: DomainContext, orgSlug: string, id: number): Promise<RunnerWithCount> {
  const org = await requireOrg(ctx.store.db, orgSlug);
  const runner = await runners.findRunner(ctx.store.db, org.id, id);
  if (!runner) throw notFound('runner');
  return runner;
}

/** GET /admin/orgs/{org}/runners. */
export async function listOrgRunners(ctx: DomainContext, orgSlug: string): Promise<RunnerWithCount[]> {
  const org = await requireOrg(ctx.store.db, orgSlug);
  return runners.listRunners(ctx.store.db, org.id);
}

/**
 * DELETE /admin/orgs/{org}/runners/{id}: the runner's credential stops working at once, its link
 * is closed on whichever replica holds it (with a code that tells it not to reconnect), and its
 * active pods fail saying why.
 */
export async function deleteRunner(ctx: DomainContext, orgSlug: string, id: number): Promise<void> {
  const runner = await requireRunner(ctx, orgSlug, id);
  if (!(await runnerDeleted(ctx, runner.id, ctx.now()))) throw notFound('runner');
  await ctx.runnerCommand?.(runner.id, 'revoke');
  const reason = `runner ${runner.id} (${runner.name}) was deleted by an administrator`;
  for (const pod of await pods.activePodsOfRunner(ctx.store.db, runner.id)) await podLost(ctx, pod, reason);
}

/**
 * POST /admin/orgs/{org}/runners/{id}/rotate-credential: the runner gets a new credential over its
 * link, stores it and confirms; only then does the old one stop working. Needs the runner connected.
 */
export async function rotateRunnerCredential(ctx: DomainContext, orgSlug: string, id: number, timeoutMs = ROTATE_CONFIRM_TIMEOUT_MS): Promise<RunnerWithCount> {
  const runner = await requireRunner(ctx, orgSlug, id);
  if (runner.connection_id === null) {
    throw new AppError('RUNNER_UNAVAILABLE', `runner ${id} is not connected: a new credential can only be handed to it over its link`);
  }
  await ctx.runnerCommand?.(runner.id, 'rotate');
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    const row = await runners.findRunnerById(ctx.store.db, runner.id);
    if (!row || row.deleted_at !== null) throw notFound('runner');
    if (row.credential_rotated_at !== runner.credential_rotated_at) return requireRunner(ctx, orgSlug, id);
  }
  throw new AppError('RUNNER_UNAVAILABLE', `runner ${id} did not confirm a new credential within ${timeoutMs / 1000} s; its current credential stays valid`);
}
