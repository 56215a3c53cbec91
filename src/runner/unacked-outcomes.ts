/**
 * Pod outcomes the server has not acknowledged yet, on the runner's disk (docs/agents.md "Getting
 * the work back"): one file per pod in `<work dir>/unacked/` (mode 0600, the directory 0700),
 * written whole (a temporary file, then a rename) before the outcome is sent, removed at its
 * `ack_exit`. The outcome holds the delivery and its patch, the only copy of the work once the
 * workspace is gone: a runner that crashed or was killed reads them back at its next start and
 * reports them in its `hello` (the patches in `pod_patch` parts after it, ./patch-parts.ts).
 */
import fs from 'node:fs';
import path from 'node:path';
import { decodeRunnerMessage, encode, type PodOutcome } from '../protocol/runner-link.ts';

export class UnackedOutcomeFiles {
  readonly dir: string;

  constructor(
    workDir: string,
    private readonly log: (line: string) => void,
  ) {
    this.dir = path.join(workDir, 'unacked');
  }

  /** The outcomes kept by an earlier run of this runner (files that do not read as one are removed). */
  load(): PodOutcome[] {
    fs.mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    const outcomes: PodOutcome[] = [];
    for (const entry of fs.readdirSync(this.dir, { withFileTypes: true })) {
      const file = path.join(this.dir, entry.name);
      try {
        // Written by this runner only (no pod sees this directory); a leftover temporary file is an unfinished write.
        if (!entry.isFile() || !entry.name.endsWith('.json')) throw new Error('not an outcome file');
        const message = decodeRunnerMessage(fs.readFileSync(file, 'utf8'));
        if (message.type !== 'pod_exited') throw new Error('not an outcome');
        outcomes.push(message.result);
      } catch (error) {
        if (entry.name.endsWith('.json')) this.log(`unacknowledged outcome ${file} unreadable, removed: ${(error as Error).message}`);
        fs.rmSync(file, { recursive: true, force: true });
      }
    }
    return outcomes;
  }

  /** Keeps `outcome` (its patch included); a failed write is logged: the outcome is still sent from memory. */
  save(outcome: PodOutcome): void {
    const file = this.file(outcome.key);
    const temporary = `${file}.${process.pid}.tmp`;
    try {
      fs.mkdirSync(this.dir, { recursive: true, mode: 0o700 });
      fs.writeFileSync(temporary, encode({ type: 'pod_exited', result: outcome }), { mode: 0o600, flag: 'w' });
      fs.renameSync(temporary, file);
    } catch (error) {
      fs.rmSync(temporary, { force: true });
      this.log(`could not keep pod ${outcome.key}'s outcome on disk (${(error as Error).message}); it is held in memory only`);
    }
  }

  /** The server acknowledged the outcome. */
  remove(key: string): void {
    fs.rmSync(this.file(key), { force: true });
  }

  private file(key: string): string {
    return path.join(this.dir, `${encodeURIComponent(key)}.json`);
  }
}
