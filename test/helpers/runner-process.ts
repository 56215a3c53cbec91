/**
 * Real `drover runner` child processes for end-to-end tests, started the way an operator starts
 * one (`node bin/drover.mjs runner --server <url> --token <t> --work-dir <dir> …`), with an
 * environment the test controls completely (PATH with a directory of stand-in agents first, a
 * HOME of its own, credentials), plus the small tools the e2e suites share: `waitFor`, process
 * checks and a directory of stand-in agent executables.
 *
 * No runner outlives its test (or, when started in beforeAll, its file): it is stopped with
 * SIGTERM (after a SIGCONT, in case a test paused it), which drains it with `--drain-seconds 1`,
 * i.e. its agents' process groups are stopped too; SIGKILL if it does not exit in time.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, onTestFinished } from 'vitest';
import { removeRunnerCgroups } from '../../src/runner/limits/cgroups.ts';
import { childrenOf } from '../../src/runner/process-group.ts';
import { DROVER_BIN, REPO_ROOT } from './server-process.ts';

export const STAND_IN_AGENT = path.join(REPO_ROOT, 'test', 'fixtures', 'stand-in-agent.mjs');

/**
 * Polls `probe` until it returns something other than undefined/null/false; throws after `timeout`
 * ms (default 20 s: a CI run starts every file at once on 2 cores, where a runner's connect or a
 * pod's start can take several seconds; a generous bound costs nothing when the condition comes).
 */
export async function waitFor<T>(
  probe: () => T | Promise<T>,
  options: { timeout?: number; interval?: number; what?: string } = {},
): Promise<Exclude<T, undefined | null | false>> {
  const timeout = options.timeout ?? 20_000;
  const interval = options.interval ?? 50;
  const deadline = Date.now() + timeout;
  let last: unknown;
  for (;;) {
    try {
      const value = await probe();
      if (value !== undefined && value !== null && value !== false) return value as Exclude<T, undefined | null | false>;
      last = value;
    } catch (error) {
      last = error;
    }
    if (Date.now() >= deadline) {
      const detail = last instanceof Error ? last.message : JSON.stringify(last);
      throw new Error(`timed out after ${timeout} ms waiting for ${options.what ?? 'a condition'} (last: ${detail})`);
    }
    await new Promise((resolve) => setTimeout(resolve, interval));
  }
}

/** True when no process `pid` exists any more (a zombie nobody reaps counts as gone). */
export function processGone(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ESRCH';
  }
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z');
  } catch {
    return true;
  }
}

/** The pids of the live children of process `pid` (from /proc/<pid>/task/<tid>/children). */
export function childPids(pid: number): number[] {
  return childrenOf(pid).filter((child) => !processGone(child));
}

/** The live processes whose environment holds `entry` (e.g. `DROVER_POD_KEY=p-…`), from /proc. */
export function processesWithEnv(entry: string): number[] {
  return fs
    .readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name))
    .map(Number)
    .filter((pid) => {
      try {
        return fs.readFileSync(`/proc/${pid}/environ`, 'latin1').split('\0').includes(entry) && !processGone(pid);
      } catch {
        return false;
      }
    });
}

/**
 * The processes of a pod on this machine, sandboxed or not: everything an agent starts inherits
 * its environment, `DROVER_POD_KEY` included (and a pid namespace hides nothing from /proc here).
 */
export const podProcesses = (podKey: string): number[] => processesWithEnv(`DROVER_POD_KEY=${podKey}`);

/** The command line of process `pid`, arguments joined by spaces ('' when it is gone). */
export function commandLine(pid: number): string {
  try {
    return fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ').trim();
  } catch {
    return '';
  }
}

/** SIGKILL to a process group and to the process itself, ignoring ESRCH (test cleanup). */
export function killGroup(pid: number): void {
  for (const target of [-pid, pid]) {
    try {
      process.kill(target, 'SIGKILL');
    } catch {
      // gone already
    }
  }
}

/** A fresh temp directory, removed by the caller (or left to the OS temp cleaner on a crash). */
export function tempDir(prefix: string): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), `drover-e2e-${prefix}-`));
}

/** A directory holding copies of the stand-in agent under `names` (e.g. `claude`, `codex`). */
export function standInBinDir(names: readonly string[], dir = tempDir('bin')): string {
  for (const name of names) {
    const file = path.join(dir, name);
    fs.copyFileSync(STAND_IN_AGENT, file);
    fs.chmodSync(file, 0o755);
  }
  return dir;
}

/** PATH for a runner: the given directories first, then node's own directory and the system's. */
export function runnerPath(...first: string[]): string {
  return [...first, path.dirname(process.execPath), '/usr/local/bin', '/usr/bin', '/bin'].join(':');
}

