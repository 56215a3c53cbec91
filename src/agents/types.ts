/**
 * Types of the runner-side agent layer (docs/agents.md "The built-in agents",
 * "Autopilot"; docs/runners.md "Environment"; docs/api.md "Administration"). Everything in `src/agents/` is pure (or, for
 * `detect.ts`, only reads the file system): it decides *what* to run; the runner's process
 * supervisor runs it.
 */

/** One run of an agent: what the pod (or loop run, or autopilot iteration) asks it to do. */
export interface AgentTask {
  /** The rendered prompt. For the `shell` agent it is the bash script. */
  prompt: string;
  /** `CONFIG model`. Passed to agents that take a model; ignored by the others. */
  model?: string;
  /** `CONFIG max_turns`. Only Claude Code has a command-line limit; ignored by the others. */
  maxTurns?: number;
  /**
   * `CONFIG permission_mode`, in the agent's own vocabulary (Claude Code `--permission-mode`,
   * Codex `--sandbox`, Gemini CLI `--approval-mode`, OpenCode `auto`/`default`). Absent: the
   * agent's unattended default (see `builtin.ts`).
   */
  permissionMode?: string;
  /** The session id to continue (loop `session_persistence`), as the agent's output reported it (`output/`). */
  resumeSessionId?: string | null;
  /** The pod's workspace; the runner spawns the agent with this as its cwd. */
  workspace: string;
  /** Arguments that give the agent the `drover` MCP server (mcp.ts `mcpArgs`), placed before the prompt. */
  mcpArgs?: string[];
}

/** What to spawn: `spawn(command, args, { cwd: task.workspace, env })`, then write `stdin`. */
export interface AgentInvocation {
  command: string;
  args: string[];
  /**
   * Text to write to the child's stdin before closing it. `null`: the child gets no stdin at all
   * (spawn it with stdin `'ignore'`, i.e. /dev/null) — several agent CLIs read a piped stdin to
   * its end before starting, so an open, never-closed pipe would hang them.
   */
  stdin: string | null;
}

/**
 * A custom agent of an organization (`POST /orgs/{org}/agents`): `command` is a program name
 * (looked up on PATH) or a path; `args` come first, verbatim; `prompt_position` says where the
 * prompt goes: appended after `args` (`last`), before them (`first`), on stdin (`stdin`), or only in
 * the environment variable `DROVER_PROMPT` (`env`).
 */
export interface CustomAgentDefinition {
  slug: string;
  command: string;
  args: string[];
  prompt_position: 'last' | 'first' | 'stdin' | 'env';
}

export const PROMPT_POSITIONS = ['last', 'first', 'stdin', 'env'] as const;
