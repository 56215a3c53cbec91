/**
 * What a pod's agent is given so that its model calls go through the relay: each model credential
 * becomes its placeholder, each of its providers' base-URL variables points at the relay, and CLIs
 * that need more get their own configuration (src/agents/model-config.ts: Codex's provider block
 * as `-c` options, Gemini CLI's settings and OpenCode's providers in the pod's HOME, written
 * without trusting anything there: ../pod-tree.ts).
 */
import { relayArgs, relayHomeConfig, relayProviderUrl } from '../../agents/model-config.ts';
import { modelProvider, type ModelProvider } from '../../agents/model-providers.ts';
import type { PodSpec } from '../../protocol/runner-link.ts';
import type { PodNetwork } from '../network/index.ts';
import { updatePodJsonFiles } from '../pod-tree.ts';
import type { ModelRelay } from './server.ts';

/**
 * Where a pod reaches the relay; the only place that says so. A pod behind network walls has a
 * loopback of its own: the relay is exposed in it (docs/runners.md
 * "Network") at http://127.0.0.1:<port>, each connection handed to the relay's HTTP server. A pod
 * without walls (`--sandbox none`) shares the runner's loopback, where the relay listens.
 */
export async function relayUrlForPod(relay: ModelRelay, network: PodNetwork | null): Promise<string> {
  if (!network) return `http://127.0.0.1:${relay.port}`;
  const port = await network.expose((socket) => relay.accept(socket), { name: 'relay' });
  return `http://127.0.0.1:${port}`;
}

/**
 * Registers the pod with the relay (once: autopilot iterations keep their placeholders), rewrites
 * the agent's environment `env` in place and the agent's config files in `home`; answers the
 * agent's extra arguments, and why a config file could not be written (null when all were).
 * `env` holds the pod's credentials with their real values on the way in, placeholders on the way out.
 */
export async function relayAgent(
  relay: ModelRelay,
  spec: PodSpec,
  env: Record<string, string>,
  home: string,
  network: PodNetwork | null,
): Promise<{ args: string[]; skipped: string | null }> {
  let pod = relay.pods.get(spec.key);
  if (!pod) {
    const credentials: Record<string, string> = {};
    for (const name of spec.credentials) if (Object.hasOwn(env, name)) credentials[name] = env[name];
    pod = relay.pods.attach({ key: spec.key, credentials, env: spec.agent_env ?? {}, budgets: spec.budgets ?? [] }).pod;
  }
  const providers = new Map<string, ModelProvider>();
  const credentials: string[] = [];
  for (const [placeholder, entry] of pod.placeholders) {
    env[entry.credential] = placeholder;
    credentials.push(entry.credential);
    const provider = modelProvider(entry.provider);
    if (provider) providers.set(provider.id, provider);
  }
  if (providers.size === 0) return { args: [], skipped: null };
  const base = await relayUrlForPod(relay, network);
  for (const provider of providers.values()) env[provider.baseUrlVariable] = relayProviderUrl(base, provider);
  if (spec.agent.custom) return { args: [], skipped: null };
  const slug = spec.agent.slug;
  const refused = updatePodJsonFiles(home, relayHomeConfig(slug, base, [...providers.values()], credentials));
  const skipped = refused ? `${refused} in the pod's HOME, so ${slug} was not configured for the model relay` : null;
  return { args: relayArgs(slug, base, [...providers.values()]), skipped };
}
