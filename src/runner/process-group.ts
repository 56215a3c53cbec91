import { spawn, type ChildProcess } from 'node:child_process';
import type { Readable } from 'node:stream';
import { StringDecoder } from 'node:string_decoder';

export interface ProcessResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** Set when the program could not be started at all (e.g. not on PATH). */
  spawnError: string | null;
}

/**
 * A process in its own process group, so stopping it stops everything it started:
 * SIGTERM to the group, then SIGKILL after the grace period.
 */
export class GroupProcess {
  readonly child: ChildProcess;
  readonly done: Promise<ProcessResult>;
  private killTimer: NodeJS.Timeout | null = null;

  constructor(
    command: string,
    args: string[],
    options: { cwd: string; env: Record<string, string>; stdin: string | null; onOutput(text: string): void },
  ) {
    // No stdin text: /dev/null, not an (ended) pipe. Node's pipes are socketpairs, and bash run
    // with a socket on stdin takes itself for an rsh/ssh session and sources ~/.bashrc of the
    // runner's user (which would bring the runner's own environment into the shell agent).
    const stdin = options.stdin === null ? 'ignore' : 'pipe';
    this.child = spawn(command, args, { cwd: options.cwd, env: options.env, detached: true, stdio: [stdin, 'pipe', 'pipe'] });
    // One decoder per stream: a multi-byte character split across two reads stays one character.
    const decode = (stream: Readable | null) => {
      if (!stream) return;
      const decoder = new StringDecoder('utf8');
      stream.on('data', (chunk: Buffer) => {
        const text = decoder.write(chunk);
        if (text) options.onOutput(text);
      });
      stream.on('end', () => {
        const rest = decoder.end();
        if (rest) options.onOutput(rest);
      });
    };
    decode(this.child.stdout);
    decode(this.child.stderr);
    this.child.stdin?.on('error', () => {});
    if (options.stdin !== null) this.child.stdin?.end(options.stdin);
    this.done = new Promise((resolve) => {
      let spawnError: string | null = null;
      this.child.once('error', (error: NodeJS.ErrnoException) => {
        spawnError = error.code === 'ENOENT' ? `the program "${command}" was not found on the runner's PATH` : error.message;
        if (this.child.pid === undefined) resolve({ code: null, signal: null, spawnError });
      });
      let closed = false;
      const finish = (code: number | null, signal: NodeJS.Signals | null) => {
        closed = true;
        if (this.killTimer) clearTimeout(this.killTimer);
        resolve({ code, signal, spawnError });
      };
      this.child.once('close', finish);
      // A leftover grandchild can hold the output pipes open after the agent exits: give the
      // streams a moment to drain, then end the group and report the agent's own exit.
      this.child.once('exit', (code, signal) => {
        setTimeout(() => {
          if (closed) return;
          this.signal('SIGKILL');
          finish(code, signal);
        }, 2000).unref();
      });
    });
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  /** SIGTERM to the group now, SIGKILL after `graceMs` if it is still there. */
  stop(graceMs: number): void {
    this.signal('SIGTERM');
    if (this.killTimer) return;
    this.killTimer = setTimeout(() => this.signal('SIGKILL'), graceMs);
    this.killTimer.unref();
  }

  signal(signal: NodeJS.Signals): void {
    const pid = this.child.pid;
    if (pid === undefined) return;
    try {
      process.kill(-pid, signal);
    } catch {
      // The group is already gone.
    }
  }
}
