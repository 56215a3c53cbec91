/**
 * Encryption of secrets at rest (repository tokens): AES-256-GCM, a random 12-byte IV per
 * value, stored as `v1:<iv>:<tag>:<ciphertext>` (base64 each). The version prefix leaves room
 * for another algorithm or key scheme later without guessing what an old value is.
 *
 * The 32-byte key comes from DROVER_SECRET_KEY (base64 or hex) or from `<data dir>/secret-key`,
 * generated on first start. Losing the key makes stored tokens unreadable (they must then be
 * entered again); replicas sharing one database must share one key.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

const VERSION = 'v1';
const ALGORITHM = 'aes-256-gcm';
const KEY_BYTES = 32;
const IV_BYTES = 12;
const TAG_BYTES = 16;

export const SECRET_KEY_FILE = 'secret-key';

/** A stored value that cannot be decrypted: wrong key, tampered with, or not ours at all. */
export class SecretError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SecretError';
  }
}

/**
 * Parses a 32-byte key written as 64 hex digits or as base64 (standard or URL-safe, padding
 * optional). Anything else throws, with a message that never repeats the value.
 */
export function parseSecretKey(raw: string, source = 'DROVER_SECRET_KEY'): Buffer {
  const text = raw.trim();
  if (/^[0-9a-f]{64}$/i.test(text)) return Buffer.from(text, 'hex');
  const standard = text.replaceAll('-', '+').replaceAll('_', '/').replace(/=+$/, '');
  if (/^[A-Za-z0-9+/]{43}$/.test(standard)) {
    const key = Buffer.from(standard, 'base64');
    // The last character carries 2 unused bits; a value that does not re-encode is not a key.
    if (key.length === KEY_BYTES && key.toString('base64').replace(/=+$/, '') === standard) return key;
  }
  throw new Error(
    `${source} must be 32 bytes written as base64 (44 characters) or hex (64 characters); ` +
      `generate one with: node -e "console.log(require('crypto').randomBytes(32).toString('base64'))"`,
  );
}

export const generateSecretKey = (): Buffer => crypto.randomBytes(KEY_BYTES);

/**
 * The key to use: the configured one, else `<dataDir>/secret-key`, created (mode 0600) when
 * missing. `generated` names the file when this call created it.
 */
export function resolveSecretKey(configured: string | null, dataDir: string): { key: Buffer; generated: string | null } {
  if (configured) return { key: parseSecretKey(configured), generated: null };
  const file = path.join(dataDir, SECRET_KEY_FILE);
  if (!fs.existsSync(file)) {
    // Written aside, then linked into place: a concurrent first start never reads a half-written
    // file, and exactly one key wins (link fails with EEXIST for the loser).
    const temp = `${file}.${process.pid}.${crypto.randomBytes(4).toString('hex')}`;
    fs.writeFileSync(temp, generateSecretKey().toString('base64') + '\n', { mode: 0o600, flag: 'wx' });
    try {
      fs.linkSync(temp, file);
      return { key: parseSecretKey(fs.readFileSync(file, 'utf8'), file), generated: file };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    } finally {
      fs.rmSync(temp, { force: true });
    }
  }
  return { key: parseSecretKey(fs.readFileSync(file, 'utf8'), file), generated: null };
}

export class SecretBox {
  readonly #key: Buffer;

  constructor(key: Buffer) {
    if (key.length !== KEY_BYTES) throw new RangeError(`a secret key has ${KEY_BYTES} bytes, got ${key.length}`);
    this.#key = Buffer.from(key);
  }

  encrypt(plaintext: string): string {
    const iv = crypto.randomBytes(IV_BYTES);
    const cipher = crypto.createCipheriv(ALGORITHM, this.#key, iv, { authTagLength: TAG_BYTES });
    cipher.setAAD(Buffer.from(VERSION));
    const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return [VERSION, iv.toString('base64'), cipher.getAuthTag().toString('base64'), ciphertext.toString('base64')].join(':');
  }

  decrypt(stored: string): string {
    const parts = stored.split(':');
    if (parts.length !== 4 || parts[0] !== VERSION) throw new SecretError('not an encrypted value of a known version');
    const [, ivText, tagText, dataText] = parts;
    const iv = Buffer.from(ivText, 'base64');
    const tag = Buffer.from(tagText, 'base64');
    if (iv.length !== IV_BYTES || tag.length !== TAG_BYTES) throw new SecretError('malformed encrypted value');
    try {
      const decipher = crypto.createDecipheriv(ALGORITHM, this.#key, iv, { authTagLength: TAG_BYTES });
      decipher.setAAD(Buffer.from(VERSION));
      decipher.setAuthTag(tag);
      return Buffer.concat([decipher.update(Buffer.from(dataText, 'base64')), decipher.final()]).toString('utf8');
    } catch {
      throw new SecretError('cannot decrypt: wrong secret key, or the value was altered');
    }
  }
}
