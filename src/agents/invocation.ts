/**
 * From an agent (built-in or custom) and a task to the exact process to spawn. Pure: no file
 * system, no environment (see `environment.ts` for that).
 */
import { builtinAgent, permissionModeProblem, type BuiltinAgentSlug } from './builtin.ts';
import { PROMPT_POSITIONS, type AgentInvocation, type AgentTask, type CustomAgentDefinition } from './types.ts';

/**
 * A built-in agent (`{ builtin: 'codex' }`, or just its slug `'codex'`), or a custom agent's
 * definition. An unknown built-in slug is an `AgentInvocationError`.
 */
export type AgentSpec = BuiltinAgentSlug | { builtin: BuiltinAgentSlug } | CustomAgentDefinition;

/** The task cannot be turned into a command line; `field` names the offending task field. */
export class AgentInvocationError extends Error {
  readonly field: string;
  constructor(field: string, message: string) {
    super(message);
    this.name = 'AgentInvocationError';
    this.field = field;
  }
}

/** Session ids Drover passes back to an agent: the ids the CLIs print, and nothing an option parser could misread. */
export const SESSION_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,199}$/;
/** Model names: `sonnet`, `gpt-5-codex`, `anthropic/claude-sonnet-4-5`, `openrouter/x/y:free`, `gemini-2.5-pro`. */
const MODEL_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._:/@+-]{0,199}$/;
/** Permission modes: `bypassPermissions`, `workspace-write`, `auto_edit`. */
const PERMISSION_MODE_PATTERN = /^[A-Za-z][A-Za-z0-9_-]{0,63}$/;

function isCustom(agent: AgentSpec): agent is CustomAgentDefinition {
  return typeof agent === 'object' && agent !== null && 'command' in agent;
}

function hasNul(value: string): boolean {
  return value.includes('\0');
}

function validateTask(task: AgentTask): void {
  if (typeof task.prompt !== 'string') throw new AgentInvocationError('prompt', 'prompt must be a string');
  if (hasNul(task.prompt)) throw new AgentInvocationError('prompt', 'prompt must not contain NUL characters');
  if (task.model !== undefined && !MODEL_PATTERN.test(task.model)) {
    throw new AgentInvocationError('model', `model ${JSON.stringify(task.model)} is not a model name`);
  }
  if (task.maxTurns !== undefined && !(Number.isSafeInteger(task.maxTurns) && task.maxTurns >= 1)) {
    throw new AgentInvocationError('maxTurns', 'max_turns must be a positive integer');
  }
  if (task.permissionMode !== undefined && !PERMISSION_MODE_PATTERN.test(task.permissionMode)) {
    throw new AgentInvocationError('permissionMode', `permission_mode ${JSON.stringify(task.permissionMode)} is not a mode name`);
  }
  if (task.resumeSessionId != null && task.resumeSessionId !== '' && !SESSION_ID_PATTERN.test(task.resumeSessionId)) {
    throw new AgentInvocationError('resumeSessionId', `session id ${JSON.stringify(task.resumeSessionId)} is not a session id`);
  }
}

function customInvocation(agent: CustomAgentDefinition, task: AgentTask): AgentInvocation {
  if (typeof agent.command !== 'string' || agent.command.length === 0 || hasNul(agent.command)) {
    throw new AgentInvocationError('command', `custom agent ${agent.slug}: command must be a non-empty string`);
  }
  if (!Array.isArray(agent.args) || agent.args.some((arg) => typeof arg !== 'string' || hasNul(arg))) {
    throw new AgentInvocationError('args', `custom agent ${agent.slug}: args must be strings`);
  }
  const args = [...agent.args];
  switch (agent.prompt_position) {
    case 'last':
      return { command: agent.command, args: [...args, task.prompt], stdin: null };
    case 'first':
      return { command: agent.command, args: [task.prompt, ...args], stdin: null };
    case 'stdin':
      return { command: agent.command, args, stdin: task.prompt };
    case 'env':
      // The prompt reaches the agent only as DROVER_PROMPT (environment.ts, `drover.prompt`).
      return { command: agent.command, args, stdin: null };
    default:
      throw new AgentInvocationError(
        'prompt_position',
        `custom agent ${agent.slug}: prompt_position must be one of ${PROMPT_POSITIONS.join(', ')}`,
      );
  }
}

/**
 * The process to spawn for `task` with `agent`. Task fields an agent has no flag for are ignored
 * (see `builtinAgent(slug).supports`); custom agents get the prompt only (their `args` are fixed).
 * Throws `AgentInvocationError` for an unknown built-in slug or an invalid task.
 */
export function buildInvocation(agent: AgentSpec, task: AgentTask): AgentInvocation {
  validateTask(task);
  if (isCustom(agent)) return customInvocation(agent, task);

  const slug: string = typeof agent === 'string' ? agent : agent.builtin;
  const builtin = builtinAgent(slug);
  if (!builtin) throw new AgentInvocationError('agent', `unknown built-in agent ${JSON.stringify(slug)}`);

  const effective: AgentTask = {
    prompt: task.prompt,
    workspace: task.workspace,
    ...(builtin.supports.model && task.model !== undefined ? { model: task.model } : {}),
    ...(builtin.supports.maxTurns && task.maxTurns !== undefined ? { maxTurns: task.maxTurns } : {}),
    ...(builtin.supports.permissionMode && task.permissionMode !== undefined ? { permissionMode: task.permissionMode } : {}),
    ...(builtin.supports.resume && task.resumeSessionId ? { resumeSessionId: task.resumeSessionId } : {}),
    ...(task.mcpArgs?.length ? { mcpArgs: task.mcpArgs } : {}),
  };
  const modeProblem = effective.permissionMode === undefined ? null : permissionModeProblem(builtin.slug, effective.permissionMode);
  if (modeProblem !== null) throw new AgentInvocationError('permissionMode', modeProblem);
  if (builtin.slug === 'opencode' && effective.model !== undefined && !effective.model.includes('/')) {
    throw new AgentInvocationError('model', 'opencode models are written provider/model, e.g. anthropic/claude-sonnet-4-5');
  }

  const { args, stdin } = builtin.argv(effective);
  return { command: builtin.program, args, stdin };
}
