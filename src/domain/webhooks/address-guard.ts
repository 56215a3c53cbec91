import dns from 'node:dns/promises';
import net from 'node:net';

/** Loopback, private, link-local (incl. cloud metadata), CGNAT, unspecified, multicast and reserved ranges. */
const blocked = new net.BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const) {
  blocked.addSubnet(network, prefix, 'ipv4');
}
for (const [network, prefix] of [
  ['::', 128],
  ['::1', 128],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
  ['64:ff9b::', 96],
] as const) {
  blocked.addSubnet(network, prefix, 'ipv6');
}

export function isPrivateAddress(address: string): boolean {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return blocked.check(mapped[1], 'ipv4');
  const family = net.isIPv4(address) ? 'ipv4' : 'ipv6';
  return blocked.check(address, family);
}

export interface ResolvedTarget {
  url: URL;
  address: string;
  family: 4 | 6;
}

/**
 * Resolves a callback URL and refuses it when any of its addresses is not public (unless private
 * targets are allowed). The caller connects to the returned address, so a second DNS answer
 * cannot swap in a private one between the check and the connection.
 */
export async function resolveCallbackTarget(raw: string, allowPrivate: boolean): Promise<ResolvedTarget> {
  const url = new URL(raw);
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error(`callback URLs must be http or https, not ${url.protocol}`);
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const addresses = net.isIP(host) ? [{ address: host, family: net.isIPv4(host) ? 4 : 6 }] : await dns.lookup(host, { all: true, verbatim: true });
  if (addresses.length === 0) throw new Error(`${host} does not resolve`);
  if (!allowPrivate) {
    const refused = addresses.find((a) => isPrivateAddress(a.address));
    if (refused) {
      throw new Error(`${host} resolves to ${refused.address}, a loopback, private, link-local or metadata address (DROVER_WEBHOOK_ALLOW_PRIVATE=true allows it)`);
    }
  }
  return { url, address: addresses[0].address, family: addresses[0].family === 6 ? 6 : 4 };
}
