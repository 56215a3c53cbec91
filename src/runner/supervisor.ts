import path from 'node:path';
import type { ModelCall, PodOutcome, PodReport, PodSpec } from '../protocol/runner-link.ts';
import { outputReader } from '../agents/output/index.ts';
import { AgentJournal } from './agent-journal.ts';
import { ProcessLauncher } from './launcher.ts';
import { PodOutputBuffer } from './pod-output-buffer.ts';
import { abandonedGroupOf, GroupProcess, killProcessesWithEnv, signalGroup, type ProcessResult } from './process-group.ts';
import { RunningPod } from './running-pod.ts';
import { SlotTimes } from './slot-gate.ts';
import { outcomeOfResult, podOutcome } from './pod-outcome.ts';
import { runAutopilot, type AutopilotHost } from './autopilot-run.ts';
import { agentLaunch, type AgentRun } from './agent-launch.ts';
import type { Cgroups } from './limits/cgroups.ts';
import { PodWalls } from './limits/pod-walls.ts';
import type { RunnerNetworkOptions } from './network/index.ts';
import { openPodNetwork } from './network/pod-network.ts';
import type { PodLimits } from './limits/settings.ts';
import type { ModelRelay } from './relay/server.ts';
import type { Sandbox } from './sandbox/index.ts';
import { WorkspaceError, WorkspaceManager, type PreparedWorkspace } from './workspaces.ts';
import { deliverPod } from './delivery/index.ts';
import { removePersistentWorkspace, type WorkspaceRemoval, type WorkspaceRemoved } from './workspace-removal.ts';

/** How many launcher helper processes start a runner's agents (./launcher.ts). */
const LAUNCHER_HELPERS = 4;

export interface SupervisorHooks {
  started(key: string): void;
  output(key: string, data: string): void;
  exited(outcome: PodOutcome): void;
  /** A running pod's count of connections its network walls refused. */
  networkRefused?(key: string, count: number): void;
}

export interface SupervisorOptions {
  workDir: string;
  /** The runner's configured credentials, passed to agents only when a pod names them. */
  credentials: Record<string, string>;
  runnerEnv: NodeJS.ProcessEnv;
  /** Where agents run (docs/runners.md); default: no sandbox. */
  sandbox?: Sandbox;
  /** The pods' network walls (docs/runners.md "Network"); only with the bwrap sandbox. */
  network?: RunnerNetworkOptions | null;
  /** The machine's control groups and the operator's pod limits (docs/runners.md "Limits"). */
  cgroups: Cgroups;
  podLimits: PodLimits;
  hooks: SupervisorHooks;
  /** The runner's model relay: pods' model credentials become placeholders for it. */
  relay?: ModelRelay;
  killGraceMs?: number;
  outputFlushMs?: number;
}

/** Runs the pods of one runner: workspace, agent process(es), output, timeouts, stop. */
export class PodSupervisor {
  private readonly pods = new Map<string, RunningPod>();
  /** Ended pods whose groups, workspace and sockets are still being removed (`tearDown`). */
  private readonly tearingDown = new Set<Promise<void>>();
  private readonly workspaces: WorkspaceManager;
  /** Helpers side by side: a burst of starts waits for several at once (docs/decisions.md "Runners and pods"). */
  private readonly launcher = new ProcessLauncher(LAUNCHER_HELPERS);
  private readonly journal: AgentJournal;
  /** Pods prepared ahead of their slot (./slot-gate.ts): the pods of one slot are let go together. */
  private readonly slots = new SlotTimes();
  private readonly killGraceMs: number;
  private readonly flushMs: number;
  private outputLimit = 0;

  constructor(private readonly options: SupervisorOptions) {
    this.workspaces = new WorkspaceManager(options.workDir, { sandbox: options.sandbox });
    this.journal = new AgentJournal(path.join(options.workDir, 'agents.journal'));
    this.killGraceMs = options.killGraceMs ?? 10_000;
    this.flushMs = options.outputFlushMs ?? 200;
  }

  get sandboxMode(): Sandbox['mode'] {
    return this.options.sandbox?.mode ?? 'none';
  }

