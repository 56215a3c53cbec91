/**
 * The `git` provider against real repositories: a bare repository in a temp dir, read as a
 * local path, a file:// URL, and over HTTP through `git http-backend` run as CGI by a tiny
 * node:http server that demands Basic credentials.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { basicAuth, gitHttpServer } from '../helpers/git-http.ts';
import { parseLsRemote } from '../../src/domain/repositories/providers/git.ts';
import { gitEnv } from '../../src/git/environment.ts';
import { listBranches, listMergeRequests, type ProviderTarget } from '../../src/domain/repositories/providers/index.ts';
import { hang, providerError, startMockProvider, type MockProvider } from './helpers.ts';
import { unusedPort } from '../helpers/ports.ts';

const TOKEN = 'glpat-RightToken-xyz987';
const EXPECTED_AUTH = basicAuth(TOKEN);
const BRANCHES = ['feature/one', 'fix/two', 'main'];

let tmp: string;
let projectRoot: string;
let bare: string;
let server: http.Server;
let origin: string;
const seenAuth: (string | undefined)[] = [];
let silent: MockProvider;

const target = (url: string): ProviderTarget => ({ provider: 'git', fullName: 'acme/app', url, apiBaseUrl: null });

/** Runs git for the fixture with a clean, predictable configuration. */
function git(cwd: string, ...args: string[]): void {
  execFileSync(
    'git',
    ['-c', 'user.name=Test', '-c', 'user.email=test@example.com', '-c', 'commit.gpgsign=false', '-c', 'init.defaultBranch=main', ...args],
    { cwd, stdio: 'pipe', env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: os.devNull, GIT_TERMINAL_PROMPT: '0' } },
  );
}

/** The repositories over HTTP; records what every request carried. */
function cgiServer(): http.Server {
  return gitHttpServer({
    root: () => projectRoot,
    token: TOKEN,
    onRequest: (req) => {
      seenAuth.push(req.headers.authorization);
    },
  });
}

beforeAll(async () => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'drover-git-provider-'));
  projectRoot = path.join(tmp, 'srv');
  bare = path.join(projectRoot, 'app.git');
  const work = path.join(tmp, 'work');
  fs.mkdirSync(projectRoot);
  fs.mkdirSync(work);
  git(projectRoot, 'init', '--bare', '-q', bare);
  git(work, 'init', '-q');
  fs.writeFileSync(path.join(work, 'README.md'), 'hello\n');
  git(work, 'add', 'README.md');
  git(work, 'commit', '-q', '-m', 'first');
  git(work, 'branch', 'feature/one');
  git(work, 'checkout', '-q', '-b', 'fix/two');
  fs.writeFileSync(path.join(work, 'fix.txt'), 'fix\n');
  git(work, 'add', 'fix.txt');
  git(work, 'commit', '-q', '-m', 'fix');
  git(work, 'push', '-q', bare, 'main', 'feature/one', 'fix/two', 'HEAD:refs/tags/v1.0');

  server = cgiServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  silent = await startMockProvider();
  silent.handle(hang);
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  await silent.close();
  fs.rmSync(tmp, { recursive: true, force: true });
});

describe('git provider, local repositories', () => {
  it('lists branches (not tags) of a bare repository given as a path', async () => {
    await expect(listBranches(target(bare), '')).resolves.toEqual(BRANCHES);
  });

  it('and as a file:// URL', async () => {
    await expect(listBranches(target(pathToFileURL(bare).href), TOKEN)).resolves.toEqual(BRANCHES);
  });

  it('a path that is not a repository is unavailable', async () => {
    const err = await providerError(listBranches(target(path.join(tmp, 'nope.git')), TOKEN));
    expect(err.kind).toBe('unavailable');
    expect(err.message).toContain('does not appear to be a git repository');
  });

  it('refuses a URL that git would read as an option, without running anything', async () => {
    const marker = path.join(tmp, 'pwned');
    const err = await providerError(listBranches(target(`--upload-pack=touch ${marker}`), TOKEN));
    expect(err.kind).toBe('unavailable');
    expect(fs.existsSync(marker)).toBe(false);
  });

  it('has no merge requests', async () => {
    await expect(listMergeRequests(target(bare), TOKEN, { state: 'all' })).resolves.toEqual([]);
  });
});

