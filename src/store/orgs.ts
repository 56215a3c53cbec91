import { runNamed } from './compiled.ts';
import type { Executor } from './db.ts';
import type { OrgRecord, OrgRow } from './schema.ts';

export async function insertOrg(
  db: Executor,
  org: { slug: string; name: string; ticket_prefix: string; created_at: number },
): Promise<OrgRecord> {
  return db.insertInto('orgs').values(org).returningAll().executeTakeFirstOrThrow();
}

export async function findOrgBySlug(db: Executor, slug: string): Promise<OrgRow | undefined> {
  return db.selectFrom('orgs').selectAll().where('slug', '=', slug).executeTakeFirst();
}

/** Every request with a pod token (compiled once, store/compiled.ts). */
export async function findOrgById(db: Executor, id: number): Promise<OrgRow | undefined> {
  const { rows } = await runNamed(db, 'org by id', (v) => db.selectFrom('orgs').selectAll().where('id', '=', v('id')), { id });
  return rows[0];
}

export async function listOrgs(db: Executor): Promise<OrgRecord[]> {
  return db.selectFrom('orgs').selectAll().orderBy('created_at', 'desc').orderBy('id', 'desc').execute();
}

export async function countOrgs(db: Executor): Promise<number> {
  const row = await db.selectFrom('orgs').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
  return Number(row.n);
}

/** The organization's `network_allow` (JSON text of canonical entries), '[]' when unknown. */
export async function findOrgNetworkAllow(db: Executor, id: number): Promise<string> {
  const row = await db.selectFrom('orgs').select('network_allow').where('id', '=', id).executeTakeFirst();
  return row?.network_allow ?? '[]';
}

export async function updateOrg(db: Executor, id: number, set: { name?: string; ticket_prefix?: string; network_allow?: string }): Promise<OrgRecord> {
  return db.updateTable('orgs').set(set).where('id', '=', id).returningAll().executeTakeFirstOrThrow();
}
