/**
 * The relay's checked upstream addresses, kept for a while (docs/agents.md "The relay's cost per
 * call"): resolving an upstream's name and checking every address it has (the address guard) took
 * a DNS lookup on every call. An address is kept TTL_MS after its check, for the upstream's host
 * and port and the operator's answer on allowing it, and forgotten as soon as a call to it fails.
 * The relay connects only to the address it checked, so keeping it cannot let a later DNS answer
 * swap in another (a private one); it only means a changed DNS answer is seen up to TTL_MS later.
 */
import type { LookupFunction } from 'node:net';
import { pinnedLookup, resolveCallbackTarget } from '../../net/address-guard.ts';

const TTL_MS = 30_000;
/** Pods choose their upstreams (ENV): the table is emptied rather than grown past this. */
const MAX_ENTRIES = 1_000;

/** A checked address, with the lookup that gives only it (made once per check, not per call). */
export interface CheckedUpstream {
  address: string;
  /** Connects to the address that was checked, so a second DNS answer cannot swap in another one. */
  lookup: LookupFunction;
}

export class UpstreamAddresses {
  private readonly entries = new Map<string, { upstream: CheckedUpstream; until: number }>();

  private static key(target: URL, allowed: boolean): string {
    return `${allowed ? '+' : '-'}${target.protocol}//${target.host}`;
  }

  /** The checked address for `target` if one is kept; else undefined (then `resolve`). */
  kept(target: URL, allowed: boolean, now = Date.now()): CheckedUpstream | undefined {
    const entry = this.entries.get(UpstreamAddresses.key(target, allowed));
    return entry && entry.until > now ? entry.upstream : undefined;
  }

  /** Resolves and checks `target` (throws the guard's CallbackTargetError when refused), and keeps its address. */
  async resolve(target: URL, allowed: boolean): Promise<CheckedUpstream> {
    const resolved = await resolveCallbackTarget(target.href, allowed);
    const upstream = { address: resolved.address, lookup: pinnedLookup(resolved) };
    if (this.entries.size >= MAX_ENTRIES) this.entries.clear();
    this.entries.set(UpstreamAddresses.key(target, allowed), { upstream, until: Date.now() + TTL_MS });
    return upstream;
  }

  /** Forgets what is kept for `target`'s host (a call to it failed: its next call resolves again). */
  forget(target: URL): void {
    for (const allowed of [true, false]) this.entries.delete(UpstreamAddresses.key(target, allowed));
  }
}
