import { AppError, invalid, notFound } from '../../errors.ts';
import { isUniqueViolation, type Executor } from '../../store/db.ts';
import * as apiKeys from '../../store/api-keys.ts';
import * as orgs from '../../store/orgs.ts';
import { unassignUser } from '../../store/references.ts';
import * as users from '../../store/users.ts';
import type { ApiKeyRow, OrgRecord, OrgRow, UserRow } from '../../store/schema.ts';
import { MAX_ALLOW_ENTRIES, formatHostPattern, parseHostList } from '../../net/host-pattern.ts';
import { generateApiKey, hashSecret, keyPrefix } from '../auth/keys.ts';
import { SCOPES, type Scope } from '../../protocol/scopes.ts';
import type { DomainContext } from '../context.ts';
import { defaultTicketPrefix } from '../tickets/model.ts';
import { recordTicketsUpdated } from '../tickets/service.ts';

export async function createOrg(
  ctx: DomainContext,
  input: { slug: string; name: string; ticket_prefix?: string },
): Promise<OrgRecord> {
  try {
    return await orgs.insertOrg(ctx.store.db, {
      slug: input.slug,
      name: input.name,
      ticket_prefix: input.ticket_prefix ?? defaultTicketPrefix(input.slug),
      created_at: ctx.now(),
    });
  } catch (error) {
    if (isUniqueViolation(error)) throw new AppError('ALREADY_EXISTS', `organization "${input.slug}" already exists`);
    throw error;
  }
}

export const listOrgs = (ctx: DomainContext) => orgs.listOrgs(ctx.store.db);

/**
 * PATCH /admin/orgs/{org}: a new ticket prefix applies to tickets created from now on; a new
 * `network_allow` (docs/runners.md "Network") to pods started from now on.
 */
export async function updateOrg(ctx: DomainContext, slug: string, input: { name?: string; ticket_prefix?: string; network_allow?: string[] }): Promise<OrgRecord> {
  const { network_allow: networkAllow, ...rest } = input;
  let allow: string | undefined;
  if (networkAllow !== undefined) {
    if (networkAllow.length > MAX_ALLOW_ENTRIES) throw invalid('/network_allow', `must have at most ${MAX_ALLOW_ENTRIES} entries`);
    const parsed = parseHostList(networkAllow);
    if ('problem' in parsed) throw invalid(`/network_allow/${parsed.index}`, `${parsed.problem} (expected host[:port] or *.domain[:port])`);
    allow = JSON.stringify(parsed.patterns.map(formatHostPattern));
  }
  const org = await requireOrg(ctx.store.db, slug);
  const updated = await orgs.updateOrg(ctx.store.db, org.id, { ...rest, ...(allow === undefined ? {} : { network_allow: allow }) });
  // Other replicas keep a verified key's organization for up to KEY_CACHE_MS (1 s).
  ctx.orgChanged?.(org.id);
  return updated;
}

export async function requireOrg(db: Executor, slug: string): Promise<OrgRow> {
  const org = await orgs.findOrgBySlug(db, slug);
  if (!org) throw notFound('organization');
  return org;
}

export async function createApiKey(
  ctx: DomainContext,
  orgSlug: string,
  input: { name: string; scopes: Scope[]; expires_at?: string; user_id?: number },
): Promise<{ apiKey: ApiKeyRow; key: string }> {
  const org = await requireOrg(ctx.store.db, orgSlug);
  if (input.user_id !== undefined && !(await users.userExists(ctx.store.db, org.id, input.user_id))) {
    throw invalid('/user_id', 'must be the id of a user of this organization');
  }
  return issueApiKey(ctx, ctx.store.db, org.id, input);
}

