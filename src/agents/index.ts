export type { AgentInvocation, AgentTask, CustomAgentDefinition } from './types.ts';
export { PROMPT_POSITIONS } from './types.ts';
export {
  BUILTIN_AGENT_SLUGS,
  agentProgram,
  builtinAgent,
  isBuiltinAgentSlug,
  supportsResume,
  type BuiltinAgent,
  type BuiltinAgentSlug,
  type BuiltinAgentSupport,
} from './builtin.ts';
export { AgentInvocationError, SESSION_ID_PATTERN, buildInvocation, type AgentSpec } from './invocation.ts';
export { extractSessionId } from './session.ts';
export {
  DEFAULT_LANG,
  DEFAULT_PATH,
  DEFAULT_TERM,
  INHERITED_VARIABLES,
  agentEnvironment,
  type AgentEnvironment,
  type AgentEnvironmentInput,
  type DroverAgentContext,
} from './environment.ts';
export { detectAgentVersions, detectAgents, findExecutable, parseVersion, pathDirectories } from './detect.ts';
