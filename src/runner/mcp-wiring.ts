/**
 * Gives a pod's agent the `drover` MCP server (docs/mcp.md) unless its agentfile says
 * `CONFIG mcp = false`: the command-line arguments for Claude Code and Codex, the config files in
 * the pod's HOME for Gemini CLI and OpenCode (merged into what the operator's HOME template put
 * there). The server is this runner's own Node running this runner's own `bin/drover.mjs mcp`:
 * both are visible read-only inside the sandbox (src/runner/sandbox/host-view.ts). Its bundle is
 * brought up to date here, outside the sandbox, where the package directory can be written.
 */
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { mcpArgs, mcpHomeConfig, supportsMcp, type McpServerLaunch } from '../agents/mcp.ts';
import { PACKAGE_ROOT } from '../paths.ts';
import { updatePodJsonFiles } from './pod-tree.ts';

/** The pod's variables `drover mcp` reads; each is passed on when the pod has it. */
export const MCP_ENV_NAMES = ['DROVER_API_URL', 'DROVER_ORG', 'DROVER_POD_TOKEN', 'DROVER_POD_KEY', 'DROVER_CHANNEL_ID', 'DROVER_TICKET_SLUG', 'DROVER_STATUS_FILE'];

let bundleReady: Promise<void> | null = null;

/** Builds `.build/mcp.mjs` once per runner process if it is missing or stale (a read-only package falls back to the sources). */
function ensureMcpBundle(): Promise<void> {
  bundleReady ??= (async () => {
    const build = (await import(pathToFileURL(path.join(PACKAGE_ROOT, 'bin', 'build.mjs')).href)) as { entryModule(entry: string): Promise<string> };
    await build.entryModule('mcp');
  })().catch((error: unknown) => {
    bundleReady = null;
    throw error;
  });
  return bundleReady;
}

export function mcpLaunch(agentEnv: NodeJS.ProcessEnv): McpServerLaunch {
  return {
    command: process.execPath,
    args: [path.join(PACKAGE_ROOT, 'bin', 'drover.mjs'), 'mcp'],
    env: MCP_ENV_NAMES.filter((name) => (agentEnv[name] ?? '') !== ''),
  };
}

/**
 * Wires the server for one run of `slug` in `home`; answers the arguments to add to its command
 * line. A config file of the template that is not a JSON object (JSONC with comments, say) is
 * left alone, and that agent runs without the server: the answer says why in `skipped`.
 */
export async function wireMcp(slug: string, home: string, agentEnv: NodeJS.ProcessEnv, enabled: boolean): Promise<{ args: string[]; skipped: string | null }> {
  if (!enabled || !supportsMcp(slug)) return { args: [], skipped: null };
  await ensureMcpBundle();
  const launch = mcpLaunch(agentEnv);
  // The pod's HOME is the pod's: nothing in it is followed or trusted (./pod-tree.ts).
  const refused = updatePodJsonFiles(home, mcpHomeConfig(slug, launch));
  if (refused) return { args: [], skipped: `${refused} in the pod's HOME, so the drover MCP server was not added to it` };
  return { args: mcpArgs(slug, launch), skipped: null };
}
