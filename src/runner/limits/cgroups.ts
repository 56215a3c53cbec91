/**
 * Per-pod control groups (docs/runners.md "Limits"): memory, pids and CPU through the kernel,
 * behind one interface for both cgroup versions.
 *
 * - v1 (this project's machines, as root): one directory per pod in each of the memory, pids and
 *   cpu hierarchies, below the runner's own group there;
 * - v2: one directory per pod below a delegated subtree (DROVER_RUNNER_CGROUP, else the runner's
 *   own group), with the controllers enabled for it.
 *
 * A pod's groups live below `drover-<id of the work dir>`, so a runner's start removes what an
 * earlier run of the same runner left (`sweep`) and never touches another runner's.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { PodLimits } from './settings.ts';

export interface Enforced {
  memory: boolean;
  pids: boolean;
  cpu: boolean;
}

export interface PodCgroup {
  /** The `cgroup.procs` files the pod's first process joins before it runs anything (./pod-walls.ts). */
  readonly procsFiles: string[];
  /** Whether the kernel killed a process of the pod for going over its memory limit. */
  oomKilled(): boolean;
  /** Kills what is left in the groups and removes them. */
  destroy(): Promise<void>;
}

export interface Cgroups {
  readonly version: 'v1' | 'v2' | null;
  readonly enforced: Enforced;
  /** The groups of one pod with `limits` applied; null when nothing can be enforced here. */
  create(name: string, limits: PodLimits): PodCgroup | null;
  /** Removes the groups an earlier run of this runner left behind. */
  sweep(): Promise<void>;
  /** At the runner's stop: removes every group of its pods and its own parent group(s). */
  close(): Promise<void>;
}

const MIB = 1024 * 1024;
const CPU_PERIOD_US = 100_000;

const NONE: Enforced = { memory: false, pids: false, cpu: false };

/**
 * The file operations on a cgroup filesystem mounted at `root`: the kernel's at /sys/fs/cgroup,
 * or one a unit test lays out in a temporary directory (test/runner/cgroups-v2.test.ts: the v2
 * code path, which this project's v1 machines cannot run for real; docs/runners.md "Limits").
 */
export interface CgroupFs {
  readonly root: string;
  /** The file's text, or '' when it cannot be read. */
  read(file: string): string;
  /** Whether the write was taken. */
  write(file: string, value: string): boolean;
  /** Makes a group (and the groups leading to it); throws as mkdir does. */
  mkdir(dir: string): void;
  /** Removes an empty group; throws as rmdir does (EBUSY while processes are in it). */
  rmdir(dir: string): void;
  exists(file: string): boolean;
  /** The child groups of a group. */
  children(dir: string): string[];
}

export const kernelCgroupFs: CgroupFs = {
  root: '/sys/fs/cgroup',
  read(file) {
    try {
      return fs.readFileSync(file, 'utf8');
    } catch {
      return '';
    }
  },
  write(file, value) {
    try {
      fs.writeFileSync(file, value);
      return true;
    } catch {
      return false;
    }
  },
  mkdir: (dir) => void fs.mkdirSync(dir, { recursive: true }),
  rmdir: (dir) => fs.rmdirSync(dir),
  exists: (file) => fs.existsSync(file),
  children(dir) {
    try {
      return fs
        .readdirSync(dir, { withFileTypes: true })
        .filter((entry) => entry.isDirectory())
        .map((entry) => path.join(dir, entry.name));
    } catch {
      return [];
    }
  },
};

/** The runner's own group in each hierarchy, from /proc/self/cgroup (`v2` under the key ''). */
function ownGroups(): Map<string, string> {
  const groups = new Map<string, string>();
  for (const line of kernelCgroupFs.read('/proc/self/cgroup').split('\n')) {
    const [, controllers, group] = line.split(':');
    if (group === undefined) continue;
    for (const controller of controllers.split(',')) groups.set(controller, group);
  }
  return groups;
}

/**
 * SIGKILL to every process in the groups until they are empty, then removes the directories
 * (deepest first). A pod's processes are usually gone already (its sandbox ended), or exiting:
 * the removal is tried again after 1 ms, then after twice as long each time, up to 50 ms.
 */
async function killAndRemove(cgfs: CgroupFs, dirs: string[]): Promise<void> {
  const deadline = Date.now() + 10_000;
  for (const dir of dirs) {
    for (let wait = 1; ; wait = Math.min(50, wait * 2)) {
      const pids = cgfs.read(path.join(dir, 'cgroup.procs')).split('\n').filter(Boolean).map(Number);
      for (const pid of pids) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          // Gone meanwhile.
        }
      }
      try {
        cgfs.rmdir(dir);
        break;
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code;
        if (code === 'ENOENT' || Date.now() > deadline) break;
        await new Promise((resolve) => setTimeout(resolve, wait));
      }
    }
  }
}

