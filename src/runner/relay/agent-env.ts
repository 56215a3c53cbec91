/**
 * What a pod's agent is given so that its model calls go through the relay: each model credential
 * becomes its placeholder, each of its providers' base-URL variables points at the relay, and CLIs
 * that read no such variable get their own configuration (Codex: a provider block, as `-c` options).
 */
import { modelProvider, type ModelProvider } from '../../agents/model-providers.ts';
import type { PodSpec } from '../../protocol/runner-link.ts';
import type { ModelRelay } from './server.ts';

/**
 * Where a pod reaches the relay. The only place that says so: the relay listens on the runner's
 * loopback, which pods reach today; with a network namespace per pod this becomes the endpoint the
 * pod's network exposes at http://127.0.0.1:<port> inside it.
 */
export function relayUrlForPod(relay: ModelRelay, _podKey: string): string {
  return `http://127.0.0.1:${relay.port}`;
}

/** The name of Codex's provider block for the relay. */
const CODEX_PROVIDER = 'drover-relay';

/** Command-line arguments a built-in agent needs to use the relay (placed with its MCP arguments). */
function agentArgs(slug: string, base: string, providers: ModelProvider[]): string[] {
  const openai = providers.find((p) => p.id === 'openai');
  if (slug !== 'codex' || !openai) return [];
  // Codex ignores OPENAI_BASE_URL: it takes a provider of its own (`-c` values are TOML).
  const key = `model_providers.${CODEX_PROVIDER}`;
  return [
    '-c', `model_provider=${JSON.stringify(CODEX_PROVIDER)}`,
    '-c', `${key}.name="Drover relay"`,
    '-c', `${key}.base_url=${JSON.stringify(`${base}/openai`)}`,
    '-c', `${key}.env_key=${JSON.stringify(openai.credentials[0])}`,
    '-c', `${key}.wire_api="responses"`,
    '-c', `${key}.supports_websockets=false`,
  ]; // prettier-ignore
}

/**
 * Registers the pod with the relay (once: autopilot iterations keep their placeholders) and rewrites
 * the agent's environment `env` in place; answers the agent's extra arguments. `env` holds the
 * pod's credentials with their real values on the way in, placeholders on the way out.
 */
export function relayAgent(relay: ModelRelay, spec: PodSpec, env: Record<string, string>): string[] {
  let pod = relay.pods.get(spec.key);
  if (!pod) {
    const credentials: Record<string, string> = {};
    for (const name of spec.credentials) if (Object.hasOwn(env, name)) credentials[name] = env[name];
    pod = relay.pods.attach({ key: spec.key, credentials, env: spec.agent_env ?? {}, budgets: spec.budgets ?? [] }).pod;
  }
  const providers = new Map<string, ModelProvider>();
  for (const [placeholder, entry] of pod.placeholders) {
    env[entry.credential] = placeholder;
    const provider = modelProvider(entry.provider);
    if (provider) providers.set(provider.id, provider);
  }
  const base = relayUrlForPod(relay, spec.key);
  for (const provider of providers.values()) env[provider.baseUrlVariable] = `${base}/${provider.id}`;
  return spec.agent.custom ? [] : agentArgs(spec.agent.slug, base, [...providers.values()]);
}
