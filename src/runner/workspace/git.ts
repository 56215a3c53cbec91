/**
 * Running git for the runner's workspaces, safely: spawned directly (never through a shell),
 * in its own process group killed as a whole when its time is up, with the environment of
 * the repository provider's `gitEnv` (token only as an `http.<url>.extraHeader` through
 * GIT_CONFIG_COUNT/KEY/VALUE, credential helpers and askpass reset, GIT_TERMINAL_PROMPT=0,
 * GIT_DIR & co dropped, LC_ALL=C) plus a few settings of our own (no hooks, no fsmonitor,
 * no garbage collection).
 *
 * Also: the checks that keep user-supplied names (repository URL, branch) from being read as
 * options or escaping the work dir, and the reading of git's stderr into a short,
 * user-facing reason that never contains the token.
 */
import { spawn } from 'node:child_process';
import { gitEnv } from '../../git/environment.ts';
import { scrub } from '../../git/scrub.ts';
import { WorkspaceError } from './errors.ts';

/** Kept of each stream; git's useful stderr is short and what we read from stdout too. */
const MAX_STDOUT = 8 * 1024 * 1024;
const MAX_STDERR = 64 * 1024;

export interface GitResult {
  /** Exit code; null when the process was killed. */
  code: number | null;
  stdout: string;
  stderr: string;
  timedOut: boolean;
}

export interface GitOptions {
  cwd: string;
  env: NodeJS.ProcessEnv;
  timeoutMs: number;
  /** Text for git's stdin (default: none). */
  stdin?: string;
  /**
   * Runs git through this launch instead (inside a pod's sandbox): its own command line, host-side
   * environment and the options it reads from file descriptor 3 (see ../sandbox/index.ts).
   */
  wrap?: (command: string, args: string[], env: Record<string, string>) => { command: string; args: string[]; env: Record<string, string>; fd3: string | null };
}

/**
 * The environment for every git the runner starts. `token` is sent only to http(s) remotes.
 * Settings passed this way override the repository's own configuration, which an agent working
 * in a worktree can edit: hooks (post-checkout runs on `worktree add`) and fsmonitor commands
 * are switched off for the runner's own git calls.
 */
export function workspaceGitEnv(url: string, token: string): NodeJS.ProcessEnv {
  const env = gitEnv(url, token);
  const extra: [string, string][] = [
    ['core.hooksPath', '/dev/null'],
    ['core.fsmonitor', 'false'],
    // Never collect garbage: pods' repositories borrow the cache's objects (./cache.ts).
    ['gc.auto', '0'],
    ['advice.detachedHead', 'false'],
  ];
  let count = Number(env.GIT_CONFIG_COUNT ?? '0');
  for (const [key, value] of extra) {
    env[`GIT_CONFIG_KEY_${count}`] = key;
    env[`GIT_CONFIG_VALUE_${count}`] = value;
    count += 1;
  }
  env.GIT_CONFIG_COUNT = String(count);
  return env;
}

function definedOnly(env: NodeJS.ProcessEnv): Record<string, string> {
  return Object.fromEntries(Object.entries(env).filter((entry): entry is [string, string] => entry[1] !== undefined));
}

