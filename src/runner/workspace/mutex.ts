/**
 * An in-process mutex per key: `run(key, fn)` calls run one after another for the same key,
 * in the order they were made; different keys do not wait for each other.
 */
export class KeyedMutex {
  private readonly tails = new Map<string, Promise<void>>();

  async run<T>(key: string, fn: () => Promise<T>): Promise<T> {
    const previous = this.tails.get(key) ?? Promise.resolve();
    let unlock!: () => void;
    const mine = new Promise<void>((resolve) => (unlock = resolve));
    const tail = previous.then(() => mine);
    this.tails.set(key, tail);
    await previous; // never rejects: tails only chain `mine` promises, which only resolve
    try {
      return await fn();
    } finally {
      unlock();
      if (this.tails.get(key) === tail) this.tails.delete(key);
    }
  }
}
