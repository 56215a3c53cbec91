import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadServerConfig } from '../../src/config.ts';
import { SecretBox, SecretError, parseSecretKey, resolveSecretKey } from '../../src/domain/secrets.ts';

const key = crypto.randomBytes(32);

describe('SecretBox', () => {
  it('round-trips, with a fresh IV for every value', () => {
    const box = new SecretBox(key);
    for (const plaintext of ['ghp_abc123', '', 'ünïcødé ✓', 'x'.repeat(5000)]) {
      expect(box.decrypt(box.encrypt(plaintext))).toBe(plaintext);
    }
    const a = box.encrypt('same');
    const b = box.encrypt('same');
    expect(a).not.toBe(b);
    expect(a).toMatch(/^v1:[A-Za-z0-9+/=]+:[A-Za-z0-9+/=]+:[A-Za-z0-9+/=]*$/);
    expect(a).not.toContain('same');
    expect(Buffer.from(a.split(':')[1], 'base64')).toHaveLength(12);
  });

  it('detects tampering with the ciphertext, the tag, the IV or the version', () => {
    const box = new SecretBox(key);
    const stored = box.encrypt('glpat-secret-token');
    const [version, iv, tag, data] = stored.split(':');
    const flip = (b64: string) => {
      const bytes = Buffer.from(b64, 'base64');
      bytes[0] ^= 1;
      return bytes.toString('base64');
    };
    for (const bad of [
      [version, iv, tag, flip(data)],
      [version, iv, flip(tag), data],
      [version, flip(iv), tag, data],
      ['v2', iv, tag, data],
      [version, iv, tag],
      [version, iv, tag, data + 'AAAA'],
    ]) {
      expect(() => box.decrypt(bad.join(':'))).toThrow(SecretError);
    }
    expect(() => box.decrypt('glpat-secret-token')).toThrow(SecretError);
    expect(() => box.decrypt('')).toThrow(SecretError);
  });

  it('fails with another key, without revealing anything', () => {
    const stored = new SecretBox(key).encrypt('ghp_abc123');
    const other = new SecretBox(crypto.randomBytes(32));
    expect(() => other.decrypt(stored)).toThrow(/wrong secret key/);
  });

  it('refuses keys that are not 32 bytes', () => {
    expect(() => new SecretBox(crypto.randomBytes(16))).toThrow(RangeError);
  });
});

describe('parseSecretKey', () => {
  it('accepts 32 bytes as hex, base64 and URL-safe base64, padded or not', () => {
    const hex = key.toString('hex');
    const b64 = key.toString('base64');
    expect(parseSecretKey(hex)).toEqual(key);
    expect(parseSecretKey(hex.toUpperCase())).toEqual(key);
    expect(parseSecretKey(b64)).toEqual(key);
    expect(parseSecretKey(b64.replace(/=+$/, ''))).toEqual(key);
    expect(parseSecretKey(key.toString('base64url'))).toEqual(key);
    expect(parseSecretKey(`  ${b64}\n`)).toEqual(key);
  });

  it.each([
    ['empty', ''],
    ['a passphrase', 'correct horse battery staple'],
    ['16 bytes of hex', crypto.randomBytes(16).toString('hex')],
    ['33 bytes of base64', crypto.randomBytes(33).toString('base64')],
    ['31 bytes of base64', crypto.randomBytes(31).toString('base64')],
    ['63 hex digits', key.toString('hex').slice(1)],
    ['base64 with a stray character', key.toString('base64').replace(/^./, '!')],
  ])('refuses %s with a clear message that does not quote the value', (_label, raw) => {
    let message = '';
    try {
      parseSecretKey(raw);
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message).toMatch(/DROVER_SECRET_KEY must be 32 bytes written as base64 .* or hex/);
    if (raw.length > 0) expect(message).not.toContain(raw);
  });

  it('is checked when the configuration is loaded', () => {
    expect(() => loadServerConfig({}, { DROVER_SECRET_KEY: 'too-short' })).toThrow(/DROVER_SECRET_KEY must be 32 bytes/);
    expect(loadServerConfig({}, { DROVER_SECRET_KEY: key.toString('hex') }).secretKey).toBe(key.toString('hex'));
    expect(loadServerConfig({}, {}).secretKey).toBeNull();
  });

  it('reads DROVER_PROVIDER_TIMEOUT_MS', () => {
    expect(loadServerConfig({}, {}).providerTimeoutMs).toBe(10_000);
    expect(loadServerConfig({}, { DROVER_PROVIDER_TIMEOUT_MS: '250' }).providerTimeoutMs).toBe(250);
    expect(() => loadServerConfig({}, { DROVER_PROVIDER_TIMEOUT_MS: '0' })).toThrow(/DROVER_PROVIDER_TIMEOUT_MS/);
  });
});

describe('resolveSecretKey', () => {
  let dir: string;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'drover-secret-'));
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('prefers the configured key and writes no file', () => {
    const resolved = resolveSecretKey(key.toString('base64'), dir);
    expect(resolved).toEqual({ key, generated: null });
    expect(fs.readdirSync(dir)).toEqual([]);
  });

  it('generates <data dir>/secret-key with mode 0600 once, then reuses it', () => {
    const first = resolveSecretKey(null, dir);
    const file = path.join(dir, 'secret-key');
    expect(first.generated).toBe(file);
    expect(first.key).toHaveLength(32);
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    expect(fs.readdirSync(dir)).toEqual(['secret-key']); // no temporary file left behind
    const second = resolveSecretKey(null, dir);
    expect(second).toEqual({ key: first.key, generated: null });
  });

  it('refuses a key file that does not hold a key', () => {
    fs.writeFileSync(path.join(dir, 'secret-key'), 'nonsense\n');
    expect(() => resolveSecretKey(null, dir)).toThrow(/secret-key must be 32 bytes/);
  });
});
