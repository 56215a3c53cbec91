import fs from 'node:fs';
import path from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * Seconds each slower test file took in a whole CI run (`.ci/run` from a fresh clone, 3 workers),
 * from its slowest-files list and per-file lines. Refresh it from a later run's log when files are
 * added or get much faster or slower; a file it does not list counts as fast.
 */
const KNOWN_SECONDS_FILE = path.join(import.meta.dirname, 'file-seconds.json');

/**
 * The longest files start first (docs/design.md "Tests: workers and order"), so that the last
 * minutes of a run are not one long file running alone while the other workers idle.
 *
 * Vitest's own order is the same rule, but it takes the durations from its results cache, which a
 * fresh clone (CI) does not have: it then runs the largest files first, and the real-agent suites,
 * small files that take minutes, ran last. Here a file's duration is the cache's when this checkout
 * has run it, else the committed figure, else none (and then the larger file first).
 */
export default class LongestFirstSequencer extends BaseSequencer {
  private readonly known: Record<string, number> = JSON.parse(fs.readFileSync(KNOWN_SECONDS_FILE, 'utf8')) as Record<string, number>;

  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const root = this.ctx.config.root;
    const weighed = files.map((spec) => {
      const file = path.relative(root, spec.moduleId).split(path.sep).join('/');
      const cached = this.ctx.cache.getFileTestResults(`${spec.project.name}:${file}`);
      const ms = cached ? cached.duration : (this.known[file] ?? 0) * 1000;
      const size = this.ctx.cache.getFileStats(`${spec.project.name}:${file}`)?.size ?? 0;
      return { spec, ms, size };
    });
    return weighed.sort((a, b) => b.ms - a.ms || b.size - a.size).map((w) => w.spec);
  }
}