function baseName(workDir: string): string {
  return `drover-${createHash('sha256').update(workDir).digest('hex').slice(0, 12)}`;
}

/** cgroup v1: a hierarchy per controller. */
class CgroupsV1 implements Cgroups {
  readonly version = 'v1' as const;
  readonly enforced: Enforced;
  private readonly bases: Partial<Record<keyof Enforced, string>> = {};

  constructor(
    private readonly cgfs: CgroupFs,
    workDir: string,
  ) {
    const own = ownGroups();
    const hierarchies: Record<keyof Enforced, string> = { memory: 'memory', pids: 'pids', cpu: 'cpu' };
    const enforced = { ...NONE };
    for (const [what, controller] of Object.entries(hierarchies) as [keyof Enforced, string][]) {
      const mount = path.join(cgfs.root, controller);
      if (!cgfs.exists(path.join(mount, 'cgroup.procs'))) continue;
      const base = path.join(mount, own.get(controller) ?? '/', baseName(workDir));
      try {
        cgfs.mkdir(base);
      } catch {
        continue;
      }
      this.bases[what] = base;
      enforced[what] = selfTestV1(cgfs, base, what);
    }
    this.enforced = enforced;
  }

  create(name: string, limits: PodLimits): PodCgroup | null {
    const { read, write } = this.cgfs;
    const dirs: string[] = [];
    const make = (what: keyof Enforced): string | null => {
      const base = this.bases[what];
      if (!base || !this.enforced[what]) return null;
      const dir = path.join(base, name);
      this.cgfs.mkdir(dir);
      dirs.push(dir);
      return dir;
    };
    const memory = make('memory');
    if (memory) {
      write(path.join(memory, 'memory.swappiness'), '0');
      write(path.join(memory, 'memory.limit_in_bytes'), String(limits.memory_mb * MIB));
      // With swap the pod could go past its limit into it: memory and swap together are capped too.
      write(path.join(memory, 'memory.memsw.limit_in_bytes'), String(limits.memory_mb * MIB));
    }
    const pids = make('pids');
    if (pids) write(path.join(pids, 'pids.max'), String(limits.pids));
    const cpu = make('cpu');
    if (cpu) {
      write(path.join(cpu, 'cpu.cfs_period_us'), String(CPU_PERIOD_US));
      write(path.join(cpu, 'cpu.cfs_quota_us'), limits.cpus === null ? '-1' : String(Math.max(1000, Math.round(limits.cpus * CPU_PERIOD_US))));
    }
    if (dirs.length === 0) return null;
    return {
      procsFiles: dirs.map((dir) => path.join(dir, 'cgroup.procs')),
      oomKilled: () => {
        if (!memory) return false;
        const control = read(path.join(memory, 'memory.oom_control'));
        const kills = /^oom_kill (\d+)$/m.exec(control);
        if (kills) return Number(kills[1]) > 0;
        return Number(read(path.join(memory, 'memory.failcnt')).trim() || '0') > 0;
      },
      destroy: () => killAndRemove(this.cgfs, dirs),
    };
  }

  async sweep(): Promise<void> {
    for (const base of Object.values(this.bases)) await killAndRemove(this.cgfs, this.cgfs.children(base));
  }

  async close(): Promise<void> {
    await this.sweep();
    await killAndRemove(this.cgfs, Object.values(this.bases));
  }
}

/** Can a group below `base` be made, limited and removed? */
function selfTestV1(cgfs: CgroupFs, base: string, what: keyof Enforced): boolean {
  const { read, write } = cgfs;
  const dir = path.join(base, `self-test-${process.pid}`);
  try {
    cgfs.mkdir(dir);
  } catch {
    return false;
  }
  const file = { memory: 'memory.limit_in_bytes', pids: 'pids.max', cpu: 'cpu.cfs_quota_us' }[what];
  const value = { memory: String(64 * MIB), pids: '64', cpu: '50000' }[what];
  const ok = write(path.join(dir, file), value) && read(path.join(dir, file)).trim() === value;
  try {
    cgfs.rmdir(dir);
  } catch {
    // Left for the next sweep.
  }
  return ok;
}

/** cgroup v2: one unified hierarchy; the runner needs a delegated subtree it may write. */
class CgroupsV2 implements Cgroups {
  readonly version = 'v2' as const;
  readonly enforced: Enforced = { ...NONE };
  private readonly base: string | null = null;

