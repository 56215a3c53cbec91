/**
 * A pod's network walls as the server decides them (docs/runners.md "Network"): `CONFIG network`
 * and its `ALLOW` entries, and what the runner is told: the organization's `network_allow` plus
 * the pod's own entries. A spawned pod is no wider than its parent: a mode no more open, and only
 * entries its parent could reach (the organization's list, the parent's ALLOW, its agent's model hosts).
 */
import { isBuiltinAgentSlug } from '../../agents/builtin.ts';
import { modelHosts } from '../../agents/model-hosts.ts';
import { coveredBy, parseHostPattern, type HostPattern } from '../../net/host-pattern.ts';
import type { PodRow } from '../../store/schema-runners.ts';
import type { AgentfileLayer, AgentfileLines } from './agentfile.ts';
import { agentfileError } from './agentfile-syntax.ts';
import type { PodConfig } from './model.ts';

export type NetworkMode = NonNullable<PodConfig['network']>;
const OPENNESS: Record<NetworkMode, number> = { none: 0, restricted: 1, open: 2 };

/** The organization's `network_allow` as stored (JSON text of canonical entries). */
export function parseNetworkAllow(text: string): string[] {
  try {
    const list = JSON.parse(text) as unknown;
    return Array.isArray(list) ? list.filter((e): e is string => typeof e === 'string') : [];
  } catch {
    return [];
  }
}

const patterns = (entries: readonly string[]): HostPattern[] => entries.map((e) => parseHostPattern(e)).filter((p): p is HostPattern => typeof p !== 'string');

/** `network` and `allow` of a new pod's config; 400 naming the line when a spawned pod asks for more than its parent has. */
export async function podNetwork(
  orgAllow: () => Promise<string[]>,
  layer: AgentfileLayer,
  lines: AgentfileLines,
  parent: PodRow | null,
): Promise<Pick<PodConfig, 'network' | 'allow'>> {
  if (!parent) return { network: layer.config.network ?? 'restricted', allow: layer.allow };
  const parentConfig = JSON.parse(parent.config) as PodConfig;
  const parentMode = parentConfig.network ?? 'restricted';
  const mode = layer.config.network ?? parentMode;
  if (OPENNESS[mode] > OPENNESS[parentMode]) {
    throw agentfileError(lines['CONFIG network'] ?? null, `CONFIG network = ${mode}: a spawned pod's network may be no more open than its parent's (${parent.key}: ${parentMode})`);
  }
  if (parentMode !== 'open') {
    const reach = patterns([...(await orgAllow()), ...(parentConfig.allow ?? []), ...(isBuiltinAgentSlug(parent.agent_slug) ? modelHosts(parent.agent_slug) : [])]);
    const wider = layer.allow.filter((entry) => !coveredBy(parseHostPattern(entry) as HostPattern, reach));
    if (wider.length > 0) throw agentfileError(null, `ALLOW ${wider.join(', ')}: a spawned pod may allow only hosts its parent pod (${parent.key}) may reach`);
  }
  return { network: mode, allow: layer.allow };
}

/** What the runner is told (the pod spec's `network`). */
export function networkForRunner(orgAllow: readonly string[], config: PodConfig): { mode: NetworkMode; allow: string[] } {
  return { mode: config.network ?? 'restricted', allow: [...new Set([...orgAllow, ...(config.allow ?? [])])] };
}
