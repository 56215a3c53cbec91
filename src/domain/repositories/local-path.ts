import { stat } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** The directory a local clone URL (an absolute path or file://) names; null for remote URLs. */
function localPath(url: string): string | null {
  if (url.startsWith('/')) return url;
  if (/^file:\/\//i.test(url)) {
    try {
      return fileURLToPath(url);
    } catch {
      return null;
    }
  }
  return null;
}

async function isDirectory(p: string): Promise<boolean> {
  try {
    return (await stat(p)).isDirectory();
  } catch {
    return false;
  }
}

async function exists(p: string): Promise<boolean> {
  try {
    await stat(p);
    return true;
  } catch {
    return false;
  }
}

/**
 * Why a local repository URL cannot be cloned (docs/api.md "Callbacks and repositories"): the path does not
 * exist, is not a directory, or is not a git repository (a work tree with `.git`, or a bare one with
 * `HEAD` and `objects`). Null when it is one, and for remote URLs, which are not contacted at
 * registration. Read on the server's file system, where the embedded local runner clones from.
 */
export async function localRepositoryProblem(url: string): Promise<string | null> {
  const dir = localPath(url);
  if (dir === null) return null;
  if (!(await exists(dir))) return `names ${dir}, which does not exist`;
  if (!(await isDirectory(dir))) return `names ${dir}, which is not a directory`;
  if (await exists(path.join(dir, '.git'))) return null;
  if ((await exists(path.join(dir, 'HEAD'))) && (await isDirectory(path.join(dir, 'objects')))) return null;
  return `names ${dir}, which is not a git repository (no .git, and not a bare repository)`;
}
