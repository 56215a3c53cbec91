import type { Store } from '../store/db.ts';

/** What domain services need from the outside world, passed explicitly. */
export interface DomainContext {
  readonly store: Store;
  readonly now: () => number;
}
