import { notFound } from '../../errors.ts';
import * as runnerTokens from '../../store/runner-tokens.ts';
import type { RunnerTokenRow } from '../../store/schema-runners.ts';
import { requireOrg } from '../admin/service.ts';
import { hashSecret, randomBase62 } from '../auth/keys.ts';
import type { DomainContext } from '../context.ts';

export const DEFAULT_REGISTRATION_HOURS = 24;
export const MAX_TOKEN_USES = 1000;
/** Characters of a token shown in lists to recognise it (`drvreg_` and five of its own). */
const PREFIX_LENGTH = 12;

export interface RegistrationTokenInput {
  labels?: string[];
  expires_in_hours?: number;
  /** How many runners may register with it (1–1000, default 1). */
  uses?: number;
}

/** POST /admin/orgs/{org}/runner-tokens: a registration token for `drover runner --token`. */
export async function createRegistrationToken(
  ctx: DomainContext,
  orgSlug: string,
  input: RegistrationTokenInput,
): Promise<{ token: string; record: RunnerTokenRow }> {
  const org = await requireOrg(ctx.store.db, orgSlug);
  return issueRegistrationToken(ctx, org.id, input);
}

export async function issueRegistrationToken(
  ctx: DomainContext,
  orgId: number,
  input: RegistrationTokenInput,
): Promise<{ token: string; record: RunnerTokenRow }> {
  const token = 'drvreg_' + randomBase62(40);
  const now = ctx.now();
  const uses = input.uses ?? 1;
  const record = await runnerTokens.insertRunnerToken(ctx.store.db, {
    org_id: orgId,
    token_hash: hashSecret(token),
    prefix: token.slice(0, PREFIX_LENGTH),
    labels: JSON.stringify(input.labels ?? []),
    uses,
    uses_left: uses,
    expires_at: now + (input.expires_in_hours ?? DEFAULT_REGISTRATION_HOURS) * 3_600_000,
    revoked_at: null,
    created_at: now,
  });
  return { token, record };
}

/** GET /admin/orgs/{org}/runner-tokens: every token of the org, never the token itself. */
export async function listRegistrationTokens(ctx: DomainContext, orgSlug: string): Promise<RunnerTokenRow[]> {
  const org = await requireOrg(ctx.store.db, orgSlug);
  return runnerTokens.listRunnerTokens(ctx.store.db, org.id);
}

/** DELETE /admin/orgs/{org}/runner-tokens/{id}: no runner can register with it any more (runners it registered stay). */
export async function revokeRegistrationToken(ctx: DomainContext, orgSlug: string, id: number): Promise<void> {
  const org = await requireOrg(ctx.store.db, orgSlug);
  if (!(await runnerTokens.findRunnerTokenById(ctx.store.db, org.id, id))) throw notFound('registration token');
  // Revoking twice is harmless: the first time stays recorded.
  await runnerTokens.revokeRunnerToken(ctx.store.db, org.id, id, ctx.now());
}
