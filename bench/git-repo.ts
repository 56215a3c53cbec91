/** Real git for the benches that need a repository: delivery and checkout share its seeding. */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

/** git as a bench user, with no system or global configuration of the machine. */
export function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', ['-c', 'user.name=Bench', '-c', 'user.email=bench@example.com', ...args], {
    cwd,
    encoding: 'utf8',
    env: { PATH: process.env.PATH, HOME: cwd, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null' },
    maxBuffer: 64 * 1024 * 1024,
  });
}

/**
 * A bare `origin.git` under `root` whose `main` holds `files` files in 50 directories, of
 * incompressible content of a source file's size (so object sizes are realistic); the clone it was
 * pushed from is `seed`.
 */
export function seedRepository(root: string, files: number): { origin: string; seed: string } {
  const origin = path.join(root, 'origin.git');
  const seed = path.join(root, 'seed');
  git(root, 'init', '--quiet', '--bare', '--initial-branch=main', origin);
  git(root, 'init', '--quiet', '--initial-branch=main', seed);
  for (let i = 0; i < files; i++) {
    const dir = path.join(seed, `dir${i % 50}`);
    fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(path.join(dir, `file${i}.txt`), `${randomBytes(600 + (i % 2000)).toString('base64')}\n`);
  }
  git(seed, 'add', '--all');
  git(seed, 'commit', '--quiet', '-m', 'five thousand files');
  git(seed, 'push', '--quiet', origin, 'main');
  return { origin, seed };
}
