/**
 * What starts one run of a pod's agent: its environment, the drover MCP server in its
 * configuration, its command line, inside the pod's sandbox and control groups. Everything the
 * supervisor needs to start the process, or the reason it cannot start.
 */
import path from 'node:path';
import type { PodSpec } from '../protocol/runner-link.ts';
import { agentEnvironment } from '../agents/environment.ts';
import { type BuiltinAgentSlug } from '../agents/builtin.ts';
import { findExecutable } from '../agents/detect.ts';
import { buildInvocation, type AgentSpec } from '../agents/invocation.ts';
import type { PodWalls } from './limits/pod-walls.ts';
import { wireMcp } from './mcp-wiring.ts';
import type { PodNetwork } from './network/index.ts';
import { relayAgent } from './relay/agent-env.ts';
import type { ModelRelay } from './relay/server.ts';
import type { PodView, Sandbox, SandboxLaunch } from './sandbox/index.ts';
import type { PreparedWorkspace } from './workspaces.ts';
import { gatedCommand } from './slot-gate.ts';

/** One run of the agent: a direct pod's only one, or an autopilot iteration. */
export interface AgentRun {
  prompt: string;
  resumeSessionId: string | null;
  /** Autopilot only: where the agent reports, and which iteration this is. */
  statusFile: string | null;
  iteration: number | null;
}

export interface AgentLaunchInput {
  spec: PodSpec;
  workspace: PreparedWorkspace;
  run: AgentRun;
  runnerEnv: NodeJS.ProcessEnv;
  credentials: Record<string, string>;
  sandbox: Sandbox | undefined;
  walls: PodWalls;
  /** The runner's model relay: the pod's model credentials become its placeholders. */
  relay?: ModelRelay;
  /** The pod's network walls (docs/runners.md "Network"); null or absent without a sandbox. */
  network?: PodNetwork | null;
  /** Hold the agent's exec behind the go signal (./slot-gate.ts): a pod prepared ahead of its slot. */
  gated?: boolean;
  /** A note for the pod's output (e.g. why the MCP server was not wired). */
  note(text: string): void;
}

export type AgentLaunch = (SandboxLaunch & { stdin: string | null; cwd: string }) | { spawnError: string };

export async function agentLaunch(input: AgentLaunchInput): Promise<AgentLaunch> {
  const { spec, workspace, run } = input;
  const agent: AgentSpec = spec.agent.custom ? { slug: spec.agent.slug, ...spec.agent.custom } : { builtin: spec.agent.slug as BuiltinAgentSlug };
  const { env, missingCredentials } = agentEnvironment({
    runnerEnv: input.runnerEnv,
    home: workspace.home,
    drover: {
      apiUrl: spec.env.api_url,
      org: spec.env.org,
      podKey: spec.key,
      podToken: spec.env.pod_token,
      workspace: workspace.path,
      channelId: spec.env.channel_id,
      ticketSlug: spec.env.ticket_slug,
      statusFile: run.statusFile,
      iteration: run.iteration,
      // Only a custom agent with prompt_position `env` gets the prompt in its environment.
      prompt: spec.agent.custom?.prompt_position === 'env' ? run.prompt : null,
    },
    variables: spec.agent_env ?? {},
    credentials: spec.credentials,
    credentialValues: input.credentials,
  });
  const network = input.network ?? null;
  Object.assign(env, network?.env); // the proxy and the in-pod DROVER_API_URL win over ENV
  const relayed = input.relay ? await relayAgent(input.relay, spec, env, workspace.home, network) : { args: [], skipped: null };
  if (relayed.skipped) input.note(relayed.skipped);
  // The drover MCP server in the agent's own configuration (docs/mcp.md), unless CONFIG mcp = false.
  let mcp: Awaited<ReturnType<typeof wireMcp>>;
  try {
    mcp = spec.agent.custom ? { args: [], skipped: null } : await wireMcp(spec.agent.slug, workspace.home, env, spec.mcp !== false);
  } catch (error) {
    return { spawnError: `could not give the agent the drover MCP server: ${(error as Error).message}` };
  }
  if (mcp.skipped) input.note(mcp.skipped);
  let invocation: ReturnType<typeof buildInvocation>;
  try {
    invocation = buildInvocation(agent, {
      prompt: run.prompt,
      model: spec.model ?? undefined,
      maxTurns: spec.max_turns ?? undefined,
      permissionMode: spec.permission_mode ?? undefined,
      resumeSessionId: run.resumeSessionId,
      workspace: workspace.path,
      mcpArgs: [...mcp.args, ...relayed.args],
    });
  } catch (error) {
    return { spawnError: (error as Error).message };
  }
  if (missingCredentials.length > 0) return { spawnError: `the runner has no credential named ${missingCredentials.join(', ')}` };
  // Inside a sandbox a missing program would only show as bwrap's own error: say it plainly.
  const program = invocation.command.includes('/') ? path.resolve(workspace.path, invocation.command) : invocation.command;
  if (!(await findExecutable(program, env.PATH))) return { spawnError: `the program "${invocation.command}" was not found on the runner's PATH` };
  const view: PodView = {
    cwd: workspace.path,
    writable: [workspace.path, workspace.home, ...(run.statusFile ? [path.dirname(run.statusFile)] : [])],
    readOnly: workspace.readOnly,
    tmpfsBytes: input.walls.tmpfsBytes,
    netDir: network?.room.dir,
  };
  // With walls, the in-pod bridges start first and the agent only once they listen (and, gated, at its slot).
  const agentLine = input.gated ? gatedCommand(invocation.command, invocation.args) : invocation;
  const inner = network ? network.wrap(agentLine.command, agentLine.args) : agentLine;
  const inSandbox = input.sandbox ? input.sandbox.wrap(inner.command, inner.args, view, env) : { command: inner.command, args: inner.args, env, fd3: null };
  return { ...inSandbox, ...input.walls.wrap(inSandbox), stdin: invocation.stdin, cwd: workspace.path };
}
