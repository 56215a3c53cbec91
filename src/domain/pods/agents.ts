import { BUILTIN_AGENT_SLUGS } from '../../runner/agents/builtin.ts';

export const isBuiltinAgent = (slug: string): boolean => (BUILTIN_AGENT_SLUGS as readonly string[]).includes(slug);
