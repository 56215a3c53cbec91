import { AppError } from '../../errors.ts';
import type { Executor } from '../../store/db.ts';
import * as quotas from '../../store/org-quotas.ts';
import type { QuotaOverrides } from '../../store/org-quotas.ts';
import { requireOrg } from '../admin/service.ts';
import type { DomainContext } from '../context.ts';
import { DEFAULT_QUOTAS, QUOTA_NAMES, type QuotaName, type Quotas } from './model.ts';

const NO_OVERRIDES: QuotaOverrides = { max_active_pods: null, max_queued_pods: null, max_loops: null, pod_output_bytes_per_sec: null, max_cost_usd_per_month: null };

/** The server-wide defaults this process runs with. */
export const defaultQuotas = (ctx: DomainContext): Quotas => ctx.quotas ?? DEFAULT_QUOTAS;

function effective(ctx: DomainContext, overrides: QuotaOverrides): Quotas {
  const defaults = defaultQuotas(ctx);
  return Object.fromEntries(QUOTA_NAMES.map((name) => [name, overrides[name] ?? defaults[name]])) as Quotas;
}

/** The quotas that apply to an organization now (its overrides, else the server's defaults). */
export async function orgQuotas(ctx: DomainContext, db: Executor, orgId: number): Promise<Quotas> {
  return effective(ctx, (await quotas.findOrgQuotas(db, orgId)) ?? NO_OVERRIDES);
}

/** 429 QUOTA_EXCEEDED naming the quota, its limit and what is in use. */
export function quotaExceeded(name: QuotaName, limit: number, used: string): AppError {
  const message = `quota ${name} exceeded: ${used}, and this organization's limit is ${limit}`;
  return new AppError('QUOTA_EXCEEDED', message, { details: [{ field: name, message }] });
}

export interface QuotaView {
  overrides: QuotaOverrides;
  defaults: Quotas;
  effective: Quotas;
}

async function view(ctx: DomainContext, orgId: number): Promise<QuotaView> {
  const overrides = (await quotas.findOrgQuotas(ctx.store.db, orgId)) ?? NO_OVERRIDES;
  return { overrides, defaults: { ...defaultQuotas(ctx) }, effective: effective(ctx, overrides) };
}

/** GET /admin/orgs/{org}/quotas. */
export async function getQuotas(ctx: DomainContext, orgSlug: string): Promise<QuotaView> {
  return view(ctx, (await requireOrg(ctx.store.db, orgSlug)).id);
}

/** PATCH /admin/orgs/{org}/quotas: the given quotas change; null returns one to the server default. */
export async function updateQuotas(ctx: DomainContext, orgSlug: string, input: Partial<QuotaOverrides>): Promise<QuotaView> {
  const org = await requireOrg(ctx.store.db, orgSlug);
  const set = Object.fromEntries(QUOTA_NAMES.filter((name) => input[name] !== undefined).map((name) => [name, input[name]]));
  if (Object.keys(set).length > 0) await quotas.upsertOrgQuotas(ctx.store.db, org.id, set, ctx.now());
  return view(ctx, org.id);
}