/** Runs git; resolves with its outcome (also on a non-zero exit or a timeout). */
export function runGit(args: readonly string[], options: GitOptions): Promise<GitResult> {
  return new Promise<GitResult>((resolve, reject) => {
    const line = options.wrap ? options.wrap('git', [...args], definedOnly(options.env)) : { command: 'git', args: [...args], env: options.env, fd3: null };
    const child = spawn(line.command, line.args, {
      cwd: options.cwd,
      env: line.env,
      stdio: [options.stdin === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe', line.fd3 === null ? 'ignore' : 'pipe'],
      windowsHide: true,
      // Its own process group, so a timeout also kills git-remote-https, ssh, pack-objects …
      detached: process.platform !== 'win32',
    });
    let stdout = '';
    let stderr = '';
    let timedOut = false;
    let overflow = false;
    const kill = (): void => {
      try {
        if (child.pid !== undefined && process.platform !== 'win32') process.kill(-child.pid, 'SIGKILL');
        else child.kill('SIGKILL');
      } catch {
        child.kill('SIGKILL');
      }
    };
    const timer = setTimeout(() => {
      timedOut = true;
      kill();
    }, options.timeoutMs);
    const fd3 = child.stdio[3] as NodeJS.WritableStream | null;
    if (fd3 && line.fd3 !== null) {
      fd3.on('error', () => {});
      fd3.end(line.fd3);
    }
    if (options.stdin !== undefined) {
      child.stdin?.on('error', () => {});
      child.stdin?.end(options.stdin);
    }
    child.stdout!.setEncoding('utf8');
    child.stderr!.setEncoding('utf8');
    child.stdout!.on('data', (chunk: string) => {
      if (stdout.length + chunk.length > MAX_STDOUT) {
        overflow = true;
        kill();
      } else stdout += chunk;
    });
    child.stderr!.on('data', (chunk: string) => {
      stderr = (stderr + chunk).slice(-MAX_STDERR);
    });
    child.once('error', (err: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      reject(err.code === 'ENOENT' ? new WorkspaceError('git is not installed on the runner') : err);
    });
    child.once('close', (code) => {
      clearTimeout(timer);
      if (overflow) stderr += '\nfatal: git output too large';
      resolve({ code: overflow ? null : code, stdout, stderr, timedOut });
    });
  });
}

const AUTH_REFUSED = [
  /Authentication failed/i,
  /could not read (Username|Password)/i,
  /terminal prompts disabled/i,
  /returned error: 40[13]\b/,
  /HTTP Basic: Access denied/i,
  /Permission denied \(publickey/i,
];
const NOT_FOUND = [
  /Repository not found/i,
  /does not appear to be a git repository/i,
  /repository '[^']*' not found/i,
  /returned error: 404\b/,
  /No such file or directory/i,
  /not a git repository/i,
];

/** A short reason for a failed git call, for an error_message: no token, no URL credentials. */
export function gitFailureReason(result: GitResult, token: string, timeoutMs: number): string {
  if (result.timedOut) return `timed out after ${formatDuration(timeoutMs)}`;
  const stderr = result.stderr;
  if (AUTH_REFUSED.some((re) => re.test(stderr))) return 'authentication refused (check the repository access token)';
  if (NOT_FOUND.some((re) => re.test(stderr))) return 'repository not found';
  if (/Could not resolve host/i.test(stderr)) return 'host could not be resolved';
  if (/Connection refused|Failed to connect|Connection timed out|Network is unreachable/i.test(stderr)) {
    return 'could not connect to the host';
  }
  const lines = stderr
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '');
  const line = lines.find((l) => /^(fatal|error):/.test(l)) ?? lines[lines.length - 1];
  const reason = line === undefined ? `git exited with code ${String(result.code)}` : line.replace(/^(fatal|error):\s*/, '');
  return scrub(reason, token);
}

function formatDuration(ms: number): string {
  if (ms < 1000) return `${ms} ms`;
  const s = ms / 1000;
  return `${Number.isInteger(s) ? s : s.toFixed(1)} s`;
}

/** The URL as shown in messages: user-info (credentials) masked, never the token. */
export function displayUrl(url: string, token: string): string {
  return scrub(url, token);
}

const URL_SCHEMES = new Set(['http', 'https', 'ssh', 'git', 'file', 'git+ssh', 'ssh+git']);

/** Why `url` is refused as a remote, or null when it is usable. */
export function repoUrlProblem(url: string): string | null {
  if (url === '') return 'repository url is empty';
  if (url.length > 2048) return 'repository url is too long';
  // A leading dash would be read as an option (e.g. --upload-pack=<command>).
  if (url.startsWith('-')) return 'repository url must not start with "-"';
  // eslint-disable-next-line no-control-regex
  if (/[\x00-\x1f\x7f]/.test(url)) return 'repository url contains control characters';
  // `<transport>::<address>` runs a remote helper program (ext::, fd::, …).
  if (/^[A-Za-z][A-Za-z0-9+.-]*::/.test(url)) return 'repository url names a remote helper transport, which is not allowed';
  const scheme = /^([A-Za-z][A-Za-z0-9+.-]*):\/\//.exec(url);
  if (scheme && !URL_SCHEMES.has(scheme[1].toLowerCase())) return `repository url scheme "${scheme[1]}" is not supported`;
  return null;
}

/**
 * Why `name` is refused as a branch name, or null when it is usable: git's check-ref-format
 * rules for a branch, plus no leading dash (an option) and not `HEAD`.
 */
export function branchNameProblem(name: string): string | null {
  const bad = (why: string): string => `branch name ${JSON.stringify(name.slice(0, 100))} ${why}`;
  if (name === '') return 'branch name is empty';
  if (name.length > 255) return bad('is too long');
  if (name.startsWith('-')) return bad('must not start with "-"');
  if (name === 'HEAD' || name === '@') return bad('is reserved');
  if (name.includes('..')) return bad('must not contain ".."');
  if (name.includes('@{')) return bad('must not contain "@{"');
  // eslint-disable-next-line no-control-regex
  if (/[\x00-\x20\x7f~^:?*[\\]/.test(name)) return bad('contains a character git does not allow');
  if (name.startsWith('/') || name.endsWith('/') || name.includes('//')) return bad('has an empty path component');
  if (name.endsWith('.')) return bad('must not end with "."');
  for (const part of name.split('/')) {
    if (part.startsWith('.')) return bad('has a component starting with "."');
    if (part.endsWith('.lock')) return bad('has a component ending with ".lock"');
  }
  return null;
}
