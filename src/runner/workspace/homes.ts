/**
 * Pods' HOME directories (docs/runners.md "HOME"): each pod gets its own, seeded by copying the
 * runner's template `<work dir>/agent-home/`, where the operator keeps agent configuration
 * (`.codex/config.toml`, `.gemini/settings.json`, `.config/opencode/opencode.json`,
 * `.claude/settings.json`, `.gitconfig` …). Agents keep their sessions and transcripts under HOME,
 * so one pod never sees another's; the runs of one persistent loop share one HOME (sessions resume).
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import { runGit } from './git.ts';

export class AgentHomes {
  constructor(
    /** The template directory; it need not exist (then HOMEs start empty). */
    readonly template: string,
  ) {}

  /** Creates `home` as a copy of the template (symlinks copied as they are, never followed). */
  async seed(home: string): Promise<void> {
    await fs.mkdir(path.dirname(home), { recursive: true });
    try {
      await fs.cp(this.template, home, { recursive: true, verbatimSymlinks: true, errorOnExist: false, force: true });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    }
    await fs.mkdir(home, { recursive: true, mode: 0o700 });
    await fs.chmod(home, 0o700);
  }

  /** Whether the template gives agents a git identity (`user.email` in its `.gitconfig`). */
  async hasGitIdentity(): Promise<boolean> {
    const file = path.join(this.template, '.gitconfig');
    try {
      await fs.access(file);
    } catch {
      return false;
    }
    const result = await runGit(['config', '--file', file, '--get', 'user.email'], {
      cwd: this.template,
      env: { PATH: process.env.PATH, GIT_CONFIG_NOSYSTEM: '1' },
      timeoutMs: 10_000,
    });
    return result.code === 0 && result.stdout.trim() !== '';
  }
}
