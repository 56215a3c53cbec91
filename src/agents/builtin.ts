/**
 * The built-in agents of docs/api.md and the exact command line each one's CLI takes for a
 * non-interactive, unattended task.
 *
 * Common rules (why the command lines look the way they do):
 * - A prompt given as a positional argument is always preceded by `--`, so a prompt that starts
 *   with `-` (a Markdown list, `--help me`) is never parsed as an option, and a prompt that happens
 *   to equal a subcommand name (`codex exec review`) is never taken for one. A prompt given as an
 *   option value uses the `--option=value` form for the same reason.
 * - Agents run unattended in a sandbox of their own, so the default permission mode is the one
 *   that never stops to ask; `CONFIG permission_mode` picks another of the values docs/agents.md
 *   lists for the agent (checked at the API), each mapped to the flag the CLI takes.
 * - The CLI's machine-readable output is selected, so `output/` can read the final message, the
 *   session id (loop `session_persistence`) and the usage from it.
 * - Resuming needs the agent's session store of the previous run: Claude Code, Gemini CLI and
 *   OpenCode keep sessions per project directory, so they resume only in the same workspace path
 *   (loop `sandbox_strategy: persistent`); Codex finds a session by id anywhere.
 *
 * The flags were checked against each CLI's documentation and source (see `source` of each agent).
 */
import { BUILTIN_AGENT_SLUGS, type BuiltinAgentSlug } from '../protocol/enums.ts';
import type { AgentTask } from './types.ts';

export { BUILTIN_AGENT_SLUGS, type BuiltinAgentSlug };

export interface BuiltinAgentSupport {
  /** `AgentTask.model` is passed on. */
  model: boolean;
  /** `AgentTask.maxTurns` is passed on. */
  maxTurns: boolean;
  /** `AgentTask.permissionMode` is passed on. */
  permissionMode: boolean;
  /** `AgentTask.resumeSessionId` is passed on, and `extractSessionId` finds the id in the output. */
  resume: boolean;
}

export interface BuiltinAgent {
  readonly slug: BuiltinAgentSlug;
  /** Human name. */
  readonly name: string;
  /** The program looked up on PATH (docs/agents.md "The built-in agents"). */
  readonly program: string;
  readonly supports: BuiltinAgentSupport;
  /** The permission mode used when the task has none; `null` if the agent has no such notion. */
  readonly defaultPermissionMode: string | null;
  /** The `CONFIG permission_mode` values the agent takes (docs/agents.md); empty: it takes none. */
  readonly permissionModes: readonly string[];
  /** Where the flags come from (documentation page / source file and version). */
  readonly source: string;
  /** The arguments after `program`, and the stdin text, for an already validated task. */
  argv(task: AgentTask): { args: string[]; stdin: string | null };
}

const claudeCode: BuiltinAgent = {
  slug: 'claude-code',
  name: 'Claude Code',
  program: 'claude',
  supports: { model: true, maxTurns: true, permissionMode: true, resume: true },
  defaultPermissionMode: 'bypassPermissions',
  permissionModes: ['default', 'acceptEdits', 'bypassPermissions', 'dontAsk', 'plan'],
  // Claude Code CLI reference, https://docs.anthropic.com/en/docs/claude-code/cli-reference
  // (2.x): `-p/--print` non-interactive; `--output-format stream-json` needs `--verbose` with
  // `-p`; every stream-json line carries `session_id`; `--model`, `--max-turns N`,
  // `--permission-mode default|acceptEdits|bypassPermissions|dontAsk|plan`, `-r/--resume <id>`.
  // The CLI parser is commander: `--` ends the options, the prompt is the positional after it.
  // bypassPermissions is refused when the CLI runs as uid 0 (unless IS_SANDBOX=1, which Drover
  // does not set): the pod sandbox runs agents as a non-root user.
  source: 'https://docs.anthropic.com/en/docs/claude-code/cli-reference (Claude Code 2.x)',
  argv(task) {
    const args = ['-p', '--output-format', 'stream-json', '--verbose'];
    if (task.model) args.push('--model', task.model);
    if (task.maxTurns !== undefined) args.push('--max-turns', String(task.maxTurns));
    args.push('--permission-mode', task.permissionMode ?? 'bypassPermissions');
    if (task.resumeSessionId) args.push('--resume', task.resumeSessionId);
    // --mcp-config and --allowedTools take several values: they end at the next option or at `--`.
    args.push(...(task.mcpArgs ?? []));
    args.push('--', task.prompt);
    return { args, stdin: null };
  },
};

