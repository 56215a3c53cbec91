/**
 * Files in a pod's own tree (its HOME, its autopilot state directory), which the pod's agent can
 * write and so can fill with symbolic links, FIFOs and devices. The runner reads and writes them
 * without trusting any of it (docs/runners.md "What the runner touches in a pod"):
 *
 * - every path component is opened relative to the directory opened before it, never following a
 *   link: an openat() walk, done through /proc/self/fd/<dir>/<name> (Node has no openat; opening
 *   through that link resolves the held directory, and O_NOFOLLOW covers the last name);
 * - only regular files are read, opened non-blocking (a FIFO cannot hang the runner) and capped
 *   in size;
 * - a file is written to a new temporary file beside it and renamed over it, so a link planted at
 *   its name is replaced, not followed.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import type { HomeConfigChange } from '../agents/mcp.ts';

const { O_RDONLY, O_WRONLY, O_CREAT, O_EXCL, O_NOFOLLOW, O_NONBLOCK, O_DIRECTORY } = fs.constants;

/** Something in the pod's tree is not what the runner expects (a link, a FIFO, too big). */
export class PodTreeError extends Error {}

const at = (dirFd: number, name: string): string => `/proc/self/fd/${dirFd}/${name}`;

function components(relative: string): string[] {
  const parts = relative.split('/').filter((part) => part !== '' && part !== '.');
  if (parts.length === 0 || parts.includes('..')) throw new PodTreeError(`not a path inside the pod's tree: ${relative}`);
  return parts;
}

function openDirectory(path: string, shown: string): number {
  try {
    return fs.openSync(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ELOOP' || code === 'ENOTDIR') throw new PodTreeError(`${shown} is not a directory (a link or a file)`);
    throw error;
  }
}

/**
 * The directory holding `relative` below `root`, opened (the caller closes it), and the last
 * name. With `create`, missing directories are made (mode 0700).
 */
function openParent(root: string, relative: string, create: boolean): { dirFd: number; name: string } | null {
  const parts = components(relative);
  let dirFd = openDirectory(root, root);
  try {
    for (const [index, part] of parts.slice(0, -1).entries()) {
      const shown = parts.slice(0, index + 1).join('/');
      if (create) {
        try {
          fs.mkdirSync(at(dirFd, part), { mode: 0o700 });
        } catch (error) {
          if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
        }
      }
      let next: number;
      try {
        next = openDirectory(at(dirFd, part), shown);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ENOENT' && !create) return null;
        throw error;
      }
      fs.closeSync(dirFd);
      dirFd = next;
    }
    return { dirFd, name: parts[parts.length - 1] };
  } catch (error) {
    fs.closeSync(dirFd);
    throw error;
  }
}

/** The text of the regular file `relative` below `root`; null when it does not exist. */
export function readPodFile(root: string, relative: string, maxBytes: number): string | null {
  const parent = openParent(root, relative, false);
  if (!parent) return null;
  let fd: number;
  try {
    fd = fs.openSync(at(parent.dirFd, parent.name), O_RDONLY | O_NOFOLLOW | O_NONBLOCK);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return null;
    if (code === 'ELOOP') throw new PodTreeError(`${relative} is a symbolic link`);
    throw error;
  } finally {
    fs.closeSync(parent.dirFd);
  }
  try {
    const stat = fs.fstatSync(fd);
    if (!stat.isFile()) throw new PodTreeError(`${relative} is not a regular file`);
    if (stat.size > maxBytes) throw new PodTreeError(`${relative} is larger than ${maxBytes} bytes`);
    const buffer = Buffer.alloc(maxBytes + 1);
    let length = 0;
    for (;;) {
      const read = fs.readSync(fd, buffer, length, buffer.length - length, null);
      if (read === 0) break;
      length += read;
      if (length > maxBytes) throw new PodTreeError(`${relative} is larger than ${maxBytes} bytes`);
    }
    return buffer.subarray(0, length).toString('utf8');
  } finally {
    fs.closeSync(fd);
  }
}

/** Writes `text` to `relative` below `root` (directories made as needed) by renaming a new file over it. */
export function writePodFile(root: string, relative: string, text: string): void {
  const parent = openParent(root, relative, true)!;
  try {
    const temporary = `.${parent.name}.drover-${randomBytes(6).toString('hex')}`;
    const fd = fs.openSync(at(parent.dirFd, temporary), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0o600);
    try {
      fs.writeFileSync(fd, text);
    } finally {
      fs.closeSync(fd);
    }
    try {
      fs.renameSync(at(parent.dirFd, temporary), at(parent.dirFd, parent.name));
    } catch (error) {
      fs.rmSync(at(parent.dirFd, temporary), { force: true });
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'EISDIR' || code === 'ENOTEMPTY' || code === 'EEXIST') throw new PodTreeError(`${relative} is a directory`);
      throw error;
    }
  } finally {
    fs.closeSync(parent.dirFd);
  }
}

/** The most of an agent's config file the runner reads. */
const MAX_CONFIG_BYTES = 1024 * 1024;

/** The file as an object ({} when missing), null when it is not a JSON object. */
function readJsonObject(root: string, file: string): Record<string, unknown> | null {
  const text = readPodFile(root, file, MAX_CONFIG_BYTES);
  if (text === null) return {};
  try {
    const parsed: unknown = JSON.parse(text);
    return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

/**
 * Applies each change to its JSON file below `root`, keeping what else the file holds. Stops at the
 * first file that is a link, not a regular file, too large or not a JSON object (JSONC with
 * comments, say), and answers why (naming the file); null when every change was written.
 */
export function updatePodJsonFiles(root: string, changes: readonly HomeConfigChange[]): string | null {
  for (const change of changes) {
    let existing: Record<string, unknown> | null;
    try {
      existing = readJsonObject(root, change.file);
      if (existing !== null) writePodFile(root, change.file, `${JSON.stringify(change.update(existing), null, 2)}\n`);
    } catch (error) {
      if (!(error instanceof PodTreeError)) throw error;
      return error.message;
    }
    if (existing === null) return `${change.file} is not a JSON object`;
  }
  return null;
}
