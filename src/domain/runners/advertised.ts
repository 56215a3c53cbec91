import type { Isolation } from '../../protocol/runner-link.ts';

/** An agent a runner advertises (docs/runners.md "The runner record"): its slug and the program's version. */
export interface AdvertisedAgent {
  slug: string;
  version: string | null;
}

/**
 * The agents of a runner row: JSON `[{slug, version}]`, or plain slugs in rows written before
 * runners reported versions (read as version-less until the runner's next hello rewrites them).
 */
export function advertisedAgents(json: string): AdvertisedAgent[] {
  const value: unknown = JSON.parse(json);
  if (!Array.isArray(value)) return [];
  return value.flatMap((item: unknown): AdvertisedAgent[] => {
    if (typeof item === 'string') return [{ slug: item, version: null }];
    if (item && typeof item === 'object' && typeof (item as AdvertisedAgent).slug === 'string') {
      const { slug, version } = item as AdvertisedAgent;
      return [{ slug, version: typeof version === 'string' ? version : null }];
    }
    return [];
  });
}

/**
 * The walls a runner row says it enforces: null for a runner that has not reported them (it never
 * connected, or predates the report: docs/runners.md "Isolation" says why null and not all false).
 */
export function runnerIsolation(json: string | null): Isolation | null {
  if (json === null) return null;
  const value = JSON.parse(json) as Partial<Isolation>;
  return { network: !!value.network, memory: !!value.memory, pids: !!value.pids, cpu: !!value.cpu, disk: !!value.disk };
}
