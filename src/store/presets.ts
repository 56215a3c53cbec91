import type { Executor } from './db.ts';
import type { PresetRow, PresetsTable } from './schema.ts';

export type NewPreset = Omit<PresetsTable, 'id'>;

export async function insertPreset(db: Executor, preset: NewPreset): Promise<PresetRow> {
  return db.insertInto('presets').values(preset).returningAll().executeTakeFirstOrThrow();
}

export async function listPresets(db: Executor, orgId: number): Promise<PresetRow[]> {
  return db.selectFrom('presets').selectAll().where('org_id', '=', orgId).orderBy('name').execute();
}

export async function findPreset(db: Executor, orgId: number, name: string): Promise<PresetRow | undefined> {
  return db.selectFrom('presets').selectAll().where('org_id', '=', orgId).where('name', '=', name).executeTakeFirst();
}

export async function findPresets(db: Executor, orgId: number, names: readonly string[]): Promise<PresetRow[]> {
  if (names.length === 0) return [];
  return db.selectFrom('presets').selectAll().where('org_id', '=', orgId).where('name', 'in', names).execute();
}

export async function updatePreset(
  db: Executor,
  orgId: number,
  name: string,
  set: Partial<Pick<PresetsTable, 'description' | 'agent_slug' | 'agentfile_layer' | 'updated_at'>>,
): Promise<PresetRow | undefined> {
  return db.updateTable('presets').set(set).where('org_id', '=', orgId).where('name', '=', name).returningAll().executeTakeFirst();
}

export async function deletePreset(db: Executor, orgId: number, name: string): Promise<boolean> {
  const result = await db.deleteFrom('presets').where('org_id', '=', orgId).where('name', '=', name).executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

/** Slugs of the organization's loops that start from the preset (it may not be deleted while any do). */
export async function loopsUsingPreset(db: Executor, orgId: number, name: string, limit = 10): Promise<string[]> {
  const rows = await db.selectFrom('loops').select('slug').where('org_id', '=', orgId).where('preset', '=', name).orderBy('slug').limit(limit).execute();
  return rows.map((row) => row.slug);
}
