import { isBuiltinAgentSlug } from '../../agents/builtin.ts';
import type { PodSpec } from '../../protocol/runner-link.ts';
import { PodNetwork, type NetworkMode, type RunnerNetworkOptions } from './index.ts';

/** How often at most a pod's refusal count goes to the server while it runs (the final count goes with its outcome). */
const REPORT_EVERY_MS = 1000;

export interface PodNetworkHooks {
  /** A line for the pod's output (the `[drover] ` prefix is added by the output buffer). */
  note(text: string): void;
  /** The pod's refusal count so far. */
  refused(count: number): void;
}

/**
 * Opens the network walls of one pod: null when the runner has none (no sandbox). The refusal
 * line goes to the pod's output once per host:port; the count is reported at most once a second.
 */
export async function openPodNetwork(runner: RunnerNetworkOptions | null, spec: PodSpec, hooks: PodNetworkHooks): Promise<PodNetwork | null> {
  if (!runner) return null;
  let timer: NodeJS.Timeout | null = null;
  let network: PodNetwork | null = null;
  const report = () => {
    timer = null;
    if (network) hooks.refused(network.refused);
  };
  network = await PodNetwork.open(
    runner,
    {
      key: spec.key,
      mode: (spec.network?.mode ?? 'restricted') as NetworkMode,
      allow: spec.network?.allow ?? [],
      agentSlug: spec.agent.slug,
      builtin: spec.agent.custom === null && isBuiltinAgentSlug(spec.agent.slug),
      apiUrl: spec.env.api_url,
    },
    (host, port, first) => {
      if (first) hooks.note(`network: refused ${host.includes(':') ? `[${host}]` : host}:${port} (not allowed)`);
      // A count sent after the pod ended is harmless: its outcome carries the final one.
      if (!timer) timer = setTimeout(report, REPORT_EVERY_MS).unref();
    },
  );
  return network;
}
