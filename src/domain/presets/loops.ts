import type { Executor } from '../../store/db.ts';
import * as presets from '../../store/presets.ts';
import type { LoopRow } from '../../store/schema-loops.ts';
import type { PresetRow } from '../../store/schema.ts';
import type { LaunchRequest } from '../pods/launch.ts';
import { withPreset } from './apply.ts';

/** The presets a batch of runs' loops start from, read once, by name. */
export async function loopPresets(db: Executor, orgId: number, loops: readonly LoopRow[]): Promise<Map<string, PresetRow>> {
  const names = [...new Set(loops.flatMap((loop) => (loop.preset === null ? [] : [loop.preset])))];
  return new Map((await presets.findPresets(db, orgId, names)).map((preset) => [preset.name, preset]));
}

/**
 * A run's pod gets its loop's preset as it is now (its agent and lines, the loop's lines on top),
 * so a team's change to the preset reaches the loops that use it from their next run.
 */
export function withLoopPreset(request: LaunchRequest, loop: LoopRow, found: Map<string, PresetRow>): LaunchRequest {
  const preset = loop.preset === null ? undefined : found.get(loop.preset);
  if (!preset) return request;
  return { ...request, input: { ...request.input, agent_slug: preset.agent_slug }, layer: withPreset(preset, request.layer) };
}
