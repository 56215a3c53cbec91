/**
 * Child processes and temporary directories of the bench, and their clean-up on every way out
 * (normal end, thrown error, Ctrl-C, SIGTERM). Also reads a child's memory and CPU from /proc.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

const children = new Set<ChildProcess>();

export { keepTempDir, makeTempDir, removeTempDir } from './harness.ts';

/** Synchronous last resort: kills what is still running (the temp dirs go at exit: ./harness.ts). */
function cleanupNow(): void {
  for (const child of children) {
    if (child.exitCode === null && child.signalCode === null) {
      try {
        child.kill('SIGKILL');
      } catch {
        // already gone
      }
    }
  }
  children.clear();
  // The temp dirs are bench/harness.ts's: it removes them at exit.
}

let installed = false;
export function installCleanupHandlers(): void {
  if (installed) return;
  installed = true;
  process.on('exit', cleanupNow);
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    process.once(signal, () => {
      process.stderr.write(`\nbench: ${signal} received, stopping child processes and removing temp dirs\n`);
      cleanupNow();
      process.exit(signal === 'SIGINT' ? 130 : 143);
    });
  }
}

export interface ServerProcess {
  readonly name: string;
  readonly pid: number;
  readonly url: string;
  readonly stdoutFile: string;
  readonly stderrFile: string;
  /** SIGTERM, then SIGKILL after 10 s; resolves when the process is gone. */
  stop(): Promise<void>;
}

function waitForExit(child: ChildProcess, ms: number): Promise<boolean> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(true);
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), ms);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve(true);
    });
  });
}

/**
 * Starts `node <args>` with stdout and stderr going straight to files (so the child's logging
 * costs what it costs in production with a file or a pipe that is drained, and the bench process
 * spends nothing copying it), then waits for `pattern` (capturing the URL) to appear in stdout.
 */
export async function startProcess(options: {
  name: string;
  args: string[];
  env: NodeJS.ProcessEnv;
  logDir: string;
  ready: RegExp;
  timeoutMs?: number;
}): Promise<ServerProcess> {
  const stdoutFile = path.join(options.logDir, `${options.name}.stdout.log`);
  const stderrFile = path.join(options.logDir, `${options.name}.stderr.log`);
  const out = fs.openSync(stdoutFile, 'w');
  const err = fs.openSync(stderrFile, 'w');
  const child = spawn(process.execPath, options.args, { cwd: ROOT, env: options.env, stdio: ['ignore', out, err] });
  fs.closeSync(out);
  fs.closeSync(err);
  children.add(child);
  child.once('exit', () => children.delete(child));

  const deadline = Date.now() + (options.timeoutMs ?? 60_000);
  let url: string | null = null;
  while (url === null) {
    const text = fs.readFileSync(stdoutFile, 'utf8');
    const match = options.ready.exec(text);
    if (match) {
      url = match[1];
      break;
    }
    if (child.exitCode !== null || child.signalCode !== null || Date.now() > deadline) {
      const why = child.exitCode !== null || child.signalCode !== null ? `exited (${child.exitCode ?? child.signalCode})` : 'did not start in time';
      child.kill('SIGKILL');
      throw new Error(
        `${options.name} ${why}\n--- stdout ---\n${text.slice(-4000)}\n--- stderr ---\n${fs.readFileSync(stderrFile, 'utf8').slice(-4000)}`,
      );
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  if (child.pid === undefined) throw new Error(`${options.name}: no pid`);
  const pid = child.pid;
  return {
    name: options.name,
    pid,
    url,
    stdoutFile,
    stderrFile,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      if (!(await waitForExit(child, 10_000))) {
        child.kill('SIGKILL');
        await waitForExit(child, 5_000);
      }
    },
  };
}

/** The environment of the Drover child: SQLite, no rate limit, default (info) logging. */
export function droverEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  // The embedded default store, whatever the caller's shell says.
  delete env.DATABASE_URL;
  delete env.DROVER_HOST;
  delete env.DROVER_PORT;
  delete env.DROVER_DATA_DIR;
  delete env.DROVER_ADMIN_TOKEN;
  // Stop the caller's NODE_OPTIONS (e.g. an inspector) from leaking in.
  delete env.NODE_OPTIONS;
  env.DROVER_RATE_LIMIT_PER_MINUTE = '0';
  // Benches register hundreds of runners from one address.
  env.DROVER_REGISTER_LIMIT_PER_MINUTE = '0';
  env.DROVER_LOG_LEVEL = 'info'; // the default; set explicitly so a caller's env cannot hide logging cost
  return env;
}

export function startDrover(dataDir: string, logDir: string, name: string, extraNodeArgs: string[] = []): Promise<ServerProcess> {
  return startProcess({
    name,
    args: [...extraNodeArgs, path.join(ROOT, 'bin/drover.mjs'), 'serve', '--host', '127.0.0.1', '--port', '0', '--data-dir', dataDir],
    env: droverEnv(),
    logDir,
    ready: /Drover listening on (http:\/\/\S+)/,
  });
}

export function startBare(jsonFile: string, logDir: string): Promise<ServerProcess> {
  const env: NodeJS.ProcessEnv = { ...process.env };
  delete env.NODE_OPTIONS;
  return startProcess({
    name: 'bare',
    args: ['--import', 'tsx', path.join(ROOT, 'bench/bare-server.ts'), jsonFile],
    env,
    logDir,
    ready: /Bare listening on (http:\/\/\S+)/,
  });
}

// ---------------------------------------------------------------------------------------------
// /proc readings (Linux)

export interface MemoryReading {
  rssKb: number;
  hwmKb: number;
  /** Of the RSS: anonymous memory (heaps, stacks) and file-backed pages (the binary, libraries). */
  anonKb: number;
  fileKb: number;
}

export function readMemory(pid: number): MemoryReading | null {
  let text: string;
  try {
    text = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  } catch {
    return null;
  }
  const field = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(text)?.[1] ?? NaN);
  return { rssKb: field('VmRSS'), hwmKb: field('VmHWM'), anonKb: field('RssAnon'), fileKb: field('RssFile') };
}

const CLOCK_TICKS = 100; // USER_HZ on Linux

/** user + system CPU seconds of a process so far. */
export function readCpuSeconds(pid: number): number | null {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the parenthesised command name; utime and stime are fields 14 and 15.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS;
  } catch {
    return null;
  }
}

/** Samples a child's VmRSS every `intervalMs` until stopped; the peak includes VmHWM at stop time. */
export class RssSampler {
  private peakKb = 0;
  private samples = 0;
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly pid: number,
    intervalMs = 100,
  ) {
    this.sample();
    this.timer = setInterval(() => this.sample(), intervalMs);
  }

  private sample(): void {
    const reading = readMemory(this.pid);
    if (reading && Number.isFinite(reading.rssKb)) {
      this.peakKb = Math.max(this.peakKb, reading.rssKb);
      this.samples++;
    }
  }

  stop(): { peakRssKb: number; samples: number } {
    clearInterval(this.timer);
    this.sample();
    return { peakRssKb: this.peakKb, samples: this.samples };
  }
}
