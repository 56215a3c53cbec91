/** An agent a runner advertises (docs/runners.md "Runner record"): its slug and the program's version. */
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
