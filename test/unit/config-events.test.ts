/**
 * DROVER_EVENT_RETENTION_HOURS (contract §11 "Resume"): hours, default 24, fractions allowed (a
 * test keeps events for seconds); anything else stops the start with a message naming the variable.
 */
import { describe, expect, it } from 'vitest';
import { loadServerConfig } from '../../src/config.ts';

describe('DROVER_EVENT_RETENTION_HOURS', () => {
  it.each([
    [undefined, 86_400_000],
    ['', 86_400_000],
    ['24', 86_400_000],
    ['168', 604_800_000],
    ['0.5', 1_800_000],
    ['0.0005', 1_800],
  ])('%j → %i ms', (raw, expected) => {
    expect(loadServerConfig({}, raw === undefined ? {} : { DROVER_EVENT_RETENTION_HOURS: raw }).eventRetentionMs).toBe(expected);
  });

  it.each(['0', '-1', 'abc', '1e3', '24h', 'Infinity'])('%j → the start fails naming the variable', (raw) => {
    expect(() => loadServerConfig({}, { DROVER_EVENT_RETENTION_HOURS: raw })).toThrow(`DROVER_EVENT_RETENTION_HOURS must be a positive number of hours, got "${raw}"`);
  });
});
