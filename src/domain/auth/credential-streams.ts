import { AppError } from '../../errors.ts';
import { workingApiKeyIds } from '../../store/api-keys.ts';
import { podIdsInStatus } from '../../store/pods.ts';
import type { DomainContext } from '../context.ts';
import { ACTIVE_POD_STATUSES } from '../../protocol/enums.ts';
import type { Principal } from './authenticate.ts';

/** Concurrent streams allowed on one replica (0: no cap). See docs/api.md "Stream caps". */
export interface StreamCaps {
  /** Per API key or pod token (DROVER_MAX_STREAMS_PER_KEY). */
  perCredential: number;
  /** Per organization (DROVER_MAX_STREAMS_PER_ORG). */
  perOrg: number;
}

export const DEFAULT_STREAM_CAPS: StreamCaps = { perCredential: 20, perOrg: 500 };

/**
 * How often a replica checks that the credentials of its open streams still work. With the time a
 * check takes, a stream ends within 5 s of its credential (docs/events.md "Streams end with
 * their credential").
 */
export const CREDENTIAL_CHECK_MS = 2_000;
/** Credentials asked about per query. */
const CHECK_BATCH = 500;
/** What a refused stream is told to wait before trying again (a slot frees when a stream closes). */
const RETRY_AFTER_SECONDS = 5;

/** An open stream as far as this registry is concerned: something to end, which says when it has closed. */
export interface HeldStream {
  end(): void;
  onClose(listener: () => void): void;
}

interface Held {
  principal: Principal;
  streams: Set<HeldStream>;
}

/**
 * The event and output streams open on this replica, by the credential that opened them: caps
 * their number per credential and per organization, and ends them when their credential stops
 * working. The replica that revokes a key ends its streams at once; every replica, while it holds
 * streams, checks every CREDENTIAL_CHECK_MS that their keys are neither revoked nor expired and
 * that their pods are still active, which also covers what happened on other replicas, with no
 * notification to lose.
 */
export class CredentialStreams {
  private readonly held = new Map<number, Held>();
  private readonly perOrg = new Map<number, number>();
  private timer: NodeJS.Timeout | null = null;
  private checking = false;

  constructor(
    private readonly ctx: DomainContext,
    private readonly caps: StreamCaps = DEFAULT_STREAM_CAPS,
    private readonly onError: (error: unknown) => void = () => {},
    private readonly checkMs = CREDENTIAL_CHECK_MS,
  ) {}

  /**
   * Opens a stream for `principal` with `start` (which must not wait: nothing may slip in between
   * the count and the stream), or 429 TOO_MANY_STREAMS when the credential or its organization
   * holds as many as allowed. The stream is let go when it closes.
   */
  open<S extends HeldStream>(principal: Principal, start: () => S): S {
    const orgId = principal.org.id;
    const mine = this.held.get(principal.keyId)?.streams.size ?? 0;
    if (this.caps.perCredential > 0 && mine >= this.caps.perCredential) {
      const what = principal.kind === 'pod' ? 'pod token' : 'API key';
      throw tooMany(`this ${what} already has ${mine} open streams, the most allowed; close one to open another`);
    }
    const org = this.perOrg.get(orgId) ?? 0;
    if (this.caps.perOrg > 0 && org >= this.caps.perOrg) {
      throw tooMany(`this organization already has ${org} open streams, the most allowed; close one to open another`);
    }
    const stream = start();
    let held = this.held.get(principal.keyId);
    if (!held) this.held.set(principal.keyId, (held = { principal, streams: new Set() }));
    held.streams.add(stream);
    this.perOrg.set(orgId, org + 1);
    this.schedule();
    stream.onClose(() => this.release(principal, stream));
    return stream;
  }

  /** The credential stopped working (a key revoked through this replica): its streams here end now. */
  credentialEnded(keyId: number): void {
    for (const stream of [...(this.held.get(keyId)?.streams ?? [])]) stream.end();
  }

  /** Stops the checks (the app is closing; its streams are ended by then). */
  close(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  private release(principal: Principal, stream: HeldStream): void {
    const held = this.held.get(principal.keyId);
    if (!held?.streams.delete(stream)) return;
    if (held.streams.size === 0) this.held.delete(principal.keyId);
    const left = (this.perOrg.get(principal.org.id) ?? 1) - 1;
    if (left > 0) this.perOrg.set(principal.org.id, left);
    else this.perOrg.delete(principal.org.id);
    if (this.held.size === 0) this.close();
  }

  private schedule(): void {
    if (this.timer) return;
    this.timer = setInterval(() => {
      if (this.checking) return;
      this.checking = true;
      this.check()
        .catch(this.onError)
        .finally(() => (this.checking = false));
    }, this.checkMs);
    this.timer.unref();
  }

  /** Ends the streams whose credential no longer works. */
  private async check(): Promise<void> {
    const keyIds: number[] = [];
    const podIds: number[] = [];
    for (const { principal } of this.held.values()) {
      // A pod token's keyId is its pod's id, negated (see Principal).
      if (principal.kind === 'pod') podIds.push(-principal.keyId);
      else keyIds.push(principal.keyId);
    }
    const now = this.ctx.now();
    const db = this.ctx.store.db;
    const working = new Set<number>();
    for (let i = 0; i < keyIds.length; i += CHECK_BATCH) {
      for (const id of await workingApiKeyIds(db, keyIds.slice(i, i + CHECK_BATCH), now)) working.add(id);
    }
    for (let i = 0; i < podIds.length; i += CHECK_BATCH) {
      for (const id of await podIdsInStatus(db, podIds.slice(i, i + CHECK_BATCH), ACTIVE_POD_STATUSES)) working.add(-id);
    }
    for (const keyId of [...keyIds, ...podIds.map((id) => -id)]) if (!working.has(keyId)) this.credentialEnded(keyId);
  }
}

const tooMany = (message: string) => new AppError('TOO_MANY_STREAMS', message, { retryAfterSeconds: RETRY_AFTER_SECONDS });
