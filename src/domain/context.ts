import type { Store } from '../store/db.ts';
import type { SecretBox } from './secrets.ts';

/** What domain services need from the outside world, passed explicitly. */
export interface DomainContext {
  readonly store: Store;
  readonly now: () => number;
  /**
   * Encrypts secrets kept in the database (repository tokens). `drover serve` always sets it;
   * contexts that never touch such secrets (seeding, store tests) may leave it out.
   */
  readonly secrets?: SecretBox;
  /** Time budget of one call to a Git provider (all pages); default 10 s. */
  readonly providerTimeoutMs?: number;
  /** Asks whichever replica holds the runner's socket to bring it to the stored desired state now. */
  readonly wakeRunner?: (runnerId: number) => Promise<void>;
  /** The agent of loops that name none (DROVER_DEFAULT_AGENT, default `claude-code`). */
  readonly defaultAgent?: string;
  /** Called when a pod starts running and once it has ended, whatever ended it (loop runs follow their pods). */
  readonly podChanged?: (podId: number) => Promise<void>;
}
