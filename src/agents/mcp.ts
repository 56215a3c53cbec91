/**
 * The `drover` MCP server in each MCP-capable built-in agent's own configuration (docs/mcp.md),
 * in the format that agent documents. Pure: what to add to the command line, and how to change
 * the agent's config files in the pod's HOME; the runner writes them (src/runner/mcp-wiring.ts).
 *
 * The server is `drover mcp` run by the runner's own Node and Drover (both visible read-only in
 * the sandbox), and it needs the pod's DROVER_* variables. Agents hand a stdio server only part of
 * their environment (the MCP SDK's default is HOME, PATH and a few more; Codex forwards a fixed
 * list; Gemini CLI withholds names that look secret), so each configuration names the variables
 * to pass, as references to the agent's own environment in that agent's syntax: the pod token is
 * never written into a file or a command line.
 *
 * - Claude Code: `--mcp-config <json>` (a JSON string is accepted where a file is), `env` values
 *   `${NAME}` (expanded by Claude Code), and `--allowedTools mcp__drover` so the tools run in
 *   every permission mode (https://code.claude.com/docs/en/mcp).
 * - Codex: `-c mcp_servers.drover.command=…`, `.args=[…]`, `.env_vars=[…]` (names forwarded from
 *   Codex's environment), `.tool_timeout_sec` (default 60 s, less than pod_wait may take) and
 *   `.default_tools_approval_mode="approve"` (`codex exec` never asks, so a tool call needing
 *   approval would fail) (https://developers.openai.com/codex/mcp).
 * - Gemini CLI: `mcpServers.drover` in `~/.gemini/settings.json`, `env` values `$NAME`, `timeout`
 *   in ms, `trust: true` (no confirmation; https://geminicli.com/docs/tools/mcp-server).
 * - OpenCode: `mcp.drover` in `~/.config/opencode/opencode.json`, `type: "local"`, `command` as one
 *   array, `environment` values `{env:NAME}` (https://opencode.ai/docs/mcp-servers).
 */
import type { BuiltinAgentSlug } from './builtin.ts';

export const MCP_SERVER_NAME = 'drover';

/** How to start `drover mcp` inside the pod, and which variables of the agent's environment it needs. */
export interface McpServerLaunch {
  command: string;
  args: string[];
  /** Names of the pod's variables the server reads (only those set for this pod). */
  env: string[];
}

/** The longest a tool call may take (pod_wait's 600 s, and some room). */
export const MCP_TOOL_TIMEOUT_SEC = 660;

/** A change to one JSON config file in the pod's HOME: `update` gets its parsed contents ({} when absent). */
export interface HomeConfigChange {
  file: string;
  update(existing: Record<string, unknown>): Record<string, unknown>;
}

const MCP_AGENTS: readonly BuiltinAgentSlug[] = ['claude-code', 'codex', 'gemini-cli', 'opencode'];

export function supportsMcp(slug: string): boolean {
  return (MCP_AGENTS as readonly string[]).includes(slug);
}

const references = (names: string[], reference: (name: string) => string): Record<string, string> => Object.fromEntries(names.map((name) => [name, reference(name)]));

/** Command-line arguments that give the agent the server (Claude Code, Codex); the agent's argv puts them before the prompt. */
export function mcpArgs(slug: string, launch: McpServerLaunch): string[] {
  switch (slug) {
    case 'claude-code': {
      const config = { mcpServers: { [MCP_SERVER_NAME]: { type: 'stdio', command: launch.command, args: launch.args, env: references(launch.env, (n) => `\${${n}}`) } } };
      return ['--mcp-config', JSON.stringify(config), '--allowedTools', `mcp__${MCP_SERVER_NAME}`];
    }
    case 'codex': {
      // `-c key=value`: the value is TOML; JSON strings and arrays of strings are valid TOML.
      const key = `mcp_servers.${MCP_SERVER_NAME}`;
      return [
        '-c', `${key}.command=${JSON.stringify(launch.command)}`,
        '-c', `${key}.args=${JSON.stringify(launch.args)}`,
        '-c', `${key}.env_vars=${JSON.stringify(launch.env)}`,
        '-c', `${key}.tool_timeout_sec=${MCP_TOOL_TIMEOUT_SEC}`,
        // `codex exec` never asks, so a tool that needs approval would be refused: Drover's tools are approved.
        '-c', `${key}.default_tools_approval_mode="approve"`,
      ];
    }
    default:
      return [];
  }
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** Sets `section.drover` in a config object, keeping everything else the operator's template put there. */
function withServer(existing: Record<string, unknown>, section: string, server: Record<string, unknown>): Record<string, unknown> {
  const servers = isObject(existing[section]) ? existing[section] : {};
  return { ...existing, [section]: { ...servers, [MCP_SERVER_NAME]: server } };
}

/** Config files of the pod's HOME that give the agent the server (Gemini CLI, OpenCode). */
export function mcpHomeConfig(slug: string, launch: McpServerLaunch): HomeConfigChange[] {
  switch (slug) {
    case 'gemini-cli':
      return [
        {
          file: '.gemini/settings.json',
          update: (existing) =>
            withServer(existing, 'mcpServers', {
              command: launch.command,
              args: launch.args,
              env: references(launch.env, (n) => `$${n}`),
              timeout: MCP_TOOL_TIMEOUT_SEC * 1000,
              trust: true,
            }),
        },
      ];
    case 'opencode':
      return [
        {
          file: '.config/opencode/opencode.json',
          update: (existing) =>
            withServer(existing, 'mcp', {
              type: 'local',
              command: [launch.command, ...launch.args],
              enabled: true,
              environment: references(launch.env, (n) => `{env:${n}}`),
            }),
        },
      ];
    default:
      return [];
  }
}
