import zlib from 'node:zlib';

/**
 * Rendered JSON bodies of hot reads, reused while their data version has not moved (a version the
 * domain vouches for: docs/decisions.md "Storage and performance", so replicas never serve a stale
 * body). Kept encoded (a Buffer): a body sent again is neither re-encoded nor measured again for
 * its content-length. A body is gzipped the first time a client that takes gzip asks for it, and
 * that too is kept with it (docs/api.md "Compression"). Bounded by entries and bytes, least
 * recently used out first.
 */
/** A ticket version, or a store change token. */
type Version = number | string;

/** Bodies smaller than this go as they are: gzip's header and the work would gain nothing. */
export const GZIP_MIN_BYTES = 1024;

interface Entry {
  version: Version;
  body: Buffer;
  /** undefined: not asked for yet; null: not worth it (a small body). */
  gzip?: Buffer | null;
}

export class ResponseCache {
  private readonly entries = new Map<string, Entry>();
  private bytes = 0;

  constructor(
    private readonly maxEntries = 5000,
    private readonly maxBytes = 16 * 1024 * 1024,
  ) {}

  get(key: string, version: Version): Buffer | null {
    return this.entry(key, version)?.body ?? null;
  }

  /**
   * The kept body of `key` at `version`, gzipped (made on the first call, then kept); null when
   * nothing is kept for that version or the body is too small to be worth it.
   */
  gzipped(key: string, version: Version): Buffer | null {
    const entry = this.entry(key, version);
    if (!entry) return null;
    if (entry.gzip === undefined) {
      entry.gzip = entry.body.length < GZIP_MIN_BYTES ? null : zlib.gzipSync(entry.body, { level: 6 });
      this.bytes += entry.gzip?.length ?? 0;
      this.trim();
    }
    return entry.gzip;
  }

  set(key: string, version: Version, body: Buffer): void {
    this.remove(key);
    if (body.length > this.maxBytes / 4) return;
    this.entries.set(key, { version, body });
    this.bytes += body.length;
    this.trim();
  }

  /** The entry of `key` if it is of `version`, made the most recently used. */
  private entry(key: string, version: Version): Entry | null {
    const entry = this.entries.get(key);
    if (!entry || entry.version !== version) return null;
    this.entries.delete(key);
    this.entries.set(key, entry);
    return entry;
  }

  private trim(): void {
    while (this.entries.size > this.maxEntries || this.bytes > this.maxBytes) this.remove(this.entries.keys().next().value!);
  }

  private remove(key: string): void {
    const entry = this.entries.get(key);
    if (!entry) return;
    this.bytes -= entry.body.length + (entry.gzip?.length ?? 0);
    this.entries.delete(key);
  }
}