  has(key: string): boolean {
    return this.pods.has(key);
  }

  get size(): number {
    return this.pods.size;
  }

  reports(): PodReport[] {
    return [...this.pods.values()].map((p) => ({ key: p.spec.key, state: p.state }));
  }

  /**
   * After a crash of the runner without a sandbox: ends the agents its journal lists as running
   * (SIGKILL to their groups and pods' processes), then removes the pod workspaces left behind.
   */
  private async sweepWorkspaces(): Promise<void> {
    for (const { pid, podKey } of this.journal.open()) {
      if (this.pods.has(podKey)) continue;
      if (abandonedGroupOf(pid, podKey)) signalGroup(pid, 'SIGKILL');
      killProcessesWithEnv(`DROVER_POD_KEY=${podKey}`); // and what left the group
    }
    await this.workspaces.sweep(this.pods.keys());
    await this.options.cgroups.sweep();
  }

  /** Cleans up after an earlier run of the runner and readies the process launcher. */
  async open(): Promise<void> {
    await this.sweepWorkspaces();
    this.launcher.start();
  }

  /** After the pods have ended: stops the process launcher, removes the runner's control groups. */
  async close(): Promise<void> {
    await Promise.all([this.launcher.close(), this.options.cgroups.close()]);
    this.journal.close();
  }

  /** Starts a pod unless it is already here (start requests may repeat). */
  start(spec: PodSpec): void {
    if (this.pods.has(spec.key)) return;
    const output = new PodOutputBuffer((data) => this.options.hooks.output(spec.key, data), this.flushMs);
    const pod = new RunningPod(spec, this.options.workDir, output, this.slots.of(spec));
    this.pods.set(spec.key, pod);
    // The pod's walls go up only once the pods that ended before it was asked for are torn down.
    void this.run(pod, [...this.tearingDown]).then(
      (outcome) => this.finish(pod, outcome),
      (error: unknown) => this.finish(pod, podOutcome(pod, 'failed', null, `runner error: ${(error as Error).message}`)),
    );
  }

  /**
   * After the pod was reported ended (docs/runners.md "What a pod start costs"): its control
   * groups, workspace and network directory are removed, side by side.
   */
  private async tearDown(pod: RunningPod): Promise<void> {
    const { spec, workspace } = pod;
    await Promise.all([
      pod.walls?.close().catch(() => {}),
      workspace && this.workspaces.release(spec.key, { keep: spec.keep_workspace && !spec.persistent_key }).catch(() => {}),
      pod.network?.close().catch(() => {}),
    ]);
    pod.phases.mark('torn-down');
    pod.phases.done();
  }

  stop(key: string, reason: 'terminated' | 'timeout'): void {
    const pod = this.pods.get(key);
    if (!pod || pod.stopReason) return;
    pod.stopReason = reason;
    pod.stopped();
    pod.process?.stop(this.killGraceMs);
  }

  /** A pod over a limit or its budget: its processes are killed now, and it ends `failed` with `message`. */
  private fail(pod: RunningPod, message: string): void {
    if (pod.failure || pod.stopReason) return;
    pod.failure = message;
    pod.stopped();
    pod.process?.stop(0);
  }

  /** Ends running pod `key` as failed with `reason` (the relay refused a call over its budget). */
  failPod(key: string, reason: string): void {
    const pod = this.pods.get(key);
    if (pod) this.fail(pod, reason);
  }

  /** A model call of pod `key` that the relay passed: it counts in the pod's usage. */
  relayed(call: ModelCall): void {
    this.pods.get(call.pod_key)?.results.addRelayed(call);
  }

  /** Stops every pod and waits until all have ended and reported. */
  async stopAll(reason: 'terminated' | 'timeout'): Promise<void> {
    for (const key of [...this.pods.keys()]) this.stop(key, reason);
    await this.idle();
  }

  /** Resolves when no pod is left (or after `timeoutMs`). */
  async idle(timeoutMs = Number.POSITIVE_INFINITY): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    const busy = () => this.pods.size > 0 || this.tearingDown.size > 0;
    while (busy() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    return !busy();
  }

