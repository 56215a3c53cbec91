/**
 * The disk a pod uses (docs/runners.md "Limits"): its workspace and HOME, measured without
 * following a link, each file counted once (hard links), by the blocks it really takes (a sparse
 * file counts for what it holds). The walk yields to the event loop between directories.
 */
import fs from 'node:fs/promises';
import path from 'node:path';

/** Stop counting past this: the pod is over its limit whatever the rest holds. */
export async function diskUsage(roots: string[], stopAboveBytes = Number.POSITIVE_INFINITY): Promise<number> {
  const seen = new Set<string>();
  let total = 0;
  const pending = [...roots];
  while (pending.length > 0 && total <= stopAboveBytes) {
    const dir = pending.pop()!;
    let entries: string[];
    try {
      entries = await fs.readdir(dir);
    } catch {
      continue;
    }
    for (const name of entries) {
      const full = path.join(dir, name);
      let stat: import('node:fs').Stats;
      try {
        stat = await fs.lstat(full);
      } catch {
        continue;
      }
      const id = `${stat.dev}:${stat.ino}`;
      if (seen.has(id)) continue;
      seen.add(id);
      total += stat.blocks * 512;
      if (stat.isDirectory()) pending.push(full);
    }
  }
  return total;
}

/**
 * Measures `roots` again and again (the next measurement starts a moment after the last ended, so
 * a big tree costs proportionally less often) and calls `exceeded` once when they hold more than
 * `limitBytes`. The first starts 0.5–1 s after the call; a measurement starts at least every 2 s, so a pod is stopped within a few seconds
 * of crossing its limit.
 */
export function watchDisk(roots: string[], limitBytes: number, exceeded: () => void): { stop(): void } {
  let stopped = false;
  let timer: NodeJS.Timeout | null = null;
  const measure = async (): Promise<void> => {
    const started = Date.now();
    const used = await diskUsage(roots, limitBytes);
    if (stopped) return;
    if (used > limitBytes) {
      stopped = true;
      exceeded();
      return;
    }
    const took = Date.now() - started;
    timer = setTimeout(() => void measure(), Math.min(2000, Math.max(500, took * 2)));
    timer.unref();
  };
  // The first measurement 0.5 to 1 s after the start, spread: the pods of a burst do not all
  // measure at once while the rest of the burst still prepares (docs/runners.md "What a pod start costs").
  timer = setTimeout(() => void measure(), 500 + Math.floor(Math.random() * 500));
  timer.unref();
  return {
    stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
    },
  };
}
