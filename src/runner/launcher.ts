import { fork, type ChildProcess } from 'node:child_process';
import { packageFile } from '../paths.ts';
import { signalGroup } from './signals.ts';

export interface ProcessResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** Set when the program could not be started at all (e.g. not on PATH). */
  spawnError: string | null;
}

export interface LaunchOptions {
  cwd: string;
  env: Record<string, string>;
  /** Text for the process's stdin, or null for /dev/null. */
  stdin: string | null;
  /** Text for a pipe on the process's file descriptor 3 (bwrap's `--args 3`), or null for none. */
  fd3?: string | null;
  onOutput(text: string, stream: OutputStream): void;
  /** Output over the quota (see `setOutputLimit`) was read and dropped. */
  onDropped?(bytes: number): void;
}

export type OutputStream = 'stdout' | 'stderr';

export interface Launched {
  /** The process group's leader; undefined when the program could not be started. */
  readonly pid: number | undefined;
  /** Once the process has ended and its output has been read. */
  readonly done: Promise<ProcessResult>;
}

type ChildMessage =
  | { t: 'spawned'; id: number; pid: number | null }
  | { t: 'out'; id: number; text: string; stream: OutputStream }
  | { t: 'dropped'; id: number; bytes: number }
  | { t: 'done'; id: number; code: number | null; signal: NodeJS.Signals | null; spawnError: string | null };

interface Entry {
  pid: number | null;
  onOutput(text: string, stream: OutputStream): void;
  onDropped?(bytes: number): void;
  spawned(pid: number | null): void;
  done(result: ProcessResult): void;
}

const CHILD_SCRIPT = packageFile('src/runner/launcher-child.mjs');

/**
 * Starts agent processes, each in a process group of its own, through a small helper process
 * (launcher-child.mjs explains why), and reports their output and end. Signals go to the groups
 * directly (`process.kill(-pid)`), not through the helper.
 *
 * The helper is started on first use and again after it died; if it dies while processes run,
 * their groups are killed (their output and exit status died with it) and they end with an error.
 */
export class ProcessLauncher {
  private child: ChildProcess | null = null;
  private nextId = 1;
  private readonly entries = new Map<number, Entry>();
  private outputLimit = 0;

  /**
   * Bytes per second each agent may print (0: no limit); the helper drops the excess as it reads
   * it. Applies to running agents too.
   */
  setOutputLimit(bytesPerSec: number): void {
    this.outputLimit = bytesPerSec;
    this.child?.send({ t: 'limit', bytesPerSec });
  }

  /** Starts the helper now, so that the first agent does not wait for it. */
  start(): void {
    this.helper();
  }

  launch(command: string, args: string[], options: LaunchOptions): Promise<Launched> {
    const id = this.nextId++;
    return new Promise((resolveLaunched) => {
      let resolveDone!: (result: ProcessResult) => void;
      const done = new Promise<ProcessResult>((resolve) => (resolveDone = resolve));
      this.entries.set(id, {
        pid: null,
        onOutput: options.onOutput,
        onDropped: options.onDropped,
        spawned(pid) {
          this.pid = pid;
          resolveLaunched({ pid: pid ?? undefined, done });
        },
        done: (result) => {
          this.entries.delete(id);
          this.refWhileBusy();
          resolveDone(result);
        },
      });
      const helper = this.helper();
      this.refWhileBusy();
      helper.send({ t: 'spawn', id, command, args, cwd: options.cwd, env: options.env, stdin: options.stdin, fd3: options.fd3 ?? null });
    });
  }

  /** Stops the helper. Stop the processes first: any still running are killed as when it dies (`lost`). */
  async close(): Promise<void> {
    const child = this.child;
    this.child = null;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.disconnect();
    await exited;
  }

  private helper(): ChildProcess {
    if (this.child) return this.child;
    // Plain Node: no TypeScript loader, no inherited flags (a profiler's, a test runner's).
    const env = { ...process.env };
    delete env.NODE_OPTIONS;
    const child = fork(CHILD_SCRIPT, [], { execArgv: [], env, stdio: ['ignore', 'inherit', 'inherit', 'ipc'], serialization: 'json' });
    child.on('message', (message: ChildMessage) => this.receive(message));
    // A message sent while it is dying fails (EPIPE) as an 'error' event: its 'exit' follows, and
    // `lost()` then ends whatever it was asked to start.
    child.on('error', () => {});
    child.once('exit', () => {
      if (this.child === child) this.child = null;
      this.lost();
    });
    this.child = child;
    if (this.outputLimit > 0) child.send({ t: 'limit', bytesPerSec: this.outputLimit });
    this.refWhileBusy();
    return child;
  }

  private receive(message: ChildMessage): void {
    const entry = this.entries.get(message.id);
    if (!entry) return;
    switch (message.t) {
      case 'spawned':
        entry.spawned(message.pid);
        return;
      case 'out':
        entry.onOutput(message.text, message.stream);
        return;
      case 'dropped':
        entry.onDropped?.(message.bytes);
        return;
      case 'done':
        entry.done({ code: message.code, signal: message.signal, spawnError: message.spawnError });
    }
  }

  /** The helper died: what it was watching ends, and nothing of it keeps running unwatched. */
  private lost(): void {
    for (const entry of [...this.entries.values()]) {
      if (entry.pid !== null) signalGroup(entry.pid, 'SIGKILL');
      else entry.spawned(null);
      entry.done({ code: null, signal: null, spawnError: "the runner's process launcher exited unexpectedly" });
    }
  }

  /** The helper keeps the runner's process alive only while it watches processes. */
  private refWhileBusy(): void {
    const child = this.child;
    if (!child) return;
    const channel = child.channel as { ref(): void; unref(): void } | undefined;
    if (this.entries.size > 0) {
      child.ref();
      channel?.ref();
    } else {
      child.unref();
      channel?.unref();
    }
  }
}
