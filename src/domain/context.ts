import type { Store } from '../store/db.ts';
import type { PodRow } from '../store/schema-runners.ts';
import type { Quotas } from './quotas/model.ts';
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
  /**
   * Asks whichever replica holds the runner's socket to bring it to the stored desired state now:
   * all of it, or, with a pod (as just stored), that one pod (placed on the runner, or to be stopped).
   */
  readonly wakeRunner?: (runnerId: number, pod?: PodRow) => Promise<void>;
  /**
   * Asks whichever replica holds the runner's link to close it for good (`revoke`: the runner was
   * deleted) or to hand the runner a new credential (`rotate`).
   */
  readonly runnerCommand?: (runnerId: number, command: 'revoke' | 'rotate') => Promise<void>;
  /** An API key was revoked (this replica stops trusting cached verifications of it). */
  readonly apiKeyRevoked?: (keyId: number) => void;
  /** An organization was changed (this replica stops using cached copies of it). */
  readonly orgChanged?: (orgId: number) => void;
  /** The agent of loops that name none (DROVER_DEFAULT_AGENT, default `claude-code`). */
  readonly defaultAgent?: string;
  /**
   * Called with the pod as now stored when it starts running and once it has ended, whatever ended
   * it (loop runs follow their pods).
   */
  readonly podChanged?: (pod: PodRow) => Promise<void>;
  /**
   * A slot of one of the organization's runners may have freed (a pod on it ended, a runner
   * connected): queued pods are placed soon (domain/pods/queue.ts). Returns at once.
   */
  readonly slotFreed?: (orgId: number) => void;
  /** An event of the organization was written in the running transaction (one process: wakes its event hub; see events/writer.ts). */
  readonly eventsWritten?: (orgId: number) => void;
  /** Output of the pod was stored, or the pod ended: wakes its output streams (on every replica). */
  readonly podOutputChanged?: (podId: number) => void;
  /** DROVER_WEBHOOK_ALLOW_PRIVATE: callback URLs may name private addresses (else 400 at create and update). */
  readonly webhookAllowPrivate?: boolean;
  /** The server-wide quota defaults (DROVER_ORG_MAX_*, DROVER_POD_OUTPUT_BYTES_PER_SEC); absent: the built-in ones. */
  readonly quotas?: Quotas;
}
