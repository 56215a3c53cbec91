/**
 * Budgets on model spending (docs/agents.md "Budgets"): what the runner's relay is told to hold a
 * pod to when it starts, and whether a loop's day is spent before a run starts. What is spent is
 * read from the pods' usage (src/store/model-calls.ts), which the relays' reports keep current.
 */
import type { PodBudget } from '../../protocol/runner-link.ts';
import type { Executor } from '../../store/db.ts';
import * as ledger from '../../store/model-calls.ts';
import { utcDayStart } from '../../store/loops.ts';
import type { LoopRow } from '../../store/schema-loops.ts';
import type { PodRow } from '../../store/schema-runners.ts';
import * as runs from '../../store/loop-runs.ts';
import * as loops from '../../store/loops.ts';
import type { DomainContext } from '../context.ts';
import { orgQuotas } from '../quotas/service.ts';
import type { PodConfig } from '../pods/model.ts';

/** The start (epoch ms) of the UTC calendar month holding `at`: the organization quota counts from it. */
export function utcMonthStart(at: number): number {
  const day = new Date(at);
  return Date.UTC(day.getUTCFullYear(), day.getUTCMonth(), 1);
}

const dollars = (value: number): string => `$${value.toFixed(value < 1 ? 4 : 2)}`;

/** The budgets a pod's relay checks before each model call, with what was spent elsewhere before it started. */
export async function podBudgets(ctx: DomainContext, pod: PodRow, config: PodConfig): Promise<PodBudget[]> {
  const db = ctx.store.db;
  const now = ctx.now();
  const budgets: PodBudget[] = [];
  if (config.max_cost_usd) budgets.push({ name: 'pod max_cost_usd', limit_usd: config.max_cost_usd, spent_usd: 0 });
  const loopRun = config.loop_run_id ? await runs.findRunById(db, config.loop_run_id) : undefined;
  const loop = loopRun ? await loops.findLoopById(db, loopRun.loop_id) : undefined;
  if (loop?.budget_usd_per_day != null) {
    const spent = await ledger.loopSpentSince(db, loop.id, utcDayStart(now), pod.id);
    budgets.push({ name: `loop ${loop.slug} budget_usd_per_day`, limit_usd: loop.budget_usd_per_day, spent_usd: spent });
  }
  const monthly = (await orgQuotas(ctx, db, pod.org_id)).max_cost_usd_per_month;
  if (monthly > 0) {
    const spent = await ledger.orgSpentSince(db, pod.org_id, utcMonthStart(now), pod.id);
    budgets.push({ name: 'organization max_cost_usd_per_month', limit_usd: monthly, spent_usd: spent });
  }
  return budgets;
}

/** Why a run of `loop` may not start now (its day's budget is spent), or null. */
export async function loopBudgetSpent(db: Executor, loop: LoopRow, now: number): Promise<string | null> {
  if (loop.budget_usd_per_day === null) return null;
  const spent = await ledger.loopSpentSince(db, loop.id, utcDayStart(now));
  if (spent < loop.budget_usd_per_day) return null;
  return `skipped: budget reached: ${dollars(spent)} of ${dollars(loop.budget_usd_per_day)} (loop budget_usd_per_day)`;
}
