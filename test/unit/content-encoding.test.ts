import { describe, expect, it } from 'vitest';
import { acceptsGzip } from '../../src/api/content-encoding.ts';

describe('acceptsGzip (RFC 9110 Accept-Encoding)', () => {
  it.each([
    ['gzip', true],
    ['GZIP', true],
    ['gzip, deflate, br, zstd', true],
    ['br;q=1.0, gzip;q=0.8, *;q=0.1', true],
    ['x-gzip', true],
    ['*', true],
    ['gzip;q=0.001', true],
    [['deflate', 'gzip'], true],
  ] as const)('%j takes gzip', (header, expected) => {
    expect(acceptsGzip(header as string | string[])).toBe(expected);
  });

  it.each([
    [undefined, false],
    ['', false],
    ['identity', false],
    ['br, deflate', false],
    ['gzip;q=0', false],
    ['gzip; q=0.000', false],
    ['*;q=0', false],
    ['*, gzip;q=0', false],
    ['gzipped', false],
  ] as const)('%j does not', (header, expected) => {
    expect(acceptsGzip(header as string | undefined)).toBe(expected);
  });
});
