/**
 * A loop's `agentfile_layer` (docs/decisions.md "Loops and runs"): the agentfile every run's pod gets, so runs can
 * name `CREDENTIAL`s, `ENV`s and `CONFIG` keys. Same grammar as a pod's; the directives the loop has
 * its own field for are refused, naming that field, so each setting has one place: the prompt
 * (`prompt_template`), the mode (`execution_mode`), the repository and branch (`repository_id`,
 * `branch_name`) and the autopilot limits (`autopilot_config`).
 */
import { permissionModeProblem } from '../../agents/builtin.ts';
import * as channels from '../../store/channels.ts';
import type { Executor } from '../../store/db.ts';
import { parseAgentfileLayerWithLines, type AgentfileLayer, type AgentfileLines } from '../pods/agentfile.ts';
import { agentfileError } from '../pods/agentfile-syntax.ts';

/** Directives a loop's layer may not hold, and the loop field that gives each. */
const LOOP_FIELDS: readonly [keyof AgentfileLines, string][] = [
  ['PROMPT', 'prompt_template (the loop renders each run\'s prompt from it)'],
  ['MODE', 'execution_mode'],
  ['REPO', 'repository_id'],
  ['BRANCH', 'branch_name'],
  ['CONFIG max_iterations', 'autopilot_config.max_iterations'],
  ['CONFIG iteration_timeout_sec', 'autopilot_config.iteration_timeout_sec'],
];

/** The stored layer of a loop, parsed (it was checked when the loop was written). */
export function loopLayer(text: string | null): { layer: AgentfileLayer; lines: AgentfileLines } | null {
  return text === null || text === '' ? null : parseAgentfileLayerWithLines(text);
}

/**
 * Checks a loop's layer: the grammar, no directive the loop has a field for, a permission_mode its
 * agent takes, a channel of the organization. Every problem is a 400 naming `agentfile_layer` and
 * the line.
 */
export async function checkLoopLayer(db: Executor, orgId: number, text: string, agentSlug: string): Promise<void> {
  const { layer, lines } = parseAgentfileLayerWithLines(text);
  for (const [directive, field] of LOOP_FIELDS) {
    const line = lines[directive];
    if (line !== undefined) throw agentfileError(line, `${directive} has no place in a loop's agentfile_layer: use the loop's ${field}`);
  }
  const mode = layer.config.permission_mode;
  const modeProblem = mode === undefined ? null : permissionModeProblem(agentSlug, mode);
  if (modeProblem !== null) throw agentfileError(lines['CONFIG permission_mode'] ?? null, `CONFIG ${modeProblem}`);
  const channelId = layer.config.channel_id;
  if (channelId !== undefined && !(await channels.findChannel(db, orgId, channelId))) {
    throw agentfileError(lines['CONFIG channel_id'] ?? null, `CONFIG channel_id ${channelId} is not a channel of this organization`);
  }
}
