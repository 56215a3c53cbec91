import type { Executor } from './db.ts';
import type { OrgRow } from './schema.ts';

export async function insertOrg(
  db: Executor,
  org: { slug: string; name: string; ticket_prefix: string; created_at: number },
): Promise<OrgRow> {
  return db.insertInto('orgs').values(org).returningAll().executeTakeFirstOrThrow();
}

export async function findOrgBySlug(db: Executor, slug: string): Promise<OrgRow | undefined> {
  return db.selectFrom('orgs').selectAll().where('slug', '=', slug).executeTakeFirst();
}

export async function findOrgById(db: Executor, id: number): Promise<OrgRow | undefined> {
  return db.selectFrom('orgs').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function listOrgs(db: Executor): Promise<OrgRow[]> {
  return db.selectFrom('orgs').selectAll().orderBy('created_at', 'desc').orderBy('id', 'desc').execute();
}

export async function countOrgs(db: Executor): Promise<number> {
  const row = await db.selectFrom('orgs').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
  return Number(row.n);
}

export async function updateOrg(db: Executor, id: number, set: { name?: string; ticket_prefix?: string }): Promise<OrgRow> {
  return db.updateTable('orgs').set(set).where('id', '=', id).returningAll().executeTakeFirstOrThrow();
}
