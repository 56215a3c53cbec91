import { isBuiltinAgentSlug, permissionModeProblem } from '../../agents/builtin.ts';
import { AppError, invalid, notFound } from '../../errors.ts';
import * as customAgents from '../../store/custom-agents.ts';
import { isUniqueViolation, type Executor } from '../../store/db.ts';
import * as presets from '../../store/presets.ts';
import type { PresetRow } from '../../store/schema.ts';
import { requireOrg } from '../admin/service.ts';
import type { DomainContext } from '../context.ts';
import { agentfileError } from '../pods/agentfile-syntax.ts';
import { parsePresetLayer } from './layers.ts';

export interface PresetInput {
  name: string;
  description?: string | null;
  agent_slug: string;
  agentfile_layer?: string | null;
}

/** The agent exists for the org, and the lines parse, hold only shared settings and suit the agent. */
async function checkPreset(db: Executor, orgId: number, agentSlug: string, text: string | null): Promise<void> {
  if (!isBuiltinAgentSlug(agentSlug) && !(await customAgents.findCustomAgent(db, orgId, agentSlug))) {
    throw invalid('/agent_slug', `"${agentSlug}" is neither a built-in agent nor a custom agent of this organization`);
  }
  if (text === null) return;
  const layer = parsePresetLayer(text);
  const mode = layer.config.permission_mode;
  const problem = mode === undefined ? null : permissionModeProblem(agentSlug, mode);
  if (problem !== null) throw agentfileError(null, `CONFIG ${problem}`);
}

export async function createPreset(ctx: DomainContext, orgSlug: string, input: PresetInput): Promise<PresetRow> {
  const org = await requireOrg(ctx.store.db, orgSlug);
  const layer = input.agentfile_layer || null;
  await checkPreset(ctx.store.db, org.id, input.agent_slug, layer);
  const now = ctx.now();
  try {
    return await presets.insertPreset(ctx.store.db, {
      org_id: org.id,
      name: input.name,
      description: input.description ?? null,
      agent_slug: input.agent_slug,
      agentfile_layer: layer,
      created_at: now,
      updated_at: now,
    });
  } catch (error) {
    if (isUniqueViolation(error)) throw new AppError('ALREADY_EXISTS', `a preset named "${input.name}" already exists`);
    throw error;
  }
}

export async function updatePreset(ctx: DomainContext, orgSlug: string, name: string, input: Partial<Omit<PresetInput, 'name'>>): Promise<PresetRow> {
  const org = await requireOrg(ctx.store.db, orgSlug);
  const current = await presets.findPreset(ctx.store.db, org.id, name);
  if (!current) throw notFound('preset');
  const agentSlug = input.agent_slug ?? current.agent_slug;
  const layer = input.agentfile_layer === undefined ? current.agentfile_layer : input.agentfile_layer || null;
  await checkPreset(ctx.store.db, org.id, agentSlug, layer);
  const updated = await presets.updatePreset(ctx.store.db, org.id, name, {
    agent_slug: agentSlug,
    agentfile_layer: layer,
    ...(input.description !== undefined ? { description: input.description } : {}),
    updated_at: ctx.now(),
  });
  if (!updated) throw notFound('preset');
  return updated;
}

/** Loops start every run from their preset: it cannot go while one names it (409 naming them). */
export async function deletePreset(ctx: DomainContext, orgSlug: string, name: string): Promise<void> {
  const org = await requireOrg(ctx.store.db, orgSlug);
  await ctx.store.transaction(async (trx) => {
    const users = await presets.loopsUsingPreset(trx, org.id, name);
    if (users.length > 0) {
      throw new AppError('RESOURCE_IN_USE', `preset "${name}" is used by the loops ${users.join(', ')}: change or delete them first`);
    }
    if (!(await presets.deletePreset(trx, org.id, name))) throw notFound('preset');
  });
}

export async function getPreset(ctx: DomainContext, orgSlug: string, name: string): Promise<PresetRow> {
  const org = await requireOrg(ctx.store.db, orgSlug);
  const preset = await presets.findPreset(ctx.store.db, org.id, name);
  if (!preset) throw notFound('preset');
  return preset;
}

export const listPresets = (ctx: DomainContext, orgId: number): Promise<PresetRow[]> => presets.listPresets(ctx.store.db, orgId);
export async function listPresetsOf(ctx: DomainContext, orgSlug: string): Promise<PresetRow[]> {
  return presets.listPresets(ctx.store.db, (await requireOrg(ctx.store.db, orgSlug)).id);
}
