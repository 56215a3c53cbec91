import { AppError, notFound } from '../../errors.ts';
import * as pods from '../../store/pods.ts';
import { findOrgById } from '../../store/orgs.ts';
import * as runnerTokens from '../../store/runner-tokens.ts';
import * as runners from '../../store/runners.ts';
import type { RunnerRow } from '../../store/schema-runners.ts';
import { hashSecret, randomBase62 } from '../auth/keys.ts';
import type { DomainContext } from '../context.ts';
import { capacityProblem } from './selection.ts';

export interface RegisterRunnerInput {
  token: string;
  name: string;
  labels: string[];
  max_pods: number;
  version: string;
  os: string;
  arch: string;
}

/**
 * Exchanges one use of a registration token (single-use unless issued with `uses`) for a runner
 * and its own credential, which the runner keeps in its work dir. Labels are the token's plus the
 * runner's own. The use is taken and the runner recorded in one transaction.
 */
export async function registerRunner(ctx: DomainContext, input: RegisterRunnerInput): Promise<{ runner: RunnerRow; credential: string; org: string }> {
  const now = ctx.now();
  const credential = newRunnerCredential();
  return ctx.store.transaction(async (trx) => {
    const registration = await runnerTokens.takeRunnerTokenUse(trx, hashSecret(input.token), now);
    if (!registration) {
      throw new AppError('INVALID_API_KEY', 'the registration token is not valid: unknown, used up, revoked or expired');
    }
    const labels = [...new Set([...(JSON.parse(registration.labels) as string[]), ...input.labels])];
    const runner = await runners.insertRunner(trx, {
      org_id: registration.org_id,
      name: input.name,
      credential_hash: hashSecret(credential),
      status: 'offline',
      version: input.version,
      os: input.os,
      arch: input.arch,
      labels: JSON.stringify(labels),
      agents: '[]',
      sandbox: null,
      max_pods: input.max_pods,
      connection_id: null,
      last_heartbeat_at: null,
      created_at: now,
      updated_at: now,
    });
    const org = await findOrgById(trx, registration.org_id);
    return { runner, credential, org: org!.slug };
  });
}

/** A runner's own credential: `drvrun_` + 40 base62 characters; only its hash is stored. */
export const newRunnerCredential = (): string => 'drvrun_' + randomBase62(40);

export async function authenticateRunner(ctx: DomainContext, credential: string): Promise<RunnerRow> {
  const runner = await runners.findRunnerByCredential(ctx.store.db, hashSecret(credential));
  if (!runner) throw new AppError('INVALID_API_KEY', 'the runner credential is not valid');
  return runner;
}

export const listRunners = (ctx: DomainContext, orgId: number) => runners.listRunners(ctx.store.db, orgId);

/** GET /runners/available: online, fresh heartbeat, free capacity. */
export async function availableRunners(ctx: DomainContext, orgId: number) {
  const now = ctx.now();
  return (await runners.listRunners(ctx.store.db, orgId)).filter((r) => capacityProblem(r, now) === null);
}

export async function getRunner(ctx: DomainContext, orgId: number, id: number) {
  const runner = await runners.findRunner(ctx.store.db, orgId, id);
  if (!runner) throw notFound('runner');
  return runner;
}

export async function runnerPods(ctx: DomainContext, orgId: number, runnerId: number, filter: { status?: string }, page: { limit: number; offset: number }) {
  await getRunner(ctx, orgId, runnerId);
  const query = { ...filter, runnerId };
  const [rows, total] = await Promise.all([pods.listPods(ctx.store.db, orgId, query, page), pods.countPods(ctx.store.db, orgId, query)]);
  return { rows, total };
}

