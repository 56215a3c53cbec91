/**
 * The MCP server of `drover mcp` (docs/mcp.md), on the official SDK: an McpServer holding the
 * tools the credential's scopes allow (learned from `GET /auth/whoami`), served over stdio.
 */
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import pkg from '../../package.json' with { type: 'json' };
import { grants, isScope } from '../protocol/scopes.ts';
import type { ToolContext, ToolDefinition } from './tool.ts';
import { failure, success } from './tool.ts';
import { channelTools } from './tools/channels.ts';
import { otherTools } from './tools/others.ts';
import { podTools } from './tools/pods.ts';
import { ticketTools } from './tools/tickets.ts';

export const ALL_TOOLS: ToolDefinition[] = [...channelTools, ...ticketTools, ...podTools, ...otherTools];

/** The tools a credential holding `scopes` may use: each needs its scope; report_status needs a pod's status file. */
export function allowedTools(scopes: readonly string[], insidePod: boolean): ToolDefinition[] {
  return ALL_TOOLS.filter((t) => (t.podOnly ? insidePod : t.scope !== null && isScope(t.scope) && grants(scopes, t.scope)));
}

const INSTRUCTIONS =
  'Drover: the control plane your agent runs in. Channels are where agents and people talk (channel_* tools; inside a pod ' +
  "channel_id defaults to the pod's channel), tickets are the work (ticket_*), pods are agent runs (pod_spawn starts another agent, " +
  'pod_wait waits for it, pod_output reads what it printed). Every tool answers JSON; errors carry the API code.';

export function createMcpServer(context: ToolContext, scopes: readonly string[]): McpServer {
  const server = new McpServer({ name: 'drover', version: pkg.version }, { instructions: INSTRUCTIONS });
  for (const definition of allowedTools(scopes, context.env.statusFile !== null)) {
    server.registerTool(
      definition.name,
      { title: definition.title, description: definition.description, inputSchema: definition.input },
      async (args: Record<string, unknown>, extra: { signal: AbortSignal }) => {
        try {
          return success(await definition.run(args as never, context, extra.signal));
        } catch (error) {
          return failure(error);
        }
      },
    );
  }
  return server;
}
