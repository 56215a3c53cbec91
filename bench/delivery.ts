/**
 * Delivery bench: `npx tsx bench/delivery.ts` (or `run()` from another script).
 *
 * What delivering a pod's work costs after its agent exits (docs/agents.md "Getting the work
 * back"), on a repository of 5,000 files (BENCH_DELIVERY_FILES): the runner's capture inside the
 * pod's bwrap sandbox (commit the uncommitted change, bundle what the cache lacks), the commit
 * list, diff stat and patch from its cache, and the push to the registered repository. The
 * baseline, interleaved in the same run after a warm-up: the same change delivered by hand
 * outside any sandbox (`git add -A && git commit && git push` in the checkout).
 * Each round is a fresh pod workspace with one changed file and one new file.
 * Then "pod end → delivery recorded" (./delivery-recorded.ts): real pods through a real server
 * and its local runner, from the agent's last line to the delivery visible through the API
 * (BENCH_DELIVERY_RECORDED_ROUNDS, default the same number of rounds).
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { deliverPod } from '../src/runner/delivery/index.ts';
import { openSandbox } from '../src/runner/sandbox/index.ts';
import { WorkspaceManager } from '../src/runner/workspaces.ts';
import { podEndToRecorded } from './delivery-recorded.ts';
import { git, seedRepository } from './git-repo.ts';
import { log, machineLine, makeTempDir, removeTempDir, round, runIfMain, summary, type Row } from './harness.ts';

const FILES = Number(process.env.BENCH_DELIVERY_FILES ?? 5000);
const ROUNDS = Number(process.env.BENCH_DELIVERY_ROUNDS ?? 10);
const WARMUP = 2;
const RECORDED_ROUNDS = Number(process.env.BENCH_DELIVERY_RECORDED_ROUNDS ?? ROUNDS);

function change(workspace: string, round: number): void {
  fs.appendFileSync(path.join(workspace, 'dir7', 'file7.txt'), `round ${round}\n`);
  fs.writeFileSync(path.join(workspace, `new-${round}.txt`), `${randomBytes(800).toString('base64')}\n`);
}

export async function run(): Promise<{ rows: Row[] }> {
  log(`delivery bench on ${machineLine()}`);
  const root = makeTempDir('delivery');
  try {
    const { origin } = seedRepository(root, FILES);
    const workDir = path.join(root, 'runner');
    const sandbox = await openSandbox('bwrap', { workDir, pathEnv: process.env.PATH ?? '/usr/bin:/bin' });
    const manager = new WorkspaceManager(workDir, { sandbox });
    const repo = { url: origin, defaultBranch: 'main' };
    const ours: number[] = [];
    const byHand: number[] = [];
    log(`repository of ${FILES} files ready; ${WARMUP} warm-up and ${ROUNDS} measured rounds …`);
    for (let i = 0; i < WARMUP + ROUNDS; i++) {
      // Drover's delivery
      const podKey = `p-bench-${i}`;
      const ws = await manager.prepare({ podKey, repo });
      change(ws.path, i);
      let started = performance.now();
      const report = await deliverPod(
        { key: podKey, repo: { url: origin, token: null, default_branch: 'main' }, deliver: { mode: 'branch', branch: null } },
        ws,
        { sandbox, outDir: manager.deliveryDir(podKey) },
      );
      const oursMs = performance.now() - started;
      if (report?.status !== 'pushed') throw new Error(`delivery did not push: ${JSON.stringify({ ...report, patch: undefined })}`);
      await manager.release(podKey, { keep: false });
      // The baseline: the same change pushed by hand, no sandbox
      const handKey = `p-hand-${i}`;
      const hand = await manager.prepare({ podKey: handKey, repo });
      change(hand.path, i);
      started = performance.now();
      git(hand.path, 'add', '--all');
      git(hand.path, 'commit', '--quiet', '--no-verify', '-m', 'by hand');
      git(hand.path, 'push', '--quiet', origin, `HEAD:refs/heads/by-hand/${i}`);
      const handMs = performance.now() - started;
      await manager.release(handKey, { keep: false });
      if (i >= WARMUP) {
        ours.push(oursMs);
        byHand.push(handMs);
      }
    }
    const a = summary(ours);
    const b = summary(byHand);
    const recorded = await podEndToRecorded(root, origin, RECORDED_ROUNDS, 1);
    return {
      rows: [
        {
          name: `capture + describe + push after the agent exits (${FILES} files, bwrap) p50 / p90 / max, ${a.n} pods`,
          value: `${round(a.p50, 1)} ms / ${round(a.p90, 1)} ms / ${round(a.max, 1)} ms`,
          target: 'p50 < 2 s',
          pass: a.p50 < 2000,
        },
        { name: 'baseline: git add + commit + push by hand, no sandbox, p50 / p90 / max', value: `${round(b.p50, 1)} ms / ${round(b.p90, 1)} ms / ${round(b.max, 1)} ms` },
        ...recorded,
      ],
    };
  } finally {
    removeTempDir(root);
  }
}

runIfMain(import.meta.url, 'Delivery: capture and push of a change in a 5,000-file repository', run);
