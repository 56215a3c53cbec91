/**
 * The cgroup v2 code path of the pod limits (docs/runners.md "Limits"), which this project's
 * machines (cgroup v1 only) cannot run for real: against a temporary directory laid out like a
 * delegated cgroup2 subtree, behind a CgroupFs that answers as the kernel's cgroup2 filesystem
 * does (a new group gets its interface files and the controllers its parent passes on;
 * `cgroup.subtree_control` takes only available controllers and reads back without the `+`;
 * interface files cannot be created; a group is removed with its files, not while it has
 * processes or child groups). The pod's first process joins through the real launch line
 * (PodWalls.wrap, a real `sh`), which writes its pid into `cgroup.procs`.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { kernelCgroupFs, openCgroups, removeRunnerCgroups, type CgroupFs } from '../../src/runner/limits/cgroups.ts';
import { PodWalls } from '../../src/runner/limits/pod-walls.ts';
import type { PodLimits } from '../../src/runner/limits/settings.ts';

const INTERFACE = ['cgroup.procs', 'cgroup.controllers', 'cgroup.subtree_control', 'cgroup.events'];
// cgroup.controllers is a file at every level (its content is computed: see `controllers`).
const PER_CONTROLLER: Record<string, Record<string, string>> = {
  memory: { 'memory.max': 'max\n', 'memory.swap.max': 'max\n', 'memory.events': 'low 0\nhigh 0\nmax 0\noom 0\noom_kill 0\n' },
  pids: { 'pids.max': 'max\n' },
  cpu: { 'cpu.max': 'max 100000\n' },
};

/** A cgroup2 filesystem in `root`, with the kernel's rules for what is created, written and removed. */
function fakeCgroup2(root: string, available: string[]): CgroupFs {
  const words = (text: string) => text.split(/\s+/).filter(Boolean);
  // A group's controllers are what its parent passes on, at every moment (the root has them all).
  const controllers = (dir: string): string[] => (dir === root ? available : words(kernelCgroupFs.read(path.join(path.dirname(dir), 'cgroup.subtree_control'))));
  // A controller's files show only in the groups that have it.
  const owner = (file: string) => PER_CONTROLLER[path.basename(file).split('.')[0]] && path.basename(file).split('.')[0];
  const visible = (file: string) => fs.existsSync(file) && (!owner(file) || controllers(path.dirname(file)).includes(owner(file)));
  const cgfs: CgroupFs = {
    root,
    read: (file) => (path.basename(file) === 'cgroup.controllers' ? `${controllers(path.dirname(file)).join(' ')}\n` : visible(file) ? kernelCgroupFs.read(file) : ''),
    exists: (file) => path.basename(file) === 'cgroup.controllers' ? fs.existsSync(path.dirname(file)) && fs.existsSync(file) : visible(file),
    children: kernelCgroupFs.children,
    write(file, value) {
      // The kernel has no file to create: only existing interface files take writes.
      if (!visible(file) || path.basename(file) === 'cgroup.controllers') return false;
      if (path.basename(file) === 'cgroup.subtree_control') {
        const enabled = new Set(words(kernelCgroupFs.read(file)));
        for (const token of words(value)) {
          const name = token.slice(1);
          if (!controllers(path.dirname(file)).includes(name)) return false;
          if (token[0] === '+') enabled.add(name);
          else enabled.delete(name);
        }
        fs.writeFileSync(file, [...enabled].join(' ') + '\n');
      } else if (path.basename(file) === 'cgroup.procs') fs.appendFileSync(file, `${value.trim()}\n`);
      else fs.writeFileSync(file, value);
      return true;
    },
    mkdir(dir) {
      const parent = path.dirname(dir);
      if (!fs.existsSync(parent)) cgfs.mkdir(parent);
      if (fs.existsSync(dir)) return;
      fs.mkdirSync(dir);
      for (const name of INTERFACE) fs.writeFileSync(path.join(dir, name), '');
      for (const files of Object.values(PER_CONTROLLER)) for (const [name, value] of Object.entries(files)) fs.writeFileSync(path.join(dir, name), value);
    },
    rmdir(dir) {
      if (!fs.existsSync(dir)) throw Object.assign(new Error(`ENOENT: ${dir}`), { code: 'ENOENT' });
      if (cgfs.children(dir).length > 0 || words(kernelCgroupFs.read(path.join(dir, 'cgroup.procs'))).length > 0) throw Object.assign(new Error(`EBUSY: ${dir}`), { code: 'EBUSY' });
      fs.rmSync(dir, { recursive: true });
    },
  };
  fs.mkdirSync(path.dirname(root), { recursive: true });
  cgfs.mkdir(root);
  return cgfs;
}