  /** A deleted loop's persistent workspace: once no pod here uses it, delivered and removed (./workspace-removal.ts). */
  async removePersistent(request: WorkspaceRemoval): Promise<WorkspaceRemoved> {
    for (const pod of [...this.pods.values()]) if (pod.spec.persistent_key === request.persistent_key) await pod.ended;
    return removePersistentWorkspace(this.workspaces, request, this.options.sandbox ?? null);
  }

  private finish(pod: RunningPod, outcome: PodOutcome): void {
    pod.end();
    if (pod.timeoutTimer) clearTimeout(pod.timeoutTimer);
    pod.output.end();
    this.options.relay?.detach(pod.spec.key);
    this.pods.delete(pod.spec.key);
    try {
      this.options.hooks.exited({ ...outcome, delivery: pod.delivery });
      pod.phases.mark('exited-sent');
    } finally {
      const torn = this.tearDown(pod);
      this.tearingDown.add(torn);
      void torn.finally(() => this.tearingDown.delete(torn));
    }
  }

  private async run(pod: RunningPod, earlier: Promise<void>[]): Promise<PodOutcome> {
    const spec = pod.spec;
    let workspace: PreparedWorkspace;
    try {
      workspace = pod.workspace = await this.workspaces.prepare({
        podKey: spec.key,
        repo: spec.repo ? { url: spec.repo.url, token: spec.repo.token, defaultBranch: spec.repo.default_branch } : null,
        branch: spec.branch,
        persistentKey: spec.persistent_key,
      });
    } catch (error) {
      const message = error instanceof WorkspaceError ? error.message : `preparing the workspace failed: ${(error as Error).message}`;
      return podOutcome(pod, 'failed', null, message);
    }
    pod.phases.mark('workspace');
    await Promise.all(earlier);
    pod.walls = new PodWalls(this.options.cgroups, this.options.podLimits, spec.key, spec.limits);
    pod.phases.mark('cgroups');
    try {
      if (pod.stopReason) return podOutcome(pod, 'terminated', null, null);
      const network = this.options.sandbox?.mode === 'bwrap' ? (this.options.network ?? null) : null;
      pod.network = await openPodNetwork(network, spec, { note: (text) => pod.output.note(text), refused: (n) => this.options.hooks.networkRefused?.(spec.key, n) });
      pod.phases.mark('network');
      if (spec.pod_timeout_minutes) {
        // Counted from the slot for a pod prepared ahead of it.
        pod.timeoutTimer = setTimeout(() => this.stop(spec.key, 'timeout'), spec.pod_timeout_minutes * 60_000 + Math.max(0, pod.slot?.remaining() ?? 0));
        pod.timeoutTimer.unref();
      }
      const outcome = spec.mode === 'autopilot' ? await runAutopilot(this.autopilotHost, pod, workspace) : await this.runDirect(pod, workspace);
      if (!spec.auto_close && outcome.outcome === 'completed' && !pod.stopReason) {
        // auto_close false: the pod stays up, workspace and all, until it is terminated.
        await pod.stopRequested;
        return podOutcome(pod, 'terminated', outcome.exit_code, null);
      }
      return outcome;
    } finally {
      // However the pod ended, its work is taken before its workspace goes.
      pod.delivery = await deliverPod(spec, workspace, { sandbox: this.options.sandbox ?? null, outDir: this.workspaces.deliveryDir(spec.key) });
      if (spec.persistent_key) await this.workspaces.markDelivered(spec.persistent_key, pod.delivery).catch(() => {});
      // auto_close false keeps the workspace while the pod stays up (the wait above), not after
      // it was terminated: nothing would ever remove it then. A persistent workspace outlives the
      // pod (release removes only the pod's own state then): `tearDown`, once the end is reported.
      pod.walls.stopWatching();
      pod.phases.mark('delivered');
    }
  }

  private readonly autopilotHost: AutopilotHost = {
    stateDir: (key) => this.workspaces.stateDir(key),
    killGraceMs: () => this.killGraceMs,
    loopSession: (pod, workspace) => this.loopSession(pod, workspace),
    runAgent: (pod, workspace, run) => this.runAgent(pod, workspace, run),
    outcome: podOutcome,
    fromResult: outcomeOfResult,
  };

