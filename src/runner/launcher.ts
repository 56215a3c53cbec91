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
  /**
   * Held behind a go signal (./slot-gate.ts): the process gets a pipe on its file descriptor 4,
   * on which its wrapper waits before it execs the agent; `Launched.go` sends the signal.
   */
  gated?: boolean;
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
  /** A gated process (`LaunchOptions.gated`): lets its agent start. */
  go(): void;
}

type ChildMessage =
  | { t: 'spawned'; id: number; pid: number | null }
  | { t: 'out'; id: number; text: string; stream: OutputStream }
  | { t: 'dropped'; id: number; bytes: number }
  | { t: 'done'; id: number; code: number | null; signal: NodeJS.Signals | null; spawnError: string | null };

interface Entry {
  /** The helper (its index) that started it. */
  helper: number;
  pid: number | null;
  onOutput(text: string, stream: OutputStream): void;
  onDropped?(bytes: number): void;
  spawned(pid: number | null): void;
  done(result: ProcessResult): void;
}

const CHILD_SCRIPT = packageFile('src/runner/launcher-child.mjs');

/**
 * Starts agent processes, each in a process group of its own, through small helper processes
 * (launcher-child.mjs explains why), and reports their output and end. Signals go to the groups
 * directly (`process.kill(-pid)`), not through a helper.
 *
 * With more than one helper, launches go to them in turn: a helper starts one process at a time,
 * and each start waits until the new process has run its exec, which on a loaded machine is a wait
 * for the scheduler, so a burst of starts goes as fast as several helpers wait side by side
 * (docs/decisions.md "Runners and pods": agents start through launcher processes).
 *
 * A helper is started on first use and again after it died; if it dies while processes run,
 * their groups are killed (their output and exit status died with it) and they end with an error.
 */
export class ProcessLauncher {
  private readonly children: (ChildProcess | null)[];
  /** How many processes each helper watches. */
  private readonly watched: number[];
  private nextHelper = 0;
  private nextId = 1;
  /** Go signals given in this turn of the event loop, not sent yet (`go`). */
  private readonly goes: { index: number; id: number }[] = [];
  private readonly entries = new Map<number, Entry>();
  private outputLimit = 0;

  /** `helpers`: how many helper processes share the launches (1: one, as a test wants to find it). */
  constructor(helpers = 1) {
    this.children = Array.from({ length: Math.max(1, helpers) }, () => null);
    this.watched = this.children.map(() => 0);
  }

  /**
   * Bytes per second each agent may print (0: no limit); the helper drops the excess as it reads
   * it. Applies to running agents too.
   */
  setOutputLimit(bytesPerSec: number): void {
    this.outputLimit = bytesPerSec;
    for (const child of this.children) child?.send({ t: 'limit', bytesPerSec });
  }

  /** Starts the helpers now, so that the first agents do not wait for them. */
  start(): void {
    for (let i = 0; i < this.children.length; i++) this.helper(i);
  }

  launch(command: string, args: string[], options: LaunchOptions): Promise<Launched> {
    const id = this.nextId++;
    const index = this.nextHelper;
    this.nextHelper = (this.nextHelper + 1) % this.children.length;
    const go = () => this.go(index, id);
    return new Promise((resolveLaunched) => {
      let resolveDone!: (result: ProcessResult) => void;
      const done = new Promise<ProcessResult>((resolve) => (resolveDone = resolve));
      this.entries.set(id, {
        helper: index,
        pid: null,
        onOutput: options.onOutput,
        onDropped: options.onDropped,
        spawned(pid) {
          this.pid = pid;
          resolveLaunched({ pid: pid ?? undefined, done, go });
        },
        done: (result) => {
          this.entries.delete(id);
          this.watched[index]--;
          this.refWhileBusy(index);
          resolveDone(result);
        },
      });
      this.watched[index]++;
      const helper = this.helper(index);
      this.refWhileBusy(index);
      helper.send({ t: 'spawn', id, command, args, cwd: options.cwd, env: options.env, stdin: options.stdin, fd3: options.fd3 ?? null, gated: options.gated ?? false });
    });
  }

  /**
   * The go signal of gated process `id` (./slot-gate.ts), through the helper that started it. The
   * signals given together (a slot's pods are let go at once) go to each helper in one message.
   */
  private go(index: number, id: number): void {
    if (this.goes.length === 0) queueMicrotask(() => this.sendGoes());
    this.goes.push({ index, id });
  }

  private sendGoes(): void {
    const goes = this.goes.splice(0);
    this.children.forEach((child, index) => {
      const ids = goes.filter((g) => g.index === index).map((g) => g.id);
      // A helper that died took its processes with it (`lost`): nothing is left to let go.
      if (ids.length > 0 && child?.connected) child.send({ t: 'go', ids });
    });
  }

  /** Stops the helpers. Stop the processes first: any still running are killed as when a helper dies (`lost`). */
  async close(): Promise<void> {
    await Promise.all(
      this.children.map(async (child, i) => {
        this.children[i] = null;
        if (!child || child.exitCode !== null || child.signalCode !== null) return;
        const exited = new Promise((resolve) => child.once('exit', resolve));
        child.disconnect();
        await exited;
      }),
    );
  }

  private helper(index: number): ChildProcess {
    const running = this.children[index];
    if (running) return running;
    // Plain Node: no TypeScript loader, no inherited flags (a profiler's, a test runner's).
    const env = { ...process.env };
    delete env.NODE_OPTIONS;
    const child = fork(CHILD_SCRIPT, [], { execArgv: [], env, stdio: ['ignore', 'inherit', 'inherit', 'ipc'], serialization: 'json' });
    child.on('message', (message: ChildMessage) => this.receive(message));
    // A message sent while it is dying fails (EPIPE) as an 'error' event: its 'exit' follows, and
    // `lost()` then ends whatever it was asked to start.
    child.on('error', () => {});
    child.once('exit', () => {
      if (this.children[index] === child) this.children[index] = null;
      this.lost(index);
    });
    this.children[index] = child;
    if (this.outputLimit > 0) child.send({ t: 'limit', bytesPerSec: this.outputLimit });
    this.refWhileBusy(index);
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

  /** Helper `index` died: what it was watching ends, and nothing of it keeps running unwatched. */
  private lost(index: number): void {
    for (const entry of [...this.entries.values()].filter((e) => e.helper === index)) {
      if (entry.pid !== null) signalGroup(entry.pid, 'SIGKILL');
      else entry.spawned(null);
      entry.done({ code: null, signal: null, spawnError: "the runner's process launcher exited unexpectedly" });
    }
  }

  /** A helper keeps the runner's process alive only while it watches processes. */
  private refWhileBusy(index: number): void {
    const child = this.children[index];
    if (!child) return;
    const channel = child.channel as { ref(): void; unref(): void } | undefined;
    if (this.watched[index] > 0) {
      child.ref();
      channel?.ref();
    } else {
      child.unref();
      channel?.unref();
    }
  }
}
