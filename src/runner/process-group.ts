import type { LaunchOptions, Launched, ProcessLauncher, ProcessResult } from './launcher.ts';

export type { ProcessResult } from './launcher.ts';

/**
 * A process in its own process group, so stopping it stops everything it started:
 * SIGTERM to the group, then SIGKILL after the grace period.
 */
export class GroupProcess {
  private killTimer: NodeJS.Timeout | null = null;

  private constructor(private readonly launched: Launched) {}

  /** Starts `command` through the runner's launcher; resolves once it runs (or could not be started). */
  static async start(launcher: ProcessLauncher, command: string, args: string[], options: LaunchOptions): Promise<GroupProcess> {
    return new GroupProcess(await launcher.launch(command, args, options));
  }

  get pid(): number | undefined {
    return this.launched.pid;
  }

  get done(): Promise<ProcessResult> {
    return this.launched.done;
  }

  /**
   * SIGTERM to the group now, SIGKILL after `graceMs` if it is still there: also when the leader
   * has ended by then, since another member of the group may ignore SIGTERM (a process group id
   * is not reused while any member lives).
   */
  stop(graceMs: number): void {
    this.signal('SIGTERM');
    if (this.killTimer) return;
    this.killTimer = setTimeout(() => this.signal('SIGKILL'), graceMs);
    this.killTimer.unref();
  }

  signal(signal: NodeJS.Signals): void {
    if (this.launched.pid !== undefined) signalGroup(this.launched.pid, signal);
  }
}

/** Sends `signal` to the process group led by `pid`; a group that is gone already is no error. */
export function signalGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    // The group is already gone.
  }
}
