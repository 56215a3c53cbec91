/**
 * A plain git remote: `git ls-remote --heads -- <url>`, spawned directly (never through a shell),
 * with the environment of src/git/environment.ts (the token as a header scoped to the URL, never
 * in argv; no credential helpers, askpass or prompts).
 * The child runs in its own process group, killed as a whole when the budget is spent, so
 * git-remote-https helpers do not linger.
 */
import { spawn } from 'node:child_process';
import os from 'node:os';
import { gitEnv } from '../../../git/environment.ts';
import { scrub } from '../../../git/scrub.ts';
import { ProviderError, type ProviderCall, type ProviderTarget } from './types.ts';

const MAX_OUTPUT = 32 * 1024 * 1024;

const REJECTED = [
  /Authentication failed/i,
  /could not read (Username|Password)/i,
  /terminal prompts disabled/i,
  /returned error: 40[13]\b/,
  /HTTP Basic: Access denied/i,
];

function classify(stderr: string, token: string): ProviderError {
  const fatal = stderr
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '');
  const reason = fatal.find((l) => l.startsWith('fatal:')) ?? fatal[fatal.length - 1] ?? 'no error output';
  if (REJECTED.some((re) => re.test(stderr))) {
    return new ProviderError('rejected', `git remote rejected the access token: ${scrub(reason, token)}`);
  }
  return new ProviderError('unavailable', `git ls-remote failed: ${scrub(reason, token)}`);
}

export function parseLsRemote(stdout: string): string[] {
  const names: string[] = [];
  for (const line of stdout.split('\n')) {
    const m = /^[0-9a-f]{40,64}\trefs\/heads\/(.+)$/.exec(line.replace(/\r$/, ''));
    if (m) names.push(m[1]);
  }
  return names;
}

export async function listBranches(target: ProviderTarget, call: ProviderCall): Promise<string[]> {
  const url = target.url.trim();
  // A leading dash would be read as an option (e.g. --upload-pack=<command>).
  if (url === '' || url.startsWith('-') || /[\0\n\r]/.test(url)) {
    throw new ProviderError('unavailable', 'git url is not a usable remote');
  }
  if (call.signal.aborted) throw new ProviderError('unavailable', 'git remote did not answer in time');

  return new Promise<string[]>((resolve, reject) => {
    // spawn rather than execFile: it types `detached`, which puts git and its transport
    // helpers in their own process group so a timeout can kill them all. No shell either way.
    const child = spawn('git', ['ls-remote', '--heads', '--', url], {
      env: gitEnv(url, call.token),
      cwd: os.tmpdir(), // never inside some repository whose remotes `url` could name
      stdio: ['ignore', 'pipe', 'pipe'],
      windowsHide: true,
      detached: process.platform !== 'win32',
    });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    let size = 0;
    let failure: ProviderError | null = null;
    const collect = (into: Buffer[]) => (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_OUTPUT) stop(new ProviderError('unavailable', 'git ls-remote output too large'));
      else into.push(chunk);
    };
    child.stdout.on('data', collect(out));
    child.stderr.on('data', collect(err));

    function stop(reason: ProviderError): void {
      failure ??= reason;
      try {
        if (child.pid !== undefined && process.platform !== 'win32') process.kill(-child.pid, 'SIGKILL');
        else child.kill('SIGKILL');
      } catch {
        child.kill('SIGKILL');
      }
    }
    const onAbort = (): void => stop(new ProviderError('unavailable', `git remote did not answer within ${call.timeoutMs} ms`));
    call.signal.addEventListener('abort', onAbort, { once: true });

    child.once('error', (e: NodeJS.ErrnoException) => {
      call.signal.removeEventListener('abort', onAbort);
      reject(e.code === 'ENOENT' ? new ProviderError('unavailable', 'git is not installed on the server') : e);
    });
    child.once('close', (code) => {
      call.signal.removeEventListener('abort', onAbort);
      if (failure) return reject(failure);
      if (code === 0) return resolve(parseLsRemote(Buffer.concat(out).toString('utf8')));
      reject(classify(Buffer.concat(err).toString('utf8'), call.token));
    });
  });
}
