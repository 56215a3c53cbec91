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

export async function updateCustomAgent(
  db: Executor,
  orgId: number,
  slug: string,
  set: Partial<Pick<CustomAgentsTable, 'name' | 'command' | 'args' | 'prompt_position'>>,
): Promise<CustomAgentRow | undefined> {
  return db.updateTable('custom_agents').set(set).where('org_id', '=', orgId).where('slug', '=', slug).returningAll().executeTakeFirst();
}

export async function deleteCustomAgent(db: Executor, orgId: number, slug: string): Promise<void> {
  await db.deleteFrom('custom_agents').where('org_id', '=', orgId).where('slug', '=', slug).execute();
}
