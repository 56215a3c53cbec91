/**
 * `drover mcp`: the Model Context Protocol server over stdio (docs/mcp.md). bin/drover.mjs runs it
 * from a bundle of its own (.build/mcp.mjs) holding the SDK, the typed client and the tools, none
 * of the server: an agent starts it for every session, so it must start fast.
 *
 * It learns the credential's scopes from `GET /auth/whoami` before it answers anything, so
 * `tools/list` holds exactly the tools the credential may use. stdout is the protocol's;
 * everything else goes to stderr.
 */
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { ApiError, DroverClient } from '../client/index.ts';
import { EnvironmentError, readEnvironment } from './env.ts';
import { createMcpServer } from './server.ts';

export const MCP_USAGE = `Usage: drover mcp

A Model Context Protocol server over stdio: Drover's channels, tickets, pods, loops, repositories
and runners as tools for an agent. Add it to an agent's MCP configuration as the command
"drover mcp". It reads:

  DROVER_API_URL     the server's base URL, e.g. http://127.0.0.1:7070
  DROVER_ORG         the organization's slug
  DROVER_POD_TOKEN   inside a Drover pod: the pod's token (set by the runner)
  DROVER_API_KEY     outside Drover: an API key (drv_…); its scopes decide which tools are listed
  DROVER_CHANNEL_ID  optional: the channel the channel tools use when a call names none

See docs/mcp.md for the tools.`;

export async function main(argv: string[]): Promise<void> {
  const args = argv[0] === 'mcp' ? argv.slice(1) : argv;
  if (args.includes('--help') || args.includes('-h')) {
    process.stdout.write(`${MCP_USAGE}\n`);
    return;
  }
  if (args.length > 0) throw new EnvironmentError(`drover mcp takes no arguments (got "${args.join(' ')}"); run "drover mcp --help"`);
  const env = readEnvironment(process.env);
  const client = new DroverClient({ server: env.server, org: env.org, apiKey: env.credential });
  let scopes: string[];
  try {
    const { data } = await client.call(client.api.GET('/api/v1/ext/orgs/{org}/auth/whoami', { params: { path: client.path } }));
    scopes = data.principal.scopes;
  } catch (error) {
    if (error instanceof ApiError) throw new Error(`the server refused the credential: ${error.message} (${error.code})`, { cause: error });
    throw error;
  }
  const server = createMcpServer({ client, env }, scopes);
  const transport = new StdioServerTransport();
  await server.connect(transport);
  // The client closing stdin ends the session, and the process with it.
  process.stdin.once('end', () => void server.close().finally(() => process.exit(0)));
}