export interface RunnerProcess {
  readonly child: ChildProcess;
  readonly workDir: string;
  /** The id the server gave this runner (read from `<work dir>/runner.json`). */
  readonly runnerId: number;
  readonly stderr: string;
  readonly exited: Promise<number | null>;
  /** SIGCONT (in case it is paused), then `signal` (default SIGTERM: drain), SIGKILL after `timeoutMs`. */
  stop(signal?: NodeJS.Signals, timeoutMs?: number): Promise<number | null>;
  kill9(): Promise<void>;
  pause(): void;
  resume(): void;
}

export interface RunnerStartOptions {
  server: string;
  /** Registration token; not needed when the work dir already holds the runner's credential. */
  token?: string;
  workDir: string;
  name?: string;
  maxPods?: number;
  labels?: string;
  drainSeconds?: number;
  /** `--sandbox` (default: the runner's default, bwrap). */
  sandbox?: 'bwrap' | 'none';
  /** The runner's complete environment (nothing of the test process is added). */
  env: Record<string, string>;
  timeoutMs?: number;
  /** Run the runner as this user and group (a test running as root that needs a non-root runner). */
  uid?: number;
  gid?: number;
}

const live = new Set<ChildProcess>();

async function stopChild(child: ChildProcess, signal: NodeJS.Signals, timeoutMs: number): Promise<number | null> {
  if (child.exitCode !== null || child.signalCode !== null) return child.exitCode;
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  try {
    process.kill(child.pid!, 'SIGCONT');
  } catch {
    // gone
  }
  child.kill(signal);
  const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
  const code = await exited;
  clearTimeout(timer);
  return code;
}

const workDirs = new Map<ChildProcess, string>();

/**
 * A stopped runner's control groups: a runner that closes removes them itself; one that was
 * SIGKILLed (by a test, or after the stop timeout) leaves its parent groups behind. Removed here
 * unless another live runner of the same work dir still uses them.
 */
async function removeCgroupsOf(child: ChildProcess): Promise<void> {
  const workDir = workDirs.get(child);
  workDirs.delete(child);
  if (workDir === undefined || [...live].some((other) => workDirs.get(other) === workDir)) return;
  await removeRunnerCgroups(workDir);
}

/**
 * Registers a runner for clean-up: inside a test, it is stopped when that test finishes; otherwise
 * (beforeAll) when the file is done. Survivors die with the worker.
 */
function track(child: ChildProcess, workDir: string): void {
  live.add(child);
  workDirs.set(child, workDir);
  child.once('exit', () => live.delete(child));
  try {
    onTestFinished(() => stopChild(child, 'SIGTERM', 20_000).then(() => removeCgroupsOf(child)));
  } catch {
    // not inside a test: the afterAll below takes it
  }
}

try {
  afterAll(() => Promise.all([...new Set([...live, ...workDirs.keys()])].map((child) => stopChild(child, 'SIGTERM', 20_000).then(() => removeCgroupsOf(child)))).then(() => undefined));
} catch {
  // imported outside a vitest suite
}
process.once('exit', () => {
  for (const child of live) child.kill('SIGKILL');
});

/** Starts `drover runner` and resolves once it has its identity and is dialling the server. */
export async function startRunnerProcess(options: RunnerStartOptions): Promise<RunnerProcess> {
  const args = [DROVER_BIN, 'runner', '--server', options.server, '--work-dir', options.workDir];
  if (options.token) args.push('--token', options.token);
  if (options.name) args.push('--name', options.name);
  if (options.maxPods !== undefined) args.push('--max-pods', String(options.maxPods));
  if (options.labels) args.push('--labels', options.labels);
  args.push('--drain-seconds', String(options.drainSeconds ?? 1));
  if (options.sandbox) args.push('--sandbox', options.sandbox);
  const child = spawn(process.execPath, args, { cwd: REPO_ROOT, env: options.env, stdio: ['ignore', 'pipe', 'pipe'], uid: options.uid, gid: options.gid });
  track(child, options.workDir);
  let stderr = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const exited = new Promise<number | null>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve(child.exitCode);
    else child.once('exit', (code) => resolve(code));
  });
  let done = false;
  void exited.then(() => (done = true));
  await waitFor(
    () => {
      if (done) throw new Error(`drover runner exited before connecting:\n${stderr}`);
      return stderr.includes('runner connecting to');
    },
    { timeout: options.timeoutMs ?? 30_000, what: 'drover runner to start' },
  ).catch(async (error: unknown) => {
    child.kill('SIGKILL');
    await exited;
    throw error;
  });
  const identity = JSON.parse(fs.readFileSync(path.join(options.workDir, 'runner.json'), 'utf8')) as { runner_id: number };
  return {
    child,
    workDir: options.workDir,
    runnerId: identity.runner_id,
    get stderr() {
      return stderr;
    },
    exited,
    stop: (signal: NodeJS.Signals = 'SIGTERM', timeoutMs = 20_000) => stopChild(child, signal, timeoutMs),
    async kill9() {
      child.kill('SIGKILL');
      await exited;
    },
    pause: () => process.kill(child.pid!, 'SIGSTOP'),
    resume: () => process.kill(child.pid!, 'SIGCONT'),
  };
}
