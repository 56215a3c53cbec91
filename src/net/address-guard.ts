import dns from 'node:dns/promises';
import net from 'node:net';

/**
 * Addresses a callback may not reach unless DROVER_WEBHOOK_ALLOW_PRIVATE=true (docs/api.md), each
 * with the word an error message uses. The first matching entry names the reason, so the cloud
 * metadata addresses come before the link-local and private ranges that contain them.
 */
const RANGES: ReadonlyArray<readonly [network: string, prefix: number, family: 'ipv4' | 'ipv6', reason: string]> = [
  ['169.254.169.254', 32, 'ipv4', 'cloud metadata'],
  ['fd00:ec2::254', 128, 'ipv6', 'cloud metadata'],
  ['0.0.0.0', 8, 'ipv4', 'unspecified ("this network")'],
  ['127.0.0.0', 8, 'ipv4', 'loopback'],
  ['10.0.0.0', 8, 'ipv4', 'private'],
  ['172.16.0.0', 12, 'ipv4', 'private'],
  ['192.168.0.0', 16, 'ipv4', 'private'],
  ['100.64.0.0', 10, 'ipv4', 'shared (CGNAT)'],
  ['169.254.0.0', 16, 'ipv4', 'link-local'],
  ['192.0.0.0', 24, 'ipv4', 'reserved (IETF protocol assignments)'],
  ['198.18.0.0', 15, 'ipv4', 'reserved (benchmarking)'],
  ['224.0.0.0', 4, 'ipv4', 'multicast'],
  ['240.0.0.0', 4, 'ipv4', 'reserved (incl. broadcast)'],
  ['::', 128, 'ipv6', 'unspecified'],
  ['::1', 128, 'ipv6', 'loopback'],
  // IPv4-compatible (deprecated) addresses, ::a.b.c.d; the two above are inside but matched first.
  ['::', 96, 'ipv6', 'reserved (IPv4-compatible)'],
  // IPv4-translated addresses (SIIT, ::ffff:0:a.b.c.d): a translator turns them into the IPv4
  // address they carry, private ones included. (IPv4-mapped ::ffff:a.b.c.d are judged as that IPv4.)
  ['::ffff:0:0:0', 96, 'ipv6', 'IPv4-translated (SIIT, reaches IPv4 addresses)'],
  ['64:ff9b::', 96, 'ipv6', 'NAT64 (reaches IPv4 addresses)'],
  // The local-use NAT64 prefix (RFC 8215) reaches IPv4 addresses, private ones included, just the same.
  ['64:ff9b:1::', 48, 'ipv6', 'NAT64 (reaches IPv4 addresses)'],
  // Tunnels into IPv4: 6to4 (2002:a.b.c.d::/48 reaches a.b.c.d) and Teredo (2001:0::/32).
  ['2002::', 16, 'ipv6', '6to4 (reaches IPv4 addresses)'],
  ['2001::', 32, 'ipv6', 'Teredo (reaches IPv4 addresses)'],
  ['fc00::', 7, 'ipv6', 'private (unique local)'],
  ['fe80::', 10, 'ipv6', 'link-local'],
  ['fec0::', 10, 'ipv6', 'site-local (deprecated private)'],
  ['ff00::', 8, 'ipv6', 'multicast'],
];

const lists = RANGES.map(([network, prefix, family, reason]) => {
  const list = new net.BlockList();
  list.addSubnet(network, prefix, family);
  return { list, reason };
});

/** `::ffff:7f00:1` and `::ffff:127.0.0.1` (IPv4-mapped IPv6) → `127.0.0.1`; anything else unchanged. */
export function unmapIPv4(address: string): string {
  if (!net.isIPv6(address)) return address;
  let canonical: string;
  try {
    canonical = new URL(`http://[${address}]/`).hostname.slice(1, -1);
  } catch {
    return address;
  }
  const mapped = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(canonical);
  if (!mapped) return address;
  const high = parseInt(mapped[1], 16);
  const low = parseInt(mapped[2], 16);
  return [high >> 8, high & 0xff, low >> 8, low & 0xff].join('.');
}

/**
 * Why a callback may not connect to this IP address (e.g. `loopback`), or null when it is a public
 * address. Anything that is not an IP address, or that cannot be checked, is refused.
 */
export function blockedReason(address: string): string | null {
  const ip = unmapIPv4(address);
  const family = net.isIPv4(ip) ? 'ipv4' : net.isIPv6(ip) ? 'ipv6' : null;
  if (!family) return 'not an IP address';
  try {
    return lists.find(({ list }) => list.check(ip, family))?.reason ?? null;
  } catch {
    return 'uncheckable';
  }
}

export function isPrivateAddress(address: string): boolean {
  return blockedReason(address) !== null;
}

export interface ResolvedTarget {
  url: URL;
  /** The checked address to connect to (an IPv4-mapped address is given as IPv4). */
  address: string;
  family: 4 | 6;
}

/**
 * A `lookup` for http(s).request that answers only `target`'s checked address, whatever DNS says
 * by now: the request connects to the address that was checked, so a second DNS answer cannot
 * swap in another (a private one).
 */
export function pinnedLookup(target: Pick<ResolvedTarget, 'address' | 'family'>): net.LookupFunction {
  const { address, family } = target;
  return (_host, options, callback) => {
    if (options.all) callback(null, [{ address, family }]);
    else callback(null, address, family);
  };
}

/** A callback URL that must not be (or cannot be) requested; the message says why. */
export class CallbackTargetError extends Error {
  /**
   * `refused`: the guard refuses the URL itself (a private address, not http(s)), which no retry
   * changes; otherwise it could not be checked now (DNS did not answer).
   */
  constructor(
    message: string,
    readonly refused = true,
  ) {
    super(message);
    this.name = 'CallbackTargetError';
  }
}

/**
 * Resolves a callback URL (every address DNS gives) and refuses it when any of them is not public,
 * unless private targets are allowed. The caller connects to the returned address only, so a
 * second DNS answer cannot swap in a private one between the check and the connection.
 */
export async function resolveCallbackTarget(raw: string, allowPrivate: boolean): Promise<ResolvedTarget> {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new CallbackTargetError('the callback URL is not a valid URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new CallbackTargetError(`callback URLs must be http or https, not ${url.protocol}`);
  // WHATWG URL parsing already turned 127.1, 0x7f000001 and friends into dotted quads.
  const host = url.hostname.replace(/^\[|\]$/g, '');
  let addresses: { address: string; family: number }[];
  if (net.isIP(host)) {
    addresses = [{ address: host, family: net.isIP(host) }];
  } else {
    try {
      addresses = await dns.lookup(host, { all: true, verbatim: true });
    } catch (error) {
      throw new CallbackTargetError(`${host} does not resolve (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`, false);
    }
  }
  if (addresses.length === 0) throw new CallbackTargetError(`${host} does not resolve`, false);
  if (!allowPrivate) {
    for (const { address } of addresses) {
      const reason = blockedReason(address);
      if (reason) {
        const what = address === host ? address : `${host} resolves to ${address}, which`;
        throw new CallbackTargetError(`refused: ${what} is not a public address (${reason}); DROVER_WEBHOOK_ALLOW_PRIVATE=true allows it`);
      }
    }
  }
  const address = unmapIPv4(addresses[0].address);
  return { url, address, family: net.isIPv4(address) ? 4 : 6 };
}
