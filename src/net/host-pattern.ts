import net from 'node:net';

/**
 * `host[:port]` and `*.domain[:port]` entries of the network allow lists (docs/runners.md
 * "Network"): an organization's `network_allow`, a pod's `ALLOW` lines, a runner operator's
 * `--allow-host`. Shared by the server (validation) and the runner (matching), so both read an
 * entry the same way. A missing port is 443: what agents reach is HTTPS APIs.
 */
export interface HostPattern {
  /** Lower-case host name without a trailing dot, or an IP address (IPv6 without brackets). */
  host: string;
  /** `*.domain`: any name below `host` (not `host` itself). */
  wildcard: boolean;
  port: number;
}

export const DEFAULT_ALLOW_PORT = 443;
export const MAX_ALLOW_ENTRIES = 200;
export const MAX_ALLOW_ENTRY_LENGTH = 260;

const LABEL = /^[a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?$/;

function hostProblem(host: string): string | null {
  if (net.isIP(host)) return null;
  if (host.length === 0) return 'has no host';
  if (host.length > 253) return 'has a host name longer than 253 characters';
  if (!host.split('.').every((label) => LABEL.test(label))) return 'is not a host name, an IP address or *.domain';
  return null;
}

/** Parses one entry; a string says what is wrong with it. `wildcards` false: `*.x` is refused (the operator list names exact hosts). */
export function parseHostPattern(raw: string, options: { wildcards?: boolean } = {}): HostPattern | string {
  if (typeof raw !== 'string') return 'must be a string';
  const text = raw.trim().toLowerCase();
  if (text.length === 0) return 'must not be empty';
  if (text.length > MAX_ALLOW_ENTRY_LENGTH) return `must be at most ${MAX_ALLOW_ENTRY_LENGTH} characters`;
  let host: string;
  let portText: string | null = null;
  const bracketed = /^\[([0-9a-f:.]+)\](?::([0-9]+))?$/.exec(text);
  if (bracketed) {
    host = bracketed[1];
    portText = bracketed[2] ?? null;
    if (!net.isIPv6(host)) return 'has an invalid IPv6 address';
  } else if (net.isIPv6(text)) {
    host = text; // a bare IPv6 address has no port
  } else {
    const colon = text.lastIndexOf(':');
    host = colon === -1 ? text : text.slice(0, colon);
    portText = colon === -1 ? null : text.slice(colon + 1);
  }
  host = host.replace(/\.$/, '');
  let wildcard = false;
  if (host.startsWith('*.')) {
    if (options.wildcards === false) return 'must name an exact host (no *.domain)';
    wildcard = true;
    host = host.slice(2);
    if (net.isIP(host)) return 'cannot put *. before an IP address';
  }
  const problem = hostProblem(host);
  if (problem) return problem;
  let port = DEFAULT_ALLOW_PORT;
  if (portText !== null) {
    if (!/^[0-9]{1,5}$/.test(portText) || Number(portText) < 1 || Number(portText) > 65_535) return 'has a port that is not 1–65535';
    port = Number(portText);
  }
  return { host, wildcard, port };
}

/** The canonical text of an entry (`*.example.com:443`, `[::1]:8080`). */
export function formatHostPattern(p: HostPattern): string {
  const host = net.isIPv6(p.host) ? `[${p.host}]` : p.host;
  return `${p.wildcard ? '*.' : ''}${host}:${p.port}`;
}

/** A list of entries: each parsed, canonical and de-duplicated; the first bad one is thrown as `problem`. */
export function parseHostList(raw: readonly string[], options: { wildcards?: boolean } = {}): { patterns: HostPattern[] } | { problem: string; index: number } {
  const out = new Map<string, HostPattern>();
  for (let i = 0; i < raw.length; i++) {
    const parsed = parseHostPattern(raw[i], options);
    if (typeof parsed === 'string') return { problem: `"${String(raw[i]).slice(0, 80)}" ${parsed}`, index: i };
    out.set(formatHostPattern(parsed), parsed);
  }
  return { patterns: [...out.values()] };
}

/** A host as a client names it (`Example.COM.`, `[::1]`) in the form patterns use. */
export function normalizeHost(host: string): string {
  return host.trim().toLowerCase().replace(/^\[|\]$/g, '').replace(/\.$/, '');
}

export function matchesHost(p: HostPattern, host: string, port: number): boolean {
  if (p.port !== port) return false;
  const h = normalizeHost(host);
  return p.wildcard ? h.endsWith(`.${p.host}`) : h === p.host;
}

/** Whether `inner` is covered by some entry of `outer` (a spawned pod's ALLOW against its parent's reach). */
export function coveredBy(inner: HostPattern, outer: readonly HostPattern[]): boolean {
  return outer.some((o) => {
    if (o.port !== inner.port) return false;
    if (!o.wildcard) return !inner.wildcard && o.host === inner.host;
    return inner.host.endsWith(`.${o.host}`);
  });
}