describe('git provider over HTTP (git http-backend)', () => {
  it('lists branches with the right token, sent as Basic credentials in the Authorization header', async () => {
    seenAuth.length = 0;
    await expect(listBranches(target(`${origin}/app.git`), TOKEN)).resolves.toEqual(BRANCHES);
    expect(seenAuth.length).toBeGreaterThan(0);
    expect(seenAuth.every((a) => a === EXPECTED_AUTH)).toBe(true);
  });

  it('a wrong token is rejected, and the message does not contain it', async () => {
    const wrong = 'glpat-WrongToken-000';
    const err = await providerError(listBranches(target(`${origin}/app.git`), wrong));
    expect(err.kind).toBe('rejected');
    expect(err.message).not.toContain(wrong);
  });

  it('no token at all is rejected (git may not prompt)', async () => {
    expect((await providerError(listBranches(target(`${origin}/app.git`), ''))).kind).toBe('rejected');
  });

  it('an unknown repository on a reachable server is unavailable', async () => {
    const err = await providerError(listBranches(target(`${origin}/missing.git`), TOKEN));
    expect(err.kind).toBe('unavailable');
  });

  it('a closed port is unavailable', async () => {
    const port = await unusedPort();
    const err = await providerError(listBranches(target(`http://127.0.0.1:${port}/app.git`), TOKEN));
    expect(err.kind).toBe('unavailable');
    expect(err.message).toMatch(/Failed to connect|Connection refused|Couldn't connect/i);
  });

  it('a server that never answers is unavailable within the timeout', async () => {
    const started = Date.now();
    const err = await providerError(listBranches(target(`${silent.origin}/app.git`), TOKEN, { timeoutMs: 500 }));
    const elapsed = Date.now() - started;
    expect(err.kind).toBe('unavailable');
    expect(err.message).toContain('500 ms');
    expect(elapsed).toBeGreaterThanOrEqual(450);
    expect(elapsed).toBeLessThan(2_000);
  });

  it('URL user-info never ends up in an error message', async () => {
    const port = await unusedPort();
    const err = await providerError(listBranches(target(`http://someone:hunter2@127.0.0.1:${port}/app.git`), TOKEN));
    expect(err.message).not.toContain('hunter2');
  });
});

describe('git provider internals', () => {
  it('puts the token only in the environment, scoped to the registered URL, and only for http(s) remotes', () => {
    const env = gitEnv('https://git.example/app.git', TOKEN);
    const pairs = Array.from({ length: Number(env.GIT_CONFIG_COUNT) }, (_, i) => [env[`GIT_CONFIG_KEY_${i}`], env[`GIT_CONFIG_VALUE_${i}`]]);
    expect(pairs).toContainEqual(['http.https://git.example/app.git.extraHeader', EXPECTED_AUTH.replace(/^/, 'Authorization: ')]);
    // The unscoped header only ever resets what the machine's configuration may have set.
    expect(pairs.filter(([key]) => key === 'http.extraHeader')).toEqual([['http.extraHeader', '']]);
    expect(pairs).toContainEqual(['credential.helper', '']);
    expect(env.GIT_TERMINAL_PROMPT).toBe('0');
    const local = gitEnv('/srv/app.git', TOKEN);
    expect(Object.values(local).some((v) => v?.includes(Buffer.from(`x-access-token:${TOKEN}`).toString('base64')))).toBe(false);
  });

  it('parses refs/heads lines only', () => {
    const sha = 'a'.repeat(40);
    expect(parseLsRemote(`${sha}\trefs/heads/main\n${sha}\trefs/heads/a/b\r\n${sha}\trefs/tags/v1\n${sha}\tHEAD\n`)).toEqual(['main', 'a/b']);
  });
});
