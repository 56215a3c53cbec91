import fs from 'node:fs/promises';

export async function exists(p: string): Promise<boolean> {
  try {
    await fs.lstat(p);
    return true;
  } catch {
    return false;
  }
}

export async function listDir(dir: string): Promise<string[]> {
  try {
    return await fs.readdir(dir);
  } catch {
    return [];
  }
}

/** rm -rf; a symlink is removed itself, never followed. */
export async function removeTree(p: string): Promise<void> {
  await fs.rm(p, { recursive: true, force: true, maxRetries: 3, retryDelay: 100 });
}
