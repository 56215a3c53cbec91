import dns from 'node:dns/promises';
import net from 'node:net';
import os from 'node:os';
import { blockedReason, unmapIPv4 } from '../../net/address-guard.ts';
import { matchesHost, normalizeHost, type HostPattern } from '../../net/host-pattern.ts';

/** `CONFIG network` (docs/runners.md "Network"). */
export const NETWORK_MODES = ['restricted', 'none', 'open'] as const;
export type NetworkMode = (typeof NETWORK_MODES)[number];

/**
 * Where one pod may connect through its proxy. `trusted` entries (the runner operator's list and
 * the Drover server) may be loopback, private or the runner's own addresses; every other target
 * must resolve only to public addresses that are not the runner's own.
 */
export interface NetworkPolicy {
  mode: NetworkMode;
  /** The organization's list, the pod's ALLOW lines, its agent's model hosts. */
  allow: readonly HostPattern[];
  trusted: readonly HostPattern[];
}

/** The reason of a listed host that does not resolve: a failure, not a refusal (not counted). */
export const UNRESOLVED = 'does not resolve';

export type Verdict = { ok: true; address: string; family: 4 | 6 } | { ok: false; reason: string };

/** The addresses of this machine's own interfaces (public ones included): refused unless trusted. */
function ownAddresses(): Set<string> {
  const own = new Set<string>();
  for (const list of Object.values(os.networkInterfaces())) for (const entry of list ?? []) own.add(unmapIPv4(entry.address.split('%')[0]));
  return own;
}

/**
 * Decides on `host:port`, resolving it first: a name is checked by every address it resolves to,
 * and the caller connects to the returned address only, so a second DNS answer cannot swap in a
 * private one.
 */
export async function decide(policy: NetworkPolicy, rawHost: string, port: number): Promise<Verdict> {
  if (policy.mode === 'none') return { ok: false, reason: 'not allowed' };
  const host = normalizeHost(rawHost);
  if (host === '' || !Number.isInteger(port) || port < 1 || port > 65_535) return { ok: false, reason: 'not allowed' };
  const trusted = policy.trusted.some((p) => matchesHost(p, host, port));
  const listed = trusted || policy.mode === 'open' || policy.allow.some((p) => matchesHost(p, host, port));
  if (!listed) return { ok: false, reason: 'not allowed' };
  let addresses: string[];
  if (net.isIP(host)) addresses = [host];
  else {
    try {
      addresses = (await dns.lookup(host, { all: true, verbatim: true })).map((a) => a.address);
    } catch {
      return { ok: false, reason: UNRESOLVED };
    }
  }
  if (addresses.length === 0) return { ok: false, reason: UNRESOLVED };
  if (!trusted) {
    const own = ownAddresses();
    for (const address of addresses) {
      const ip = unmapIPv4(address);
      if (blockedReason(ip) !== null || own.has(ip)) return { ok: false, reason: 'not allowed' };
    }
  }
  const address = unmapIPv4(addresses[0]);
  return { ok: true, address, family: net.isIPv4(address) ? 4 : 6 };
}
