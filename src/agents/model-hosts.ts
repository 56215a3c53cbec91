import type { BuiltinAgentSlug } from './builtin.ts';

/**
 * The hosts each built-in agent's CLI talks to for its model (and its sign-in), on port 443: a
 * pod of that agent may reach them through its network walls without anyone allowing them
 * (docs/runners.md "Network"). Taken from each CLI's documentation of its endpoints; an agent
 * pointed elsewhere (a base-URL variable, a proxy of the operator's) needs that host allowed.
 */
export const MODEL_HOSTS: Readonly<Record<BuiltinAgentSlug, readonly string[]>> = {
  'claude-code': ['api.anthropic.com', 'statsig.anthropic.com', 'console.anthropic.com', 'claude.ai'],
  codex: ['api.openai.com', 'chatgpt.com', 'auth.openai.com'],
  'gemini-cli': ['generativelanguage.googleapis.com', 'cloudcode-pa.googleapis.com', 'oauth2.googleapis.com', 'aiplatform.googleapis.com'],
  aider: ['api.openai.com', 'api.anthropic.com', 'openrouter.ai', 'generativelanguage.googleapis.com'],
  opencode: ['api.anthropic.com', 'api.openai.com', 'models.dev', 'opencode.ai'],
  shell: [],
};

export function modelHosts(slug: string): readonly string[] {
  return Object.hasOwn(MODEL_HOSTS, slug) ? MODEL_HOSTS[slug as BuiltinAgentSlug] : [];
}