export async function issueApiKey(
  ctx: DomainContext,
  db: Executor,
  orgId: number,
  input: { name: string; scopes: readonly Scope[]; expires_at?: string; user_id?: number },
): Promise<{ apiKey: ApiKeyRow; key: string }> {
  let expiresAt: number | null = null;
  if (input.expires_at !== undefined) {
    expiresAt = Date.parse(input.expires_at);
    if (Number.isNaN(expiresAt)) throw invalid('/expires_at', 'must be an ISO 8601 date-time');
    if (expiresAt <= ctx.now()) throw invalid('/expires_at', 'must be in the future');
  }
  const key = generateApiKey();
  const apiKey = await apiKeys.insertApiKey(db, {
    org_id: orgId,
    name: input.name,
    prefix: keyPrefix(key),
    key_hash: hashSecret(key),
    scopes: JSON.stringify([...new Set(input.scopes)].sort((a, b) => SCOPES.indexOf(a) - SCOPES.indexOf(b))),
    expires_at: expiresAt,
    user_id: input.user_id ?? null,
    created_at: ctx.now(),
  });
  return { apiKey, key };
}

export async function listApiKeys(ctx: DomainContext, orgSlug: string): Promise<ApiKeyRow[]> {
  const org = await requireOrg(ctx.store.db, orgSlug);
  return apiKeys.listApiKeys(ctx.store.db, org.id);
}

export async function revokeApiKey(ctx: DomainContext, orgSlug: string, id: number): Promise<void> {
  const org = await requireOrg(ctx.store.db, orgSlug);
  const key = await apiKeys.findApiKey(ctx.store.db, org.id, id);
  if (!key) throw notFound('API key');
  // Revoking twice is harmless: the key stays revoked at the first time.
  await apiKeys.revokeApiKey(ctx.store.db, org.id, id, ctx.now());
  ctx.apiKeyRevoked?.(id);
}

export async function createUser(ctx: DomainContext, orgSlug: string, input: { name: string; email: string }): Promise<UserRow> {
  const org = await requireOrg(ctx.store.db, orgSlug);
  try {
    return await users.insertUser(ctx.store.db, {
      org_id: org.id,
      name: input.name,
      email: input.email.toLowerCase(),
      created_at: ctx.now(),
    });
  } catch (error) {
    if (isUniqueViolation(error)) throw new AppError('ALREADY_EXISTS', `a user with email ${input.email} already exists`);
    throw error;
  }
}

export async function updateUser(ctx: DomainContext, orgSlug: string, id: number, input: { name?: string; email?: string }): Promise<UserRow> {
  const org = await requireOrg(ctx.store.db, orgSlug);
  try {
    const user = await users.updateUser(ctx.store.db, org.id, id, { ...input, ...(input.email !== undefined ? { email: input.email.toLowerCase() } : {}) });
    if (!user) throw notFound('user');
    // Keys of the user carry their name: this replica reads them again (others within KEY_CACHE_MS).
    ctx.orgChanged?.(org.id);
    return user;
  } catch (error) {
    if (isUniqueViolation(error)) throw new AppError('ALREADY_EXISTS', `a user with email ${input.email} already exists`);
    throw error;
  }
}

/** DELETE /admin/orgs/{org}/users/{id}: the user's tickets become unassigned; returns how many. */
export async function deleteUser(ctx: DomainContext, orgSlug: string, id: number): Promise<{ unassigned: number }> {
  const org = await requireOrg(ctx.store.db, orgSlug);
  return ctx.store.transaction(async (trx) => {
    if (!(await users.findUser(trx, org.id, id))) throw notFound('user');
    const unassigned = await unassignUser(trx, org.id, id, ctx.now());
    // A person who is gone no longer acts: their keys stop working with them (docs/api.md "Actors and activity").
    const revoked = await apiKeys.revokeUserApiKeys(trx, org.id, id, ctx.now());
    await users.deleteUser(trx, org.id, id);
    await recordTicketsUpdated(ctx, trx, org.id, unassigned);
    return { unassigned: unassigned.length, revoked };
  }).then(({ unassigned, revoked }) => {
    for (const keyId of revoked) ctx.apiKeyRevoked?.(keyId);
    return { unassigned };
  });
}

export async function listUsers(ctx: DomainContext, orgSlug: string): Promise<UserRow[]> {
  const org = await requireOrg(ctx.store.db, orgSlug);
  return users.listUsers(ctx.store.db, org.id);
}