  private async runDirect(pod: RunningPod, workspace: PreparedWorkspace): Promise<PodOutcome> {
    const result = await this.runAgent(pod, workspace, { prompt: pod.spec.prompt, resumeSessionId: this.loopSession(pod, workspace), statusFile: null, iteration: null });
    return outcomeOfResult(pod, result);
  }

  /**
   * The session of the loop's previous run to resume (loop session_persistence): only in the
   * loop's persistent workspace as it was left, since the agent keeps its sessions under that HOME
   * (a fresh workspace, made because the sandbox moved or its repository changed, has none).
   */
  private loopSession(pod: RunningPod, workspace: PreparedWorkspace): string | null {
    return pod.spec.persistent_key !== null && workspace.reused ? pod.spec.resume_session_id : null;
  }

  private async runAgent(pod: RunningPod, workspace: PreparedWorkspace, run: AgentRun): Promise<ProcessResult> {
    const spec = pod.spec;
    const sandbox = this.options.sandbox;
    // Prepared ahead of its slot (docs/runners.md "Pods prepared ahead of their slot"): the sandbox now, the agent at the slot.
    const gated = (pod.slot?.remaining() ?? 0) > 0;
    const launch = await agentLaunch({
      gated,
      spec,
      workspace,
      run,
      runnerEnv: this.options.runnerEnv,
      credentials: this.options.credentials,
      sandbox,
      walls: pod.walls!,
      relay: this.options.relay,
      network: pod.network,
      note: (text) => pod.output.note(text),
    });
    pod.phases.mark('launch-built');
    if ('spawnError' in launch) return { code: null, signal: null, spawnError: launch.spawnError };
    // A custom agent's output is its own business: only built-in agents' formats are read.
    const reader = outputReader(spec.agent.custom ? '' : spec.agent.slug);
    const child = await GroupProcess.start(this.launcher, launch.command, launch.args, {
      cwd: launch.cwd,
      env: launch.env,
      fd3: launch.fd3,
      stdin: launch.stdin,
      onOutput: (text, stream) => {
        if (stream === 'stdout') reader.write(text);
        pod.output.add(text);
      },
      onDropped: (bytes) => pod.output.dropped(bytes, this.outputLimit),
      sandboxed: sandbox?.mode === 'bwrap',
      gated,
    });
    pod.process = child;
    pod.phases.mark('spawned');
    // Only the agent grows the pod's disk, from its spawn on: the watch starts then, not while the
    // rest of a burst is still being prepared (docs/runners.md "What a pod start costs").
    pod.walls!.watchDisk([workspace.path, workspace.home], (message) => this.fail(pod, message));
    if (child.pid !== undefined) this.journal.started(child.pid, spec.key);
    if (pod.stopReason || pod.failure) child.stop(this.killGraceMs);
    // Gated: stopped before its slot, the agent never runs (its wrapper ends with the sandbox).
    const agentStarts = !gated || (!pod.stopReason && !pod.failure && !(await pod.slot!.reached(pod.stopRequested)));
    if (gated && agentStarts) {
      child.go();
      pod.phases.mark('slot');
    }
    if (agentStarts && pod.state === 'preparing' && child.pid !== undefined) {
      pod.state = 'running';
      this.options.hooks.started(spec.key);
    }
    const result = await child.done;
    pod.phases.mark('agent-exited');
    // In a sandbox nothing outlives the agent; without one, what left its process group must go too.
    if (!sandbox || sandbox.mode === 'none') killProcessesWithEnv(`DROVER_POD_KEY=${spec.key}`);
    if (child.pid !== undefined) this.journal.ended(child.pid);
    pod.process = null;
    pod.failure ??= pod.walls!.memoryFailure();
    pod.results.add(reader.end());
    return result;
  }

  /** The output quota (bytes/s per agent, 0: none): the launcher drops the excess as it reads it. */
  setOutputLimit(bytesPerSec: number): void {
    this.outputLimit = bytesPerSec;
    this.launcher.setOutputLimit(bytesPerSec);
  }
}
