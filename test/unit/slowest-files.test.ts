import { describe, expect, it } from 'vitest';
import { SLOWEST_COUNT, slowestLines } from '../reporters/slowest-files.ts';

describe('the slowest-files reporter', () => {
  it('lists the slowest files first, one line each, with total and test time in seconds', () => {
    const lines = slowestLines([
      { file: 'test/a.test.ts', totalMs: 1_250, testsMs: 1_000 },
      { file: 'test/b.test.ts', totalMs: 155_040, testsMs: 154_000 },
      { file: 'test/c.test.ts', totalMs: 9_960, testsMs: 9_000 },
    ]);
    expect(lines).toEqual([
      '  155.0 s  test/b.test.ts (tests 154.0 s)',
      '   10.0 s  test/c.test.ts (tests 9.0 s)',
      '    1.3 s  test/a.test.ts (tests 1.0 s)',
    ]);
  });

  it(`keeps only the ${SLOWEST_COUNT} slowest`, () => {
    const times = Array.from({ length: 40 }, (_, i) => ({ file: `test/f${i}.test.ts`, totalMs: i * 100, testsMs: 0 }));
    const lines = slowestLines(times);
    expect(lines).toHaveLength(SLOWEST_COUNT);
    expect(lines[0]).toContain('test/f39.test.ts');
    expect(lines.at(-1)).toContain(`test/f${40 - SLOWEST_COUNT}.test.ts`);
  });
});
