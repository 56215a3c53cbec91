/**
 * What a pod can plant in its own tree where the runner reads or writes (docs/runners.md "What
 * the runner touches in a pod"), for the tests of the runner's pod-tree access.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

export const PLANTS = ['link-missing', 'link-outside', 'fifo', 'dev-zero', 'linked-dir'] as const;
export type Plant = (typeof PLANTS)[number];

/**
 * Puts `kind` at `target`: a link to a missing file in `outside` (`created-by-runner.json`), a link
 * to `victim`, a FIFO, a link to /dev/zero, or its directory replaced by a link to `outside`.
 */
export function plant(target: string, kind: Plant, outside: string, victim: string): void {
  fs.mkdirSync(path.dirname(target), { recursive: true });
  if (kind === 'link-missing') fs.symlinkSync(path.join(outside, 'created-by-runner.json'), target);
  if (kind === 'link-outside') fs.symlinkSync(victim, target);
  if (kind === 'fifo') execFileSync('mkfifo', [target]);
  if (kind === 'dev-zero') fs.symlinkSync('/dev/zero', target);
  if (kind === 'linked-dir') {
    fs.rmSync(path.dirname(target), { recursive: true });
    fs.symlinkSync(outside, path.dirname(target));
  }
}
