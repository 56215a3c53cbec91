/**
 * An autopilot pod's runs of its agent (docs/api.md): iterations in one workspace until the agent
 * reports done or failed, each told what the previous one reported.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { PodOutcome } from '../protocol/runner-link.ts';
import { autopilotPrompt, type AutopilotIteration, type ReportWay } from '../agents/autopilot.ts';
import { supportsMcp } from '../agents/mcp.ts';
import { supportsResume } from '../agents/builtin.ts';
import type { AgentRun } from './agent-launch.ts';
import type { ProcessResult } from './process-group.ts';
import type { RunningPod } from './running-pod.ts';
import { readStatus } from './status-file.ts';
import type { PreparedWorkspace } from './workspaces.ts';

/** What the loop needs of the supervisor. */
export interface AutopilotHost {
  /** The pod's state directory (its status file's). */
  stateDir(key: string): string;
  killGraceMs(): number;
  /** The loop's session to resume in the first iteration, or null. */
  loopSession(pod: RunningPod, workspace: PreparedWorkspace): string | null;
  runAgent(pod: RunningPod, workspace: PreparedWorkspace, run: AgentRun): Promise<ProcessResult>;
  outcome(pod: RunningPod, outcome: PodOutcome['outcome'], exitCode: number | null, error: string | null): PodOutcome;
  fromResult(pod: RunningPod, result: ProcessResult): PodOutcome;
}

/** Autopilot (docs/api.md): iterations in one workspace until the agent reports done or failed. */
export async function runAutopilot(host: AutopilotHost, pod: RunningPod, workspace: PreparedWorkspace): Promise<PodOutcome> {
  const spec = pod.spec;
  const stateDir = host.stateDir(spec.key);
  fs.mkdirSync(stateDir, { recursive: true });
  const statusFile = path.join(stateDir, 'status.json');
  const agent = { slug: spec.agent.slug, custom: spec.agent.custom !== null };
  const canResume = !agent.custom && supportsResume(spec.agent.slug);
  // Agents with the drover MCP server may report through its report_status tool too.
  const reportWays: ReportWay[] = !agent.custom && spec.mcp !== false && supportsMcp(spec.agent.slug) ? ['mcp_tool', 'status_file'] : ['status_file'];
  let previous: AutopilotIteration['previous'] = null;
  try {
    for (let iteration = 1; iteration <= spec.max_iterations; iteration++) {
      fs.rmSync(statusFile, { recursive: true, force: true }); // whatever the agent left there
      // From iteration 2 on, an agent that can resume continues its own session (the one it
      // reported last); one that cannot is given the task again (autopilot.ts).
      const ownSession = iteration > 1 && canResume ? pod.results.get().session_id : null;
      const resumeSessionId = iteration === 1 ? host.loopSession(pod, workspace) : ownSession;
      const turn = { iteration, maxIterations: spec.max_iterations, previous, ways: reportWays };
      const prompt = autopilotPrompt(agent, spec.prompt, turn, ownSession !== null);
      let timedOut = false;
      const timer = setTimeout(() => {
        timedOut = true;
        pod.process?.stop(host.killGraceMs());
      }, spec.iteration_timeout_sec * 1000);
      timer.unref();
      const result = await host.runAgent(pod, workspace, { prompt, resumeSessionId, statusFile, iteration }).finally(() => clearTimeout(timer));
      if (pod.stopReason) return host.outcome(pod, 'terminated', result.code, null);
      if (pod.failure) return host.outcome(pod, 'failed', result.code, null);
      if (timedOut) return host.outcome(pod, 'failed', result.code, `iteration ${iteration} exceeded iteration_timeout_sec (${spec.iteration_timeout_sec} s)`);
      if (result.spawnError) return host.outcome(pod, 'failed', null, result.spawnError);
      const status = readStatus(statusFile);
      previous = status ? { status: status.status, summary: status.summary ?? null } : null;
      if (status?.status === 'done') return host.outcome(pod, 'completed', result.code, null);
      if (status?.status === 'failed') return host.outcome(pod, 'failed', result.code, status.summary || `the agent reported failure in iteration ${iteration}`);
      if (!status && result.code !== 0) return host.fromResult(pod, result);
    }
    return host.outcome(pod, 'completed', 0, `max_iterations (${spec.max_iterations}) reached without the agent reporting done`);
  } finally {
    fs.rmSync(stateDir, { recursive: true, force: true });
  }
}
