import { parseAgentfileLayerWithLines, type AgentfileLayer, type AgentfileLines } from '../pods/agentfile.ts';
import { agentfileError } from '../pods/agentfile-syntax.ts';

/**
 * What a preset's agentfile lines may hold (docs/api.md "Presets"): settings a team shares
 * (`ENV`, `CREDENTIAL`, `CONFIG`, and whatever other list directives the agentfile has, such as
 * egress allowances). What one pod or loop is about (its prompt, mode, repository and branch)
 * stays with it.
 */
const NOT_IN_PRESETS: readonly (keyof AgentfileLines)[] = ['PROMPT', 'MODE', 'REPO', 'BRANCH'];

export function parsePresetLayer(text: string): AgentfileLayer {
  const { layer, lines } = parseAgentfileLayerWithLines(text);
  for (const directive of NOT_IN_PRESETS) {
    const line = lines[directive];
    if (line !== undefined) throw agentfileError(line, `${directive} has no place in a preset: it belongs to each pod or loop`);
  }
  return layer;
}

/**
 * A pod's or loop's own layer on top of its preset's: its `CONFIG` keys and `ENV` values win, lists
 * (`CREDENTIAL`, …) are joined, and a name it gives as `ENV` or `CREDENTIAL` replaces the preset's
 * use of that name either way. The rest (prompt, mode, repository, branch) is its own.
 */
export function layerOnPreset(preset: AgentfileLayer, own: AgentfileLayer): AgentfileLayer {
  const merged: Record<string, unknown> = { ...own };
  for (const [key, base] of Object.entries(preset) as [string, unknown][]) {
    const top = (own as unknown as Record<string, unknown>)[key];
    if (Array.isArray(base) && Array.isArray(top)) merged[key] = [...new Set([...(base as unknown[]), ...(top as unknown[])])];
    else if (isPlainObject(base) && isPlainObject(top)) merged[key] = { ...base, ...top };
  }
  const result = merged as unknown as AgentfileLayer;
  result.credentials = result.credentials.filter((name) => !(name in own.env));
  result.env = Object.fromEntries(Object.entries(result.env).filter(([name]) => !own.credentials.includes(name) || name in own.env));
  return result;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
