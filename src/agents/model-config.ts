/**
 * Each built-in agent's own configuration for the runner's model relay (docs/agents.md "Each CLI's
 * own configuration"), where the provider's base-URL variable is not enough. Pure: what to add to
 * the command line and how to change the agent's config files in the pod's HOME; the runner
 * writes them (src/runner/relay/agent-env.ts, through src/runner/pod-tree.ts).
 *
 * - Codex ignores `OPENAI_BASE_URL`: a `drover-relay` provider block as `-c` options (they win over
 *   its `config.toml`), its key read from the credential's variable (the placeholder).
 * - Gemini CLI reads `GOOGLE_GEMINI_BASE_URL`, but exits (41, "Invalid auth method selected") unless
 *   its settings select the API-key method: `security.auth.selectedType = "gemini-api-key"` in
 *   `~/.gemini/settings.json`.
 * - OpenCode reads no base-URL variable: in `~/.config/opencode/opencode.json`, its built-in
 *   provider of each model credential the pod names (`anthropic`, `openai`, `google`) and every
 *   provider of the operator's template whose `options.apiKey` is `{env:<that credential>}` get
 *   `options.baseURL` at the relay (and their key from the credential's variable). The AI SDK's
 *   base URLs carry the API version (`/v1`, `/v1beta`): the relay's path for the provider plus that.
 */
import type { ModelProvider, ModelProviderId } from './model-providers.ts';
import type { HomeConfigChange } from './mcp.ts';

/** The name of Codex's provider block for the relay. */
export const CODEX_RELAY_PROVIDER = 'drover-relay';

/** OpenCode's built-in provider of each model API, and what its AI SDK base URL adds to the relay's path. */
const OPENCODE: Record<ModelProviderId, { provider: string; suffix: string }> = {
  anthropic: { provider: 'anthropic', suffix: '/v1' },
  // The relay's OpenAI upstream is `OPENAI_BASE_URL`, which holds its /v1 already.
  openai: { provider: 'openai', suffix: '' },
  gemini: { provider: 'google', suffix: '/v1beta' },
};

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** A provider's URL at the relay: `<relay>/<provider id>` (src/runner/relay/server.ts serves these paths). */
export const relayProviderUrl = (relay: string, provider: ModelProvider): string => `${relay}/${provider.id}`;

/** Command-line arguments the agent needs to use the relay (placed with its MCP arguments). */
export function relayArgs(slug: string, relay: string, providers: readonly ModelProvider[]): string[] {
  const openai = providers.find((p) => p.id === 'openai');
  if (slug !== 'codex' || !openai) return [];
  // `-c` values are TOML; JSON strings are valid TOML strings.
  const key = `model_providers.${CODEX_RELAY_PROVIDER}`;
  return [
    '-c', `model_provider=${JSON.stringify(CODEX_RELAY_PROVIDER)}`,
    '-c', `${key}.name="Drover relay"`,
    '-c', `${key}.base_url=${JSON.stringify(relayProviderUrl(relay, openai))}`,
    '-c', `${key}.env_key=${JSON.stringify(openai.credentials[0])}`,
    '-c', `${key}.wire_api="responses"`,
    '-c', `${key}.supports_websockets=false`,
  ]; // prettier-ignore
}

/**
 * Config files of the pod's HOME to change so the agent uses the relay; `credentials` are the
 * model credentials the pod names (each stands for its provider in `providers`).
 */
export function relayHomeConfig(slug: string, relay: string, providers: readonly ModelProvider[], credentials: readonly string[]): HomeConfigChange[] {
  if (slug === 'gemini-cli' && providers.some((p) => p.id === 'gemini')) {
    return [
      {
        file: '.gemini/settings.json',
        update: (existing) => {
          const security = isObject(existing.security) ? existing.security : {};
          const auth = isObject(security.auth) ? security.auth : {};
          return { ...existing, security: { ...security, auth: { ...auth, selectedType: 'gemini-api-key' } } };
        },
      },
    ];
  }
  if (slug === 'opencode' && providers.length > 0) {
    return [{ file: '.config/opencode/opencode.json', update: (existing) => openCodeProviders(existing, relay, providers, credentials) }];
  }
  return [];
}

function openCodeProviders(existing: Record<string, unknown>, relay: string, providers: readonly ModelProvider[], credentials: readonly string[]): Record<string, unknown> {
  const configured = isObject(existing.provider) ? { ...existing.provider } : {};
  const at = (provider: ModelProvider) => `${relayProviderUrl(relay, provider)}${OPENCODE[provider.id].suffix}`;
  const withRelay = (entry: unknown, provider: ModelProvider, credential: string) => {
    const current = isObject(entry) ? entry : {};
    const options = isObject(current.options) ? current.options : {};
    return { ...current, options: { ...options, baseURL: at(provider), apiKey: `{env:${credential}}` } };
  };
  for (const provider of providers) {
    const credential = provider.credentials.find((name) => credentials.includes(name)) ?? provider.credentials[0];
    const builtin = OPENCODE[provider.id].provider;
    configured[builtin] = withRelay(configured[builtin], provider, credential);
  }
  // The operator's own providers that read a model credential's key.
  for (const [name, entry] of Object.entries(configured)) {
    const options = isObject(entry) && isObject(entry.options) ? entry.options : null;
    const reference = typeof options?.apiKey === 'string' ? /^\{env:([A-Za-z_][A-Za-z0-9_]*)\}$/.exec(options.apiKey)?.[1] : undefined;
    const provider = reference && credentials.includes(reference) ? providers.find((p) => p.credentials.includes(reference)) : undefined;
    if (provider && reference) configured[name] = withRelay(entry, provider, reference);
  }
  return { ...existing, provider: configured };
}
