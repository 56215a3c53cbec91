/**
 * Git repositories for tests: a bare "origin" with a `main` branch (and more), built with a git
 * that ignores every configuration of the machine.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

/** git in `cwd` with a fixed identity and no global or system configuration. */
export function fixtureGit(cwd: string, ...args: string[]): string {
  return execFileSync('git', ['-c', 'user.name=Fixture', '-c', 'user.email=fixture@example.com', '-c', 'commit.gpgsign=false', ...args], {
    cwd,
    stdio: 'pipe',
    encoding: 'utf8',
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: cwd, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null', GIT_TERMINAL_PROMPT: '0' },
  }).trim();
}

/**
 * A bare repository `<root>/<name>.git` whose `main` holds `files` (path → content), and a working
 * clone beside it to push more from; returns both paths.
 */
export function bareRepository(root: string, name: string, files: Record<string, string>): { bare: string; work: string } {
  const bare = path.join(root, `${name}.git`);
  const work = path.join(root, `${name}-work`);
  fixtureGit(root, 'init', '--quiet', '--bare', '--initial-branch=main', bare);
  fixtureGit(root, 'init', '--quiet', '--initial-branch=main', work);
  for (const [file, content] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(work, file)), { recursive: true });
    fs.writeFileSync(path.join(work, file), content);
  }
  fixtureGit(work, 'add', '--all');
  fixtureGit(work, 'commit', '--quiet', '-m', 'initial');
  fixtureGit(work, 'push', '--quiet', bare, 'main');
  return { bare, work };
}
