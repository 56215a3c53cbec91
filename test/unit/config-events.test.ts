/**
 * DROVER_EVENT_RETENTION_HOURS (docs/events.md "Resume"): hours, default 720 (30 days, for GET /activity), fractions allowed (a
 * test keeps events for seconds); anything else stops the start with a message naming the variable.
 * The stream caps (docs/api.md "Stream caps"): integers, 0 lifts one.
 */
import { describe, expect, it } from 'vitest';
import { loadServerConfig } from '../../src/config.ts';

describe('DROVER_EVENT_RETENTION_HOURS', () => {
  it.each([
    [undefined, 2_592_000_000],
    ['', 2_592_000_000],
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

describe('DROVER_MAX_STREAMS_PER_KEY, DROVER_MAX_STREAMS_PER_ORG', () => {
  it('default to 20 and 500; 0 lifts a cap', () => {
    expect(loadServerConfig({}, {}).streamCaps).toEqual({ perCredential: 20, perOrg: 500 });
    expect(loadServerConfig({}, { DROVER_MAX_STREAMS_PER_KEY: '0', DROVER_MAX_STREAMS_PER_ORG: '50' }).streamCaps).toEqual({ perCredential: 0, perOrg: 50 });
  });

  it.each([
    ['DROVER_MAX_STREAMS_PER_KEY', '-1'],
    ['DROVER_MAX_STREAMS_PER_KEY', '2.5'],
    ['DROVER_MAX_STREAMS_PER_ORG', 'many'],
  ])('%s=%j → the start fails naming the variable', (name, raw) => {
    expect(() => loadServerConfig({}, { [name]: raw })).toThrow(`${name} must be an integer >= 0, got "${raw}"`);
  });
});