  constructor(
    private readonly cgfs: CgroupFs,
    workDir: string,
    delegated: string | undefined,
  ) {
    const { read, write } = cgfs;
    const root = delegated ?? path.join(cgfs.root, ownGroups().get('') ?? '/');
    const base = path.join(root, baseName(workDir));
    try {
      cgfs.mkdir(base);
    } catch {
      return;
    }
    // The controllers must be enabled on every level down to the pods' groups (a group with
    // processes of its own cannot pass them on: the runner's group must be a delegated one).
    const available = read(path.join(root, 'cgroup.controllers')).split(/\s+/);
    const wanted = ['memory', 'pids', 'cpu'].filter((c) => available.includes(c));
    for (const dir of [root, base]) write(path.join(dir, 'cgroup.subtree_control'), wanted.map((c) => `+${c}`).join(' '));
    const enabled = read(path.join(base, 'cgroup.subtree_control')).split(/\s+/);
    this.enforced = { memory: enabled.includes('memory'), pids: enabled.includes('pids'), cpu: enabled.includes('cpu') };
    this.base = base;
  }

  create(name: string, limits: PodLimits): PodCgroup | null {
    if (!this.base || !Object.values(this.enforced).some(Boolean)) return null;
    const { read, write } = this.cgfs;
    const dir = path.join(this.base, name);
    this.cgfs.mkdir(dir);
    if (this.enforced.memory) {
      write(path.join(dir, 'memory.max'), String(limits.memory_mb * MIB));
      write(path.join(dir, 'memory.swap.max'), '0');
    }
    if (this.enforced.pids) write(path.join(dir, 'pids.max'), String(limits.pids));
    if (this.enforced.cpu) write(path.join(dir, 'cpu.max'), limits.cpus === null ? `max ${CPU_PERIOD_US}` : `${Math.max(1000, Math.round(limits.cpus * CPU_PERIOD_US))} ${CPU_PERIOD_US}`);
    return {
      procsFiles: [path.join(dir, 'cgroup.procs')],
      oomKilled: () => Number(/^oom_kill (\d+)$/m.exec(read(path.join(dir, 'memory.events')))?.[1] ?? '0') > 0,
      destroy: () => killAndRemove(this.cgfs, [dir]),
    };
  }

  async sweep(): Promise<void> {
    if (this.base) await killAndRemove(this.cgfs, this.cgfs.children(this.base));
  }

  async close(): Promise<void> {
    await this.sweep();
    if (this.base) await killAndRemove(this.cgfs, [this.base]);
  }
}

const noCgroups: Cgroups = { version: null, enforced: NONE, create: () => null, sweep: async () => {}, close: async () => {} };

/** The groups a runner of `workDir` running in this process's own groups has made and not removed (none once it has closed). */
export function runnerCgroupDirs(workDir: string, delegated?: string, cgfs: CgroupFs = kernelCgroupFs): string[] {
  const own = ownGroups();
  const bases = cgfs.exists(path.join(cgfs.root, 'cgroup.controllers'))
    ? [path.join(delegated ?? path.join(cgfs.root, own.get('') ?? '/'), baseName(workDir))]
    : ['memory', 'pids', 'cpu'].map((controller) => path.join(cgfs.root, controller, own.get(controller) ?? '/', baseName(workDir)));
  return bases.filter((dir) => cgfs.exists(dir));
}

/**
 * After a runner of `workDir` died without closing (SIGKILL): kills what is left in its groups and
 * removes them, its parent groups too. For a runner that ran in this process's own groups (tests,
 * and a supervisor that restarts a runner); a no-op where there are none.
 */
export async function removeRunnerCgroups(workDir: string, delegated?: string, cgfs: CgroupFs = kernelCgroupFs): Promise<void> {
  for (const base of runnerCgroupDirs(workDir, delegated, cgfs)) {
    await killAndRemove(cgfs, cgfs.children(base));
    await killAndRemove(cgfs, [base]);
  }
}

/**
 * The control groups this machine offers the runner: v2 when it is the only hierarchy, else v1, else
 * none. `cgfs`: the kernel's cgroup filesystem unless a test gives one of its own.
 */
export function openCgroups(workDir: string, delegated?: string, cgfs: CgroupFs = kernelCgroupFs): Cgroups {
  if (cgfs.exists(path.join(cgfs.root, 'cgroup.controllers'))) return new CgroupsV2(cgfs, workDir, delegated);
  if (cgfs.exists(path.join(cgfs.root, 'memory')) || cgfs.exists(path.join(cgfs.root, 'pids'))) return new CgroupsV1(cgfs, workDir);
  return noCgroups;
}
