/**
 * The limits of one pod while it runs (docs/runners.md "Limits"): its control groups, which every
 * process of the pod joins before it runs anything, and the watch on its disk use.
 */
import type { PodLimitsRequest } from '../../protocol/runner-link.ts';
import type { Cgroups, PodCgroup } from './cgroups.ts';
import { watchDisk } from './disk-usage.ts';
import { effectiveLimits, type PodLimits } from './settings.ts';

const MIB = 1024 * 1024;

/**
 * Puts itself into each cgroup.procs file named before `--`, then becomes the command after it
 * (bwrap, or the agent without a sandbox): the pod's first instruction already runs limited.
 */
const JOIN_SCRIPT = 'while [ "$1" != -- ]; do echo $$ > "$1" || exit 125; shift; done; shift; exec "$@"';

export interface LaunchLine {
  command: string;
  args: string[];
}

export class PodWalls {
  readonly limits: PodLimits;
  private readonly cgroup: PodCgroup | null;
  private disk: { stop(): void } | null = null;

  constructor(cgroups: Cgroups, operator: PodLimits, name: string, request: PodLimitsRequest | undefined) {
    this.limits = effectiveLimits(operator, request);
    this.cgroup = cgroups.create(name, this.limits);
  }

  /** The size of the pod's /tmp and /dev/shm: within its memory limit, which their pages count against. */
  get tmpfsBytes(): number {
    return this.limits.memory_mb * MIB;
  }

  /** `line`, started so that it runs inside the pod's control groups from its first instruction. */
  wrap(line: LaunchLine): LaunchLine {
    if (!this.cgroup) return line;
    return { command: '/bin/sh', args: ['-c', JOIN_SCRIPT, 'drover-pod', ...this.cgroup.procsFiles, '--', line.command, ...line.args] };
  }

  /**
   * Watches the disk use of `roots` (workspace and HOME); `exceeded` is called once it is over the
   * limit. Called again (an autopilot pod's next agent run), the watch already running goes on.
   */
  watchDisk(roots: string[], exceeded: (message: string) => void): void {
    if (this.disk) return;
    this.disk = watchDisk(roots, this.limits.disk_mb * MIB, () => exceeded(`disk limit (${this.limits.disk_mb} MiB) exceeded`));
  }

  /** The error of a pod the kernel killed a process of for its memory, or null. */
  memoryFailure(): string | null {
    return this.cgroup?.oomKilled() ? `memory limit (${this.limits.memory_mb} MiB) exceeded` : null;
  }

  /** Stops the disk watch (the pod's agent is done). */
  stopWatching(): void {
    this.disk?.stop();
  }

  async close(): Promise<void> {
    this.stopWatching();
    await this.cgroup?.destroy();
  }
}
