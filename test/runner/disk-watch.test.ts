/**
 * The disk watch's first measurement (docs/runners.md "What a pod start costs"): 0.5 to 1 s after
 * the watch starts, spread, so the pods of a burst do not all measure at once.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { watchDisk } from '../../src/runner/limits/disk-usage.ts';

afterEach(() => {
  vi.useRealTimers();
  vi.restoreAllMocks();
});

describe('disk watch', () => {
  for (const [random, delay] of [[0, 500], [0.999, 999]] as const) {
    it(`first measurement ${delay} ms after the start (random ${random}), then the limit is enforced`, async () => {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'drover-disk-watch-'));
      try {
        fs.writeFileSync(path.join(dir, 'data'), Buffer.alloc(64 * 1024, 1));
        vi.spyOn(Math, 'random').mockReturnValue(random);
        vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
        let exceeded!: () => void;
        const over = new Promise<void>((resolve) => (exceeded = resolve));
        const watch = watchDisk([dir], 1024, exceeded);
        expect(vi.getTimerCount()).toBe(1);
        vi.advanceTimersByTime(delay - 1);
        expect(vi.getTimerCount()).toBe(1); // not measured yet
        vi.advanceTimersByTime(1);
        expect(vi.getTimerCount()).toBe(0); // measuring
        await over;
        watch.stop();
      } finally {
        fs.rmSync(dir, { recursive: true, force: true });
      }
    });
  }
});
