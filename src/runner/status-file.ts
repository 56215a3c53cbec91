import fs from 'node:fs';

/**
 * The status an autopilot iteration wrote. The file is in a directory the agent can write, so it
 * is opened without following a symlink (the runner must never read a file of its own for the
 * agent), and only a small regular file is taken.
 */
export function readStatus(file: string): { status: string; summary?: string } | null {
  let fd: number;
  try {
    fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW | fs.constants.O_NONBLOCK);
  } catch {
    return null;
  }
  try {
    const stat = fs.fstatSync(fd);
    if (!stat.isFile() || stat.size > 64 * 1024) return null;
    const value = JSON.parse(fs.readFileSync(fd, 'utf8')) as { status?: unknown; summary?: unknown };
    if (typeof value.status !== 'string') return null;
    return { status: value.status, summary: typeof value.summary === 'string' ? value.summary : undefined };
  } catch {
    return null;
  } finally {
    fs.closeSync(fd);
  }
}
