import fs from 'node:fs';
import type { LaunchOptions, Launched, ProcessLauncher, ProcessResult } from './launcher.ts';

import { signalGroup } from './signals.ts';

export type { ProcessResult } from './launcher.ts';
export { signalGroup } from './signals.ts';

export interface GroupOptions extends LaunchOptions {
  /**
   * The process started is a sandbox (bwrap) whose death ends everything inside it: SIGTERM goes
   * to the other members of its group, so the agent gets its grace period to finish cleanly.
   */
  sandboxed?: boolean;
}

/**
 * A process in its own process group, so stopping it stops everything it started:
 * SIGTERM to the group, then SIGKILL after the grace period.
 */
export class GroupProcess {
  private killTimer: NodeJS.Timeout | null = null;

  private constructor(
    private readonly launched: Launched,
    private readonly sandboxed: boolean,
  ) {}

  /** Starts `command` through the runner's launcher; resolves once it runs (or could not be started). */
  static async start(launcher: ProcessLauncher, command: string, args: string[], options: GroupOptions): Promise<GroupProcess> {
    return new GroupProcess(await launcher.launch(command, args, options), options.sandboxed ?? false);
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
    const pid = this.launched.pid;
    if (pid !== undefined) {
      if (this.sandboxed) signalGroupMembers(pid, 'SIGTERM');
      else signalGroup(pid, 'SIGTERM');
    }
    if (this.killTimer) return;
    this.killTimer = setTimeout(() => this.signal('SIGKILL'), graceMs);
    this.killTimer.unref();
  }

  /** A gated process (./slot-gate.ts): its agent may start now. */
  go(): void {
    this.launched.go();
  }

  signal(signal: NodeJS.Signals): void {
    if (this.launched.pid !== undefined) signalGroup(this.launched.pid, signal);
  }
}


/**
 * Sends `signal` to the members of the process group led by `leader`, the leader excepted: the
 * leader's descendants (from /proc) that are still in its group. Processes that left the group
 * (their own session) are not signalled here; they end when the sandbox does.
 */
export function signalGroupMembers(leader: number, signal: NodeJS.Signals): void {
  for (const pid of descendants(leader)) {
    if (processGroupOf(pid) !== leader) continue;
    try {
      process.kill(pid, signal);
    } catch {
      // Gone meanwhile.
    }
  }
}

function descendants(root: number): number[] {
  const found: number[] = [];
  const queue = [root];
  while (queue.length > 0) {
    const pid = queue.shift()!;
    for (const child of childrenOf(pid)) {
      found.push(child);
      queue.push(child);
    }
  }
  return found;
}

/** The children of process `pid` (from /proc/<pid>/task/<tid>/children). */
export function childrenOf(pid: number): number[] {
  let tasks: string[];
  try {
    tasks = fs.readdirSync(`/proc/${pid}/task`);
  } catch {
    return [];
  }
  return tasks.flatMap((task) => {
    try {
      return fs.readFileSync(`/proc/${pid}/task/${task}/children`, 'utf8').split(' ').filter(Boolean).map(Number);
    } catch {
      return [];
    }
  });
}

function processGroupOf(pid: number): number | null {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command (which may hold spaces and parentheses): state ppid pgrp …
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return Number(fields[2]);
  } catch {
    return null;
  }
}

/**
 * SIGKILL to every process whose environment holds `entry` (e.g. `DROVER_POD_KEY=p-…`). Without a
 * sandbox this is how the processes an agent left behind in sessions of their own (out of reach
 * of a process-group kill) end with its pod; it needs them to run as the runner's own user.
 */
export function killProcessesWithEnv(entry: string): void {
  let names: string[];
  try {
    names = fs.readdirSync('/proc');
  } catch {
    return;
  }
  for (const name of names) {
    if (!/^\d+$/.test(name) || Number(name) === process.pid) continue;
    try {
      if (fs.readFileSync(`/proc/${name}/environ`, 'latin1').split('\0').includes(entry)) process.kill(Number(name), 'SIGKILL');
    } catch {
      // Gone, or not ours to read.
    }
  }
}

/**
 * Whether process group `pid` still exists and is the one the pod's agent led. While its leader
 * lives, /proc says whose it is (the pid may have been reused); once the leader is gone the group
 * can only be ours, since a pid is not reused while a process group of that id exists.
 */
export function abandonedGroupOf(pid: number, key: string): boolean {
  try {
    process.kill(-pid, 0);
  } catch {
    return false;
  }
  let environ: string;
  try {
    environ = fs.readFileSync(`/proc/${pid}/environ`, 'latin1');
  } catch {
    return true; // the leader has exited (or there is no /proc)
  }
  return environ === '' || environ.split('\0').includes(`DROVER_POD_KEY=${key}`);
}
