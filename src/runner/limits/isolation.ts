/**
 * What a runner can enforce around each pod (docs/runners.md "Isolation"), reported in its hello
 * and shown on the runner record: each wall is true only when the runner's own check passed here.
 */
import { spawn } from 'node:child_process';
import type { Isolation } from '../../protocol/runner-link.ts';
import { findExecutable } from '../../agents/detect.ts';
import { hostEnv, type SandboxMode } from '../sandbox/index.ts';
import type { Cgroups } from './cgroups.ts';

export interface IsolationProbe {
  sandbox: SandboxMode;
  cgroups: Cgroups;
  pathEnv: string;
  bwrap?: string;
  /**
   * Whether the runner has set up its pods' network walls (network namespace and egress proxy);
   * when given, it decides `network`. Without it, whether bubblewrap can make a network namespace here.
   */
  podNetwork?: boolean;
}

/** The walls this runner puts up; `--sandbox none` has no network namespace, whatever the machine can do. */
export async function probeIsolation(probe: IsolationProbe): Promise<Isolation> {
  const network = probe.sandbox === 'bwrap' && (probe.podNetwork ?? (await networkNamespaceWorks(probe.bwrap ?? 'bwrap', probe.pathEnv)));
  const { memory, pids, cpu } = probe.cgroups.enforced;
  // The disk watch walks the pod's workspace and HOME from the runner itself: it needs nothing of the machine.
  return { network, memory, pids, cpu, disk: true };
}

/** The warn line a runner logs at start, or null when it enforces every wall. */
export function isolationWarning(isolation: Isolation): string | null {
  const missing = (Object.keys(isolation) as (keyof Isolation)[]).filter((wall) => !isolation[wall]);
  if (missing.length === 0) return null;
  return `warning: this runner cannot enforce the pod walls: ${missing.join(', ')} (docs/runners.md "Isolation")`;
}

/** Whether bubblewrap can give a process its own, empty network namespace on this machine. */
async function networkNamespaceWorks(program: string, pathEnv: string): Promise<boolean> {
  const bwrap = await findExecutable(program, pathEnv);
  if (!bwrap) return false;
  return new Promise((resolve) => {
    const args = ['--unshare-user', '--unshare-net', '--ro-bind', '/', '/', '--dev', '/dev', '--', 'true'];
    const child = spawn(bwrap, args, { env: hostEnv(pathEnv), stdio: 'ignore' });
    child.on('error', () => resolve(false));
    child.on('exit', (code) => resolve(code === 0));
  });
}
