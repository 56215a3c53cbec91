/**
 * DROVER_POD_QUEUE_TIMEOUT_MINUTES (docs/decisions.md "Runners and pods"): minutes, default 60,
 * fractions allowed (so a test or an impatient operator can make it seconds); anything else stops
 * the start with a message naming the variable.
 */
import { describe, expect, it } from 'vitest';
import { loadServerConfig } from '../../src/config.ts';

describe('DROVER_POD_QUEUE_TIMEOUT_MINUTES', () => {
  it.each([
    [undefined, 3_600_000],
    ['', 3_600_000],
    ['60', 3_600_000],
    ['90', 5_400_000],
    ['0.5', 30_000],
    ['.25', 15_000],
    ['0.03', 1_800],
    ['10080', 604_800_000],
  ])('%j → %i ms', (raw, expected) => {
    expect(loadServerConfig({}, raw === undefined ? {} : { DROVER_POD_QUEUE_TIMEOUT_MINUTES: raw }).podQueueTimeoutMs).toBe(expected);
  });

  it.each(['0', '0.0', '-1', 'abc', '1e3', '0x10', 'Infinity', '5 min', '1.', 'NaN'])('%j → the start fails naming the variable', (raw) => {
    expect(() => loadServerConfig({}, { DROVER_POD_QUEUE_TIMEOUT_MINUTES: raw })).toThrow(
      `DROVER_POD_QUEUE_TIMEOUT_MINUTES must be a positive number of minutes, got "${raw}"`,
    );
  });
});
