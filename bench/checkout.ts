/**
 * Checkout bench: `npx tsx bench/checkout.ts` (or `run()` from another script).
 *
 * What a pod's checkout costs on a repository of 5,000 files (BENCH_CHECKOUT_FILES), now that each
 * pod gets a repository of its own (docs/runners.md "Git") that borrows the runner's clone cache's
 * objects read-only instead of being a worktree of it. The WorkspaceManager of the runner prepares
 * and releases workspaces for BENCH_CHECKOUT_PODS (20) pods one after another, on a warm cache (the
 * first prepare, which clones, is reported apart), and the disk each checkout's `.git` takes is
 * compared with the cache's objects and with a full local clone (`git clone --no-local`), which is
 * what copying the objects would cost.
 */
import fs from 'node:fs';
import path from 'node:path';
import { WorkspaceManager } from '../src/runner/workspaces.ts';
import { git, seedRepository } from './git-repo.ts';
import { log, machineLine, makeTempDir, removeTempDir, round, runIfMain, summary, type Row } from './harness.ts';

const FILES = Number(process.env.BENCH_CHECKOUT_FILES ?? 5000);
const PODS = Number(process.env.BENCH_CHECKOUT_PODS ?? 20);


/** Bytes under `dir` (files only, symlinks not followed). */
function diskBytes(dir: string): number {
  let total = 0;
  for (const entry of fs.readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (entry.isFile()) total += fs.statSync(path.join(entry.parentPath, entry.name)).size;
  }
  return total;
}

const mb = (bytes: number) => `${round(bytes / 1024 / 1024, 1)} MB`;

export async function run(): Promise<{ rows: Row[] }> {
  log(`checkout bench on ${machineLine()}`);
  const root = makeTempDir('checkout');
  try {
    const { origin } = seedRepository(root, FILES);
    log(`repository of ${FILES} files ready; preparing ${PODS} pod workspaces …`);

    const manager = new WorkspaceManager(path.join(root, 'runner'));
    const repo = { url: origin, defaultBranch: 'main' };
    let started = performance.now();
    const first = await manager.prepare({ podKey: 'p-first', repo });
    const firstMs = performance.now() - started;
    await manager.release('p-first', { keep: false });

    const times: number[] = [];
    let gitBytes = 0;
    for (let i = 0; i < PODS; i++) {
      const podKey = `p-${i}`;
      started = performance.now();
      const ws = await manager.prepare({ podKey, repo });
      times.push(performance.now() - started);
      if (i === 0) gitBytes = diskBytes(path.join(ws.path, '.git'));
      await manager.release(podKey, { keep: false });
    }
    const cacheObjects = diskBytes(first.readOnly[0]);
    const copy = path.join(root, 'copy');
    git(root, 'clone', '--quiet', '--no-local', '--no-checkout', origin, copy);
    const copyBytes = diskBytes(path.join(copy, '.git'));
    const t = summary(times);
    return {
      rows: [
        { name: `prepare a pod workspace (${FILES} files, warm cache) p50 / p90 / max, ${t.n} pods`, value: `${round(t.p50, 1)} ms / ${round(t.p90, 1)} ms / ${round(t.max, 1)} ms` },
        { name: 'first prepare (clones the cache)', value: `${round(firstMs, 1)} ms` },
        { name: 'a checkout’s .git on disk (index, refs; objects borrowed)', value: mb(gitBytes) },
        { name: 'the clone cache’s objects (shared read-only by every checkout)', value: mb(cacheObjects) },
        { name: 'a full local clone’s .git, for comparison (objects copied)', value: mb(copyBytes) },
      ],
    };
  } finally {
    removeTempDir(root);
  }
}

runIfMain(import.meta.url, 'Checkouts: a pod’s own repository on 5,000 files', run);