const codex: BuiltinAgent = {
  slug: 'codex',
  name: 'OpenAI Codex CLI',
  program: 'codex',
  supports: { model: true, maxTurns: false, permissionMode: true, resume: true },
  defaultPermissionMode: 'workspace-write',
  permissionModes: ['read-only', 'workspace-write', 'danger-full-access'],
  // `codex exec` (https://developers.openai.com/codex/noninteractive, openai/codex
  // codex-rs/exec/src/cli.rs, 0.5x–current): never asks for approvals; `--sandbox
  // read-only|workspace-write|danger-full-access` (`--full-auto` is deprecated for
  // `--sandbox workspace-write` and rejected by current builds); `--skip-git-repo-check` allows a
  // workspace that is not a Git checkout; `-m/--model`; `-c key=value` config overrides;
  // `codex exec [OPTIONS] resume <SESSION_ID> [PROMPT]` continues a session (options go before the
  // subcommand, where every version accepts them). `--json` prints one JSON event a line on stdout
  // (`thread.started` with the session id, `item.completed` agent messages, `turn.completed` with
  // the session's token usage); the human-readable output would put the session id on stderr and
  // only a total of tokens at the end. Its own sandbox (bubblewrap plus a helper it links under
  // CODEX_HOME) needs a HOME that is not under the temp directory. In `workspace-write` the sandbox blocks the network by default, which
  // would cut the agent off from `DROVER_API_URL`, so network access is turned on; and Codex's
  // default shell-environment filter drops variables named *KEY*/*TOKEN*/*SECRET* (i.e.
  // `DROVER_POD_TOKEN` and the pod's `CREDENTIAL`s) from the commands it runs — Drover already
  // hands it a minimal environment, so that filter is turned off.
  source: 'https://developers.openai.com/codex/noninteractive; openai/codex codex-rs/exec/src/cli.rs',
  argv(task) {
    const sandbox = task.permissionMode ?? 'workspace-write';
    const args = ['exec', '--json', '--sandbox', sandbox];
    if (sandbox === 'workspace-write') args.push('-c', 'sandbox_workspace_write.network_access=true');
    args.push('-c', 'shell_environment_policy.ignore_default_excludes=true', '--skip-git-repo-check');
    args.push(...(task.mcpArgs ?? []));
    if (task.model) args.push('--model', task.model);
    if (task.resumeSessionId) args.push('resume', task.resumeSessionId);
    args.push('--', task.prompt);
    return { args, stdin: null };
  },
};

const geminiCli: BuiltinAgent = {
  slug: 'gemini-cli',
  name: 'Gemini CLI',
  program: 'gemini',
  supports: { model: true, maxTurns: false, permissionMode: true, resume: true },
  defaultPermissionMode: 'yolo',
  permissionModes: ['default', 'auto_edit', 'yolo', 'plan'],
  // Gemini CLI (https://geminicli.com/docs/cli/cli-reference, /docs/cli/headless,
  // /docs/cli/session-management; 0.41+): `-p/--prompt` headless mode; `--output-format
  // stream-json` whose `init` event carries `session_id`; `-m/--model`; `--approval-mode
  // default|auto_edit|yolo|plan` (`--yolo` is deprecated and may not be combined with it);
  // `-r/--resume <session id>`; `--skip-trust`: since 0.41 a headless run in a folder the user
  // never trusted interactively exits with code 55 (and downgrades yolo) without it. The parser is
  // yargs: `--prompt=<text>` keeps a prompt that starts with `-` a value.
  source: 'https://geminicli.com/docs/cli/cli-reference (Gemini CLI 0.41+)',
  argv(task) {
    const args = ['--output-format', 'stream-json', '--approval-mode', task.permissionMode ?? 'yolo', '--skip-trust'];
    if (task.model) args.push('--model', task.model);
    if (task.resumeSessionId) args.push('--resume', task.resumeSessionId);
    args.push(`--prompt=${task.prompt}`);
    return { args, stdin: null };
  },
};

const aider: BuiltinAgent = {
  slug: 'aider',
  name: 'Aider',
  program: 'aider',
  supports: { model: true, maxTurns: false, permissionMode: false, resume: false },
  defaultPermissionMode: null,
  permissionModes: [],
  // Aider options (https://aider.chat/docs/config/options.html, https://aider.chat/docs/scripting.html;
  // aider-chat 0.7x–0.86): `--message` sends one message and exits; `--yes-always` answers every
  // confirmation; `--no-pretty` plain output for a log. Because `--yes-always` would also say yes
  // to side questions, these are turned off: `--no-check-update` (would offer to pip-install an
  // upgrade), `--no-show-release-notes`, `--no-analytics` (would opt the user in),
  // `--no-show-model-warnings` (would offer to open a browser), `--no-detect-urls` (would scrape URLs
  // in the prompt and offer to install Playwright). Aider's auto-commits stay on: committing each
  // edit on the pod's branch is Aider's documented git workflow. No max turns, permission modes or
  // resumable session ids. argparse: `--message=<text>` keeps a prompt that starts with `-` a value.
  source: 'https://aider.chat/docs/config/options.html (aider-chat 0.86)',
  argv(task) {
    const args = [
      '--yes-always',
      '--no-pretty',
      '--no-check-update',
      '--no-show-release-notes',
      '--no-analytics',
      '--no-show-model-warnings',
      '--no-detect-urls',
    ];
    if (task.model) args.push('--model', task.model);
    args.push(`--message=${task.prompt}`);
    return { args, stdin: null };
  },
};

