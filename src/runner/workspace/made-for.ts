/**
 * `persistent/<key>/made-for.json` (../workspaces.ts): which repository and branch a persistent
 * workspace was made for, and the commit up to which its work is delivered (docs/agents.md
 * "Getting the work back"). Written by the runner in its own directory, beside the workspace.
 */
import fs from 'node:fs/promises';
import path from 'node:path';

export interface MadeFor {
  cache: string | null;
  branch: string | null;
  /** The commit up to which the work is delivered (pushed, or nothing to push); null: unknown. */
  delivered: string | null;
}

const FILE = 'made-for.json';

export async function readMadeFor(dir: string): Promise<MadeFor | null> {
  try {
    const value = JSON.parse(await fs.readFile(path.join(dir, FILE), 'utf8')) as Partial<MadeFor> | null;
    if (typeof value !== 'object' || value === null) return null;
    return { cache: value.cache ?? null, branch: value.branch ?? null, delivered: typeof value.delivered === 'string' ? value.delivered : null };
  } catch {
    return null;
  }
}

/** Replaces the file whole (a new file renamed over it: a crash leaves the old one or the new one). */
export async function writeMadeFor(dir: string, madeFor: MadeFor): Promise<void> {
  const temp = path.join(dir, `${FILE}.tmp`);
  await fs.writeFile(temp, JSON.stringify(madeFor));
  await fs.rename(temp, path.join(dir, FILE));
}
