/**
 * The pod sandbox of a runner (docs/runners.md): `bwrap` (the default) or `none`.
 *
 * A runner opens its sandbox once at start. With `bwrap` that works out the host view
 * (./host-view.ts) and runs a self-test: a runner that cannot sandbox its agents refuses to start,
 * naming the fix, rather than run them unprotected. `none` runs agents as the runner's own user
 * with the whole machine visible, and says so.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { findExecutable } from '../../agents/detect.ts';
import { bwrapArgs, type Identity, type PodView } from './bwrap.ts';
import { hostView, type Mount } from './host-view.ts';

export type { PodView } from './bwrap.ts';

export const SANDBOX_MODES = ['bwrap', 'none'] as const;
export type SandboxMode = (typeof SANDBOX_MODES)[number];

/**
 * How to start one process of a pod. `env` is the environment of the process started on the
 * host; with `bwrap` that is the runner's own fixed one (HOST_ENV) and the agent's variables are
 * among bwrap's options, which travel NUL-separated on file descriptor 3 (`--args 3`, `fd3`), so
 * that no value of the pod is on a command line or in a host-side process's environment.
 */
export interface SandboxLaunch {
  command: string;
  args: string[];
  env: Record<string, string>;
  /** What to write to the process's file descriptor 3 (a pipe), or null for none. */
  fd3: string | null;
}

export interface Sandbox {
  readonly mode: SandboxMode;
  /**
   * What runs `command args` with `env` inside a pod's sandbox. With `bwrap` the process started
   * is bwrap itself, whose death ends everything inside: stop its members with SIGTERM (sparing
   * bwrap), and only then SIGKILL the whole group (see ../process-group.ts).
   */
  wrap(command: string, args: string[], view: PodView, env: Record<string, string>): SandboxLaunch;
}

/** The sandbox cannot be used; the message names the fix. */
export class SandboxError extends Error {}

export interface SandboxOptions {
  /** The runner's work dir: hidden from pods; the sandbox keeps its own files in `<work dir>/sandbox`. */
  workDir: string;
  /** The runner's PATH. */
  pathEnv: string;
  /** More paths to hide (the server's data dir for the local runner; DROVER_SANDBOX_HIDE). */
  hidden?: string[];
  /** More read-only paths (DROVER_SANDBOX_READ_ONLY). */
  readOnly?: string[];
  /** The bubblewrap program (DROVER_BWRAP; default `bwrap` on PATH). */
  bwrap?: string;
}

const noSandbox: Sandbox = { mode: 'none', wrap: (command, args, _view, env) => ({ command, args, env, fd3: null }) };

/** The environment of every host-side process the runner starts for a pod: the runner's own, fixed. */
export function hostEnv(pathEnv: string): Record<string, string> {
  return { PATH: pathEnv, LANG: 'C.UTF-8' };
}

/** bwrap options that give the process inside exactly `env`. */
function environmentArgs(env: Record<string, string>): string[] {
  return ['--clearenv', ...Object.entries(env).flatMap(([name, value]) => ['--setenv', name, value])];
}

const INSTALL_HINT = 'install bubblewrap (e.g. `apt-get install bubblewrap`) or start the runner with --sandbox none';

export async function openSandbox(mode: SandboxMode, options: SandboxOptions): Promise<Sandbox> {
  if (mode === 'none') return noSandbox;
  const program = options.bwrap ?? 'bwrap';
  const bwrap = await findExecutable(program, options.pathEnv);
  if (!bwrap) throw new SandboxError(`the pod sandbox needs bubblewrap, and "${program}" was not found: ${INSTALL_HINT}`);
  const ownDir = path.join(options.workDir, 'sandbox');
  fs.mkdirSync(ownDir, { recursive: true, mode: 0o700 });
  const shared: Mount[] = hostView({ pathEnv: options.pathEnv, hidden: [options.workDir, ...(options.hidden ?? [])], extraReadOnly: options.readOnly });
  const identity = agentIdentity(ownDir);
  const env = hostEnv(options.pathEnv);
  const sandbox: Sandbox = {
    mode: 'bwrap',
    wrap: (command, args, view, inner) => ({
      command: bwrap,
      args: ['--args', '3', '--', command, ...args],
      env,
      fd3: [...bwrapArgs(shared, view, identity), ...environmentArgs(inner)].map((arg) => `${arg}\0`).join(''),
    }),
  };
  await selfTest(sandbox, ownDir);
  return sandbox;
}

/**
 * The agent's ids inside the sandbox: the runner's own when it is not root, else 1000. When the
 * host has no passwd entry for that uid, one is supplied, since programs (Node's os.userInfo(),
 * ssh, whoami) fail without it.
 */
function agentIdentity(ownDir: string): Identity {
  const uid = process.getuid?.() || 1000;
  const gid = process.getgid?.() || 1000;
  const passwd = readOrEmpty('/etc/passwd');
  if (passwd.split('\n').some((line) => line.split(':')[2] === String(uid))) return { uid, gid, passwd: null };
  const group = readOrEmpty('/etc/group');
  const files = { passwd: path.join(ownDir, 'passwd'), group: path.join(ownDir, 'group') };
  const withLine = (text: string, line: string) => `${text}${text === '' || text.endsWith('\n') ? '' : '\n'}${line}\n`;
  fs.writeFileSync(files.passwd, withLine(passwd, `drover:x:${uid}:${gid}:Drover agent:/tmp:/bin/sh`), { mode: 0o644 });
  const hasGroup = group.split('\n').some((line) => line.split(':')[2] === String(gid));
  fs.writeFileSync(files.group, hasGroup ? group : withLine(group, `drover:x:${gid}:`), { mode: 0o644 });
  return { uid, gid, passwd: files };
}

function readOrEmpty(file: string): string {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch {
    return '';
  }
}

/** Runs `id -u` in a sandbox like a pod's: it must work, and the agent must not be root. */
async function selfTest(sandbox: Sandbox, ownDir: string): Promise<void> {
  const dir = fs.mkdtempSync(path.join(ownDir, 'self-test-'));
  try {
    const launch = sandbox.wrap('/bin/sh', ['-c', 'id -u && test -w "$PWD"'], { cwd: dir, writable: [dir], readOnly: [] }, { PATH: '/usr/bin:/bin' });
    const result = await run(launch);
    if (result.code !== 0) {
      const reason = result.output.trim().split('\n').find(Boolean) ?? `exit code ${String(result.code)}`;
      throw new SandboxError(`the pod sandbox does not work on this machine (bwrap: ${reason}): ${INSTALL_HINT}; bubblewrap needs unprivileged user namespaces`);
    }
    if (result.output.trim().split('\n')[0] === '0') throw new SandboxError('the pod sandbox ran its agent as root; refusing to start');
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** Runs a launch of `wrap` to its end (the self-tests). */
export function run(launch: SandboxLaunch): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(launch.command, launch.args, { env: launch.env, stdio: ['ignore', 'pipe', 'pipe', 'pipe'] });
    const fd3 = child.stdio[3] as NodeJS.WritableStream;
    fd3.on('error', () => {});
    fd3.end(launch.fd3 ?? '');
    let output = '';
    child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, output }));
  });
}