const LIMITS: PodLimits = { memory_mb: 256, pids: 64, cpus: 1.5, disk_mb: 40 };

describe('cgroup v2 (a delegated subtree laid out in a temporary directory)', () => {
  let scratch: string;
  let delegated: string;
  let cgfs: ReturnType<typeof fakeCgroup2>;

  beforeEach(() => {
    scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'drover-cgroup2-'));
    cgfs = fakeCgroup2(path.join(scratch, 'sys-fs-cgroup'), ['cpuset', 'cpu', 'io', 'memory', 'pids']);
    // What systemd's Delegate=yes leaves: every level down to the unit's group passes the controllers on.
    expect(cgfs.write(path.join(cgfs.root, 'cgroup.subtree_control'), '+cpu +memory +pids +io')).toBe(true);
    cgfs.mkdir(path.join(cgfs.root, 'system.slice'));
    expect(cgfs.write(path.join(cgfs.root, 'system.slice', 'cgroup.subtree_control'), '+cpu +memory +pids')).toBe(true);
    delegated = path.join(cgfs.root, 'system.slice', 'drover-runner.service');
    cgfs.mkdir(delegated);
    cgfs.mkdir(path.join(cgfs.root, 'user.slice'));
  });
  afterEach(() => fs.rmSync(scratch, { recursive: true, force: true }));

  it('is chosen when the hierarchy is unified, and enables memory, pids and cpu down to the pods', () => {
    const cgroups = openCgroups('/var/lib/drover-runner', delegated, cgfs);
    expect(cgroups.version).toBe('v2');
    expect(cgroups.enforced).toEqual({ memory: true, pids: true, cpu: true });
    const [base] = cgfs.children(delegated);
    expect(path.basename(base)).toMatch(/^drover-[0-9a-f]{12}$/);
    expect(cgfs.read(path.join(delegated, 'cgroup.subtree_control')).split(/\s+/).filter(Boolean).sort()).toEqual(['cpu', 'memory', 'pids']);
    expect(cgfs.read(path.join(base, 'cgroup.subtree_control')).split(/\s+/).filter(Boolean).sort()).toEqual(['cpu', 'memory', 'pids']);
  });

  it("writes a pod's memory.max, memory.swap.max, pids.max and cpu.max, and its first process joins cgroup.procs", () => {
    const cgroups = openCgroups('/var/lib/drover-runner', delegated, cgfs);
    const walls = new PodWalls(cgroups, LIMITS, 'p-abc', undefined);
    const [base] = cgfs.children(delegated);
    const pod = path.join(base, 'p-abc');
    expect(cgfs.read(path.join(pod, 'memory.max'))).toBe(String(256 * 1024 * 1024));
    expect(cgfs.read(path.join(pod, 'memory.swap.max'))).toBe('0');
    expect(cgfs.read(path.join(pod, 'pids.max'))).toBe('64');
    expect(cgfs.read(path.join(pod, 'cpu.max'))).toBe('150000 100000');

    const line = walls.wrap({ command: '/bin/sh', args: ['-c', 'echo $$'] });
    const result = spawnSync(line.command, line.args, { encoding: 'utf8' });
    expect(result.status).toBe(0);
    // The process that joined is the one that then ran the command (exec, same pid).
    expect(cgfs.read(path.join(pod, 'cgroup.procs')).trim()).toBe(result.stdout.trim());
    expect(walls.memoryFailure()).toBeNull();
  });

  it('reports an OOM kill from memory.events, and removes the group once its processes are gone', async () => {
    const cgroups = openCgroups('/var/lib/drover-runner', delegated, cgfs);
    const walls = new PodWalls(cgroups, { ...LIMITS, cpus: null }, 'p-oom', undefined);
    const [base] = cgfs.children(delegated);
    const pod = path.join(base, 'p-oom');
    expect(cgfs.read(path.join(pod, 'cpu.max'))).toBe('max 100000');
    fs.writeFileSync(path.join(pod, 'memory.events'), 'low 0\nhigh 0\nmax 3\noom 1\noom_kill 1\n');
    expect(walls.memoryFailure()).toBe('memory limit (256 MiB) exceeded');
    await walls.close();
    expect(fs.existsSync(pod)).toBe(false);
    expect(fs.existsSync(base)).toBe(true);
  });

  it("a runner's start sweeps the pods' groups an earlier run left, and no other runner's", async () => {
    const first = openCgroups('/var/lib/drover-runner', delegated, cgfs);
    first.create('p-left', LIMITS);
    const other = openCgroups('/var/lib/another-runner', delegated, cgfs);
    other.create('p-other', LIMITS);
    const again = openCgroups('/var/lib/drover-runner', delegated, cgfs);
    await again.sweep();
    const groups = cgfs.children(delegated).flatMap((base) => cgfs.children(base).map((dir) => path.basename(dir)));
    expect(groups).toEqual(['p-other']);
  });

  it("a runner's close removes its pods' groups and its own parent group; after a SIGKILL, removeRunnerCgroups does", async () => {
    const closing = openCgroups('/var/lib/drover-runner', delegated, cgfs);
    closing.create('p-running', LIMITS);
    const other = openCgroups('/var/lib/another-runner', delegated, cgfs);
    other.create('p-other', LIMITS);
    await closing.close();
    expect(cgfs.children(delegated).map((base) => cgfs.children(base).map((dir) => path.basename(dir)))).toEqual([['p-other']]);
    // A runner killed without closing leaves its groups: removed for it afterwards, the other runner's kept.
    const killed = openCgroups('/var/lib/killed-runner', delegated, cgfs);
    killed.create('p-left', LIMITS);
    expect(cgfs.children(delegated)).toHaveLength(2);
    await removeRunnerCgroups('/var/lib/killed-runner', delegated, cgfs);
    expect(cgfs.children(delegated).map((base) => cgfs.children(base).map((dir) => path.basename(dir)))).toEqual([['p-other']]);
  });

  it('enforces nothing when the subtree is not delegated (the controllers cannot be enabled)', () => {
    const closed = path.join(cgfs.root, 'user.slice', 'not-delegated');
    // user.slice passes no controller on: its children have none available.
    cgfs.mkdir(closed);
    expect(cgfs.read(path.join(closed, 'cgroup.controllers')).trim()).toBe('');
    const cgroups = openCgroups('/var/lib/drover-runner', closed, cgfs);
    expect(cgroups.version).toBe('v2');
    expect(cgroups.enforced).toEqual({ memory: false, pids: false, cpu: false });
    expect(cgroups.create('p-x', LIMITS)).toBeNull();
  });

  it('is not chosen on a v1 machine: the kernel filesystem here decides by cgroup.controllers at its root', () => {
    const v1 = path.join(scratch, 'v1');
    fs.mkdirSync(path.join(v1, 'memory'), { recursive: true });
    expect(openCgroups('/var/lib/drover-runner', undefined, { ...kernelCgroupFs, root: v1 }).version).toBe('v1');
  });
});
