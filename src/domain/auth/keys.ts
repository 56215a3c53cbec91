import crypto from 'node:crypto';

const BASE62 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
export const KEY_PREFIX_LENGTH = 12;

/** `drv_` + 40 base62 characters (~238 bits), drawn without modulo bias. */
export function generateApiKey(): string {
  return 'drv_' + randomBase62(40);
}

export function randomBase62(length: number): string {
  let out = '';
  while (out.length < length) {
    for (const byte of crypto.randomBytes(length * 2)) {
      if (byte < 248) out += BASE62[byte % 62];
      if (out.length === length) break;
    }
  }
  return out;
}

/** SHA-256, hex. One-shot `crypto.hash`: it runs on every authenticated request, and costs half of a Hash object's. */
export function hashSecret(secret: string): string {
  return crypto.hash('sha256', secret, 'hex');
}

export function keyPrefix(key: string): string {
  return key.slice(0, KEY_PREFIX_LENGTH);
}

export function looksLikeApiKey(value: string): boolean {
  return /^drv_[A-Za-z0-9]{32,}$/.test(value);
}

export function sameHash(a: string, b: string): boolean {
  const left = Buffer.from(a, 'hex');
  const right = Buffer.from(b, 'hex');
  return left.length === right.length && crypto.timingSafeEqual(left, right);
}