const opencode: BuiltinAgent = {
  slug: 'opencode',
  name: 'OpenCode',
  program: 'opencode',
  supports: { model: true, maxTurns: false, permissionMode: true, resume: true },
  defaultPermissionMode: 'auto',
  permissionModes: ['auto', 'default'],
  // `opencode run` (https://opencode.ai/docs/cli/; anomalyco/opencode
  // packages/opencode/src/cli/cmd/run.ts, 1.18+): `--format json` prints one JSON event a line,
  // each with `sessionID` (`ses_…`); `-m/--model provider/model`; `-s/--session <id>` continues a
  // session; `--auto` approves permission requests that are not explicitly denied (without it
  // `run` rejects them). The prompt goes on stdin, which `run` reads to its end when it is not a
  // TTY: the message words given as arguments are re-joined with quotes added around every word
  // that contains a space, so stdin is the only way the agent sees the prompt verbatim (and it
  // avoids the 128 KiB limit of one argument). Permission modes: `auto` (default) adds `--auto`,
  // `default` leaves OpenCode's configured permissions (unanswerable asks are rejected).
  source: 'https://opencode.ai/docs/cli/; anomalyco/opencode packages/opencode/src/cli/cmd/run.ts (1.18+)',
  argv(task) {
    const args = ['run', '--format', 'json'];
    if ((task.permissionMode ?? 'auto') === 'auto') args.push('--auto');
    if (task.model) args.push('--model', task.model);
    if (task.resumeSessionId) args.push('--session', task.resumeSessionId);
    return { args, stdin: task.prompt };
  },
};

const shell: BuiltinAgent = {
  slug: 'shell',
  name: 'Shell (bash script)',
  program: 'bash',
  supports: { model: false, maxTurns: false, permissionMode: false, resume: false },
  defaultPermissionMode: null,
  permissionModes: [],
  // docs/api.md: runs the prompt as a bash script; exit 0 = completed. `bash -c -- <script>`:
  // the script is an argument (not stdin, so commands in it that read stdin cannot swallow the
  // rest of the script; not a temp file, so nothing is left in the workspace); `--` keeps a
  // script that starts with `-` a script. The script's own `exit N` is bash's exit status.
  source: 'bash(1), -c string',
  argv(task) {
    return { args: ['-c', '--', task.prompt], stdin: null };
  },
};

const BUILTIN_AGENTS: Readonly<Record<BuiltinAgentSlug, BuiltinAgent>> = {
  'claude-code': claudeCode,
  codex,
  'gemini-cli': geminiCli,
  aider,
  opencode,
  shell,
};

export function isBuiltinAgentSlug(slug: string): slug is BuiltinAgentSlug {
  return (BUILTIN_AGENT_SLUGS as readonly string[]).includes(slug);
}

/** The built-in agent with this slug, or `null` (a custom agent's slug, or unknown). */
export function builtinAgent(slug: string): BuiltinAgent | null {
  return isBuiltinAgentSlug(slug) ? BUILTIN_AGENTS[slug] : null;
}

/** The program a built-in agent runs (`claude-code` → `claude`), or `null` if not built in. */
export function agentProgram(slug: string): string | null {
  return builtinAgent(slug)?.program ?? null;
}

/**
 * Why `mode` is not a `CONFIG permission_mode` of the agent (docs/agents.md), naming the values it
 * takes; `null` when it is one. Custom agents (any slug not built in) take none.
 */
export function permissionModeProblem(slug: string, mode: string): string | null {
  const modes = builtinAgent(slug)?.permissionModes ?? [];
  if (modes.includes(mode)) return null;
  if (modes.length === 0) return `the agent "${slug}" takes no permission_mode`;
  return `permission_mode of ${slug} must be one of ${modes.join(', ')}, got ${JSON.stringify(mode)}`;
}

/** Whether the agent can continue a previous session (loop `session_persistence`). */
export function supportsResume(slug: string): boolean {
  return builtinAgent(slug)?.supports.resume ?? false;
}
