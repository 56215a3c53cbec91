/**
 * Rendered JSON bodies of hot reads, reused while their data version has not moved (a version the
 * domain vouches for: docs/decisions.md "Storage and performance", so replicas never serve a stale
 * body). Kept encoded (a Buffer): a body sent again is neither re-encoded nor measured again for
 * its content-length. Bounded by entries and bytes, least recently used out first.
 */
/** A ticket version, or a store change token. */
type Version = number | string;

export class ResponseCache {
  private readonly entries = new Map<string, { version: Version; body: Buffer }>();
  private bytes = 0;

  constructor(
    private readonly maxEntries = 5000,
    private readonly maxBytes = 16 * 1024 * 1024,
  ) {}

  get(key: string, version: Version): Buffer | null {
    const entry = this.entries.get(key);
    if (!entry || entry.version !== version) return null;
    this.entries.delete(key);
    this.entries.set(key, entry);
    return entry.body;
  }

  set(key: string, version: Version, body: Buffer): void {
    this.remove(key);
    if (body.length > this.maxBytes / 4) return;
    this.entries.set(key, { version, body });
    this.bytes += body.length;
    while (this.entries.size > this.maxEntries || this.bytes > this.maxBytes) this.remove(this.entries.keys().next().value!);
  }

  private remove(key: string): void {
    const entry = this.entries.get(key);
    if (!entry) return;
    this.bytes -= entry.body.length;
    this.entries.delete(key);
  }
}
