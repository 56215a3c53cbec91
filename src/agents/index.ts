export type { AgentInvocation, AgentTask, CustomAgentDefinition } from './types.ts';
export { PROMPT_POSITIONS } from './types.ts';
export {
  BUILTIN_AGENT_SLUGS,
  agentProgram,
  builtinAgent,
  isBuiltinAgentSlug,
  permissionModeProblem,
  supportsResume,
  type BuiltinAgent,
  type BuiltinAgentSlug,
  type BuiltinAgentSupport,
} from './builtin.ts';
export { AgentInvocationError, SESSION_ID_PATTERN, buildInvocation, type AgentSpec } from './invocation.ts';
export {
  RESULT_MAX_BYTES,
  USAGE_FIELDS,
  addUsage,
  emptyReport,
  emptyUsage,
  outputReader,
  parseAgentOutput,
  usageSince,
  type AgentReport,
  type AgentUsage,
  type OutputReader,
} from './output/index.ts';
export {
  DEFAULT_LANG,
  DEFAULT_PATH,
  DEFAULT_TERM,
  INHERITED_VARIABLES,
  envNameProblem,
  agentEnvironment,
  type AgentEnvironment,
  type AgentEnvironmentInput,
  type DroverAgentContext,
} from './environment.ts';
export { detectAgentVersions, detectAgents, findExecutable, parseVersion, pathDirectories } from './detect.ts';
