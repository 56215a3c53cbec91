import { isBuiltinAgentSlug } from '../../agents/builtin.ts';
import { invalid } from '../../errors.ts';
import type { Executor } from '../../store/db.ts';
import * as presets from '../../store/presets.ts';
import type { PresetRow } from '../../store/schema.ts';
import type { AgentfileLayer } from '../pods/agentfile.ts';
import { layerOnPreset, parsePresetLayer } from './layers.ts';

export async function requirePreset(db: Executor, orgId: number, name: string): Promise<PresetRow> {
  const preset = await presets.findPreset(db, orgId, name);
  if (!preset) throw invalid('/preset', `"${name}" is not a preset of this organization (GET /presets lists them)`);
  return preset;
}

/** The preset's lines under `own`. */
export function withPreset(preset: PresetRow, own: AgentfileLayer): AgentfileLayer {
  return preset.agentfile_layer === null ? own : layerOnPreset(parsePresetLayer(preset.agentfile_layer), own);
}

/**
 * A pod names a preset instead of an agent (docs/api.md "Presets"): the preset gives the agent
 * (naming both is 400); its lines go under the pod's own.
 */
export async function podPreset(db: Executor, orgId: number, input: { agent_slug?: string; preset?: string }): Promise<{ agentSlug: string; preset: PresetRow | null }> {
  if (input.preset === undefined) {
    if (input.agent_slug === undefined) throw invalid('/agent_slug', 'give agent_slug or preset');
    return { agentSlug: input.agent_slug, preset: null };
  }
  if (input.agent_slug !== undefined) throw invalid('/preset', 'may not be given together with agent_slug: the preset names the agent');
  const preset = await requirePreset(db, orgId, input.preset);
  return { agentSlug: preset.agent_slug, preset };
}

interface LoopAgentFields {
  agent_slug: string | null;
  custom_agent_slug: string | null;
  preset: string | null;
}

/**
 * A loop that names a preset takes its agent from it (stored on the loop, so the loop shows it);
 * its runs layer the preset's lines, as they are at each run, under the loop's own.
 */
export async function applyLoopPreset(
  db: Executor,
  orgId: number,
  fields: LoopAgentFields,
  input: { preset?: string | null; agent_slug?: string | null; custom_agent_slug?: string | null },
): Promise<void> {
  if (input.preset === undefined || input.preset === null) {
    // Choosing an agent of its own leaves the preset behind.
    if (input.preset === null || input.agent_slug != null || input.custom_agent_slug != null) fields.preset = null;
    return;
  }
  if (input.agent_slug != null || input.custom_agent_slug != null) {
    throw invalid('/preset', 'may not be given together with agent_slug or custom_agent_slug: the preset names the agent');
  }
  const preset = await requirePreset(db, orgId, input.preset);
  const builtin = isBuiltinAgentSlug(preset.agent_slug);
  fields.agent_slug = builtin ? preset.agent_slug : null;
  fields.custom_agent_slug = builtin ? null : preset.agent_slug;
  fields.preset = preset.name;
}
