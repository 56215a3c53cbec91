import type { Executor } from './db.ts';
import type { CustomAgentRow, CustomAgentsTable } from './schema-runners.ts';

export async function insertCustomAgent(db: Executor, agent: Omit<CustomAgentsTable, 'id'>): Promise<CustomAgentRow> {
  return db.insertInto('custom_agents').values(agent).returningAll().executeTakeFirstOrThrow();
}

export async function findCustomAgent(db: Executor, orgId: number, slug: string): Promise<CustomAgentRow | undefined> {
  return db.selectFrom('custom_agents').selectAll().where('org_id', '=', orgId).where('slug', '=', slug).executeTakeFirst();
}

export async function listCustomAgents(db: Executor, orgId: number): Promise<CustomAgentRow[]> {
  return db.selectFrom('custom_agents').selectAll().where('org_id', '=', orgId).orderBy('created_at', 'desc').execute();
}
