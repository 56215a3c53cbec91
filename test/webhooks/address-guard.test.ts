import { describe, expect, it } from 'vitest';
import { blockedReason, isPrivateAddress, resolveCallbackTarget, unmapIPv4 } from '../../src/net/address-guard.ts';

describe('blockedReason', () => {
  it.each([
    ['127.0.0.1', 'loopback'],
    ['127.255.255.254', 'loopback'],
    ['::1', 'loopback'],
    ['10.0.0.1', 'private'],
    ['10.255.255.255', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['192.168.1.1', 'private'],
    ['fc00::1', 'private (unique local)'],
    ['fd12:3456::1', 'private (unique local)'],
    ['169.254.0.1', 'link-local'],
    ['169.254.169.254', 'cloud metadata'],
    ['fd00:ec2::254', 'cloud metadata'],
    ['fe80::1', 'link-local'],
    ['febf::1', 'link-local'],
    ['fec0::1', 'site-local (deprecated private)'],
    ['100.64.0.1', 'shared (CGNAT)'],
    ['100.127.255.255', 'shared (CGNAT)'],
    ['0.0.0.0', 'unspecified ("this network")'],
    ['::', 'unspecified'],
    ['224.0.0.1', 'multicast'],
    ['239.255.255.250', 'multicast'],
    ['ff02::1', 'multicast'],
    ['255.255.255.255', 'reserved (incl. broadcast)'],
    ['::7f00:1', 'reserved (IPv4-compatible)'],
    ['64:ff9b::a00:1', 'NAT64 (reaches IPv4 addresses)'],
  ])('%s is refused as %s', (address, reason) => {
    expect(blockedReason(address)).toBe(reason);
    expect(isPrivateAddress(address)).toBe(true);
  });

  it.each(['8.8.8.8', '1.1.1.1', '172.15.255.255', '172.32.0.0', '100.63.255.255', '100.128.0.0', '169.253.255.255', '192.169.0.1', '11.0.0.1', '2606:4700:4700::1111', '2001:4860:4860::8888', 'fbff::1', '2a00::1'])(
    '%s is public',
    (address) => {
      expect(blockedReason(address)).toBeNull();
      expect(isPrivateAddress(address)).toBe(false);
    },
  );

  it('judges IPv4-mapped IPv6 addresses by their IPv4 address, in either notation', () => {
    expect(unmapIPv4('::ffff:127.0.0.1')).toBe('127.0.0.1');
    expect(unmapIPv4('::ffff:7f00:1')).toBe('127.0.0.1');
    expect(unmapIPv4('0:0:0:0:0:ffff:a9fe:a9fe')).toBe('169.254.169.254');
    expect(unmapIPv4('2001:db8::1')).toBe('2001:db8::1');
    expect(blockedReason('::ffff:127.0.0.1')).toBe('loopback');
    expect(blockedReason('::ffff:a00:1')).toBe('private');
    expect(blockedReason('::FFFF:A9FE:A9FE')).toBe('cloud metadata');
    expect(blockedReason('::ffff:808:808')).toBeNull();
  });

  it('refuses what is not an IP address', () => {
    expect(blockedReason('example.com')).toBe('not an IP address');
    expect(blockedReason('')).toBe('not an IP address');
  });
});

describe('resolveCallbackTarget', () => {
  it.each([
    ['http://127.0.0.1:8080/hook', /127\.0\.0\.1 is not a public address \(loopback\)/],
    ['http://127.1/', /127\.0\.0\.1 is not a public address \(loopback\)/],
    ['http://0x7f000001/', /127\.0\.0\.1 is not a public address \(loopback\)/],
    ['http://2130706433/', /127\.0\.0\.1 is not a public address \(loopback\)/],
    ['http://10.0.0.1/', /10\.0\.0\.1 is not a public address \(private\)/],
    ['http://169.254.169.254/latest/meta-data/', /169\.254\.169\.254 is not a public address \(cloud metadata\)/],
    ['http://[::1]:9000/', /::1 is not a public address \(loopback\)/],
    ['http://[::ffff:127.0.0.1]/', /is not a public address \(loopback\)/],
    ['http://[fd00:ec2::254]/', /is not a public address \(cloud metadata\)/],
    // Addresses that reach IPv4 through a translator or a tunnel, private IPv4 inside or not.
    ['http://[::ffff:0:127.0.0.1]/', /is not a public address \(IPv4-translated \(SIIT/],
    ['http://[::ffff:0:8.8.8.8]/', /is not a public address \(IPv4-translated \(SIIT/],
    ['http://[2002:7f00:1::1]/', /is not a public address \(6to4/],
    ['http://[2002:a9fe:a9fe::]/', /is not a public address \(6to4/],
    ['http://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/', /is not a public address \(Teredo/],
    ['https://100.100.100.200/', /is not a public address \(shared \(CGNAT\)\)/],
    ['http://localhost:3000/', /localhost resolves to (127\.0\.0\.1|::1), which is not a public address \(loopback\)/],
  ])('refuses %s unless private targets are allowed', async (url, message) => {
    await expect(resolveCallbackTarget(url, false)).rejects.toThrow(message);
    await expect(resolveCallbackTarget(url, false)).rejects.toThrow(/DROVER_WEBHOOK_ALLOW_PRIVATE=true/);
  });

  it('allows private targets when told to, and connects to the checked address', async () => {
    const target = await resolveCallbackTarget('http://localhost:3000/x', true);
    expect(['127.0.0.1', '::1']).toContain(target.address);
    expect(target.family).toBe(target.address === '::1' ? 6 : 4);
    expect(target.url.pathname).toBe('/x');
    const mapped = await resolveCallbackTarget('http://[::ffff:127.0.0.1]/', true);
    expect(mapped).toMatchObject({ address: '127.0.0.1', family: 4 });
    const v6 = await resolveCallbackTarget('http://[::1]:81/', true);
    expect(v6).toMatchObject({ address: '::1', family: 6 });
  });

  it('accepts public IP literals without a DNS lookup', async () => {
    await expect(resolveCallbackTarget('https://93.184.215.14/hook', false)).resolves.toMatchObject({ address: '93.184.215.14', family: 4 });
    await expect(resolveCallbackTarget('https://[2606:4700::1111]/hook', false)).resolves.toMatchObject({ address: '2606:4700::1111', family: 6 });
  });

  it('refuses other schemes, malformed URLs and names that do not resolve', async () => {
    await expect(resolveCallbackTarget('ftp://example.com/', true)).rejects.toThrow(/http or https, not ftp:/);
    await expect(resolveCallbackTarget('file:///etc/passwd', true)).rejects.toThrow(/http or https/);
    await expect(resolveCallbackTarget('not a url', true)).rejects.toThrow(/not a valid URL/);
    await expect(resolveCallbackTarget('http://drover-no-such-host.invalid/', true)).rejects.toThrow(/does not resolve/);
  });
});

/**
 * isPrivateAddress over every refused range at its edges (first and last address), in IPv4, IPv6
 * and IPv4-mapped IPv6 notations, and the public addresses just outside each IPv4 range.
 */
describe('isPrivateAddress: every range, at its edges', () => {
  const V4_RANGES: [range: string, first: string, last: string, reason: string][] = [
    ['0.0.0.0/8', '0.0.0.0', '0.255.255.255', 'unspecified ("this network")'],
    ['127.0.0.0/8', '127.0.0.0', '127.255.255.255', 'loopback'],
    ['10.0.0.0/8', '10.0.0.0', '10.255.255.255', 'private'],
    ['172.16.0.0/12', '172.16.0.0', '172.31.255.255', 'private'],
    ['192.168.0.0/16', '192.168.0.0', '192.168.255.255', 'private'],
    ['100.64.0.0/10', '100.64.0.0', '100.127.255.255', 'shared (CGNAT)'],
    ['169.254.0.0/16', '169.254.0.0', '169.254.255.255', 'link-local'],
    ['169.254.169.254/32', '169.254.169.254', '169.254.169.254', 'cloud metadata'],
    ['192.0.0.0/24', '192.0.0.0', '192.0.0.255', 'reserved (IETF protocol assignments)'],
    ['198.18.0.0/15', '198.18.0.0', '198.19.255.255', 'reserved (benchmarking)'],
    ['224.0.0.0/4', '224.0.0.0', '239.255.255.255', 'multicast'],
    ['240.0.0.0/4', '240.0.0.0', '255.255.255.255', 'reserved (incl. broadcast)'],
  ];
  const V6_RANGES: [range: string, first: string, last: string, reason: string][] = [
    ['::/128', '::', '0:0:0:0:0:0:0:0', 'unspecified'],
    ['::1/128', '::1', '0:0:0:0:0:0:0:1', 'loopback'],
    ['::/96 (IPv4-compatible)', '::2', '::ffff:ffff', 'reserved (IPv4-compatible)'],
    ['64:ff9b::/96 (NAT64)', '64:ff9b::', '64:ff9b::ffff:ffff', 'NAT64 (reaches IPv4 addresses)'],
    ['64:ff9b:1::/48 (local-use NAT64)', '64:ff9b:1::', '64:ff9b:1:ffff:ffff:ffff:ffff:ffff', 'NAT64 (reaches IPv4 addresses)'],
    ['::ffff:0:0:0/96 (SIIT, IPv4-translated)', '::ffff:0:0:0', '::ffff:0:ffff:ffff', 'IPv4-translated (SIIT, reaches IPv4 addresses)'],
    ['2002::/16 (6to4)', '2002::', '2002:ffff:ffff:ffff:ffff:ffff:ffff:ffff', '6to4 (reaches IPv4 addresses)'],
    ['2001::/32 (Teredo)', '2001::', '2001:0:ffff:ffff:ffff:ffff:ffff:ffff', 'Teredo (reaches IPv4 addresses)'],
    ['fc00::/7', 'fc00::', 'fdff:ffff:ffff:ffff:ffff:ffff:ffff:ffff', 'private (unique local)'],
    ['fd00:ec2::254/128', 'fd00:ec2::254', 'fd00:0ec2:0000:0000:0000:0000:0000:0254', 'cloud metadata'],
    ['fe80::/10', 'fe80::', 'febf:ffff:ffff:ffff:ffff:ffff:ffff:ffff', 'link-local'],
    ['fec0::/10', 'fec0::', 'feff:ffff:ffff:ffff:ffff:ffff:ffff:ffff', 'site-local (deprecated private)'],
    ['ff00::/8', 'ff00::', 'ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff', 'multicast'],
  ];
  /** `a.b.c.d` → `::ffff:HHHH:HHHH`. */
  const hexMapped = (v4: string) => {
    const [a, b, c, d] = v4.split('.').map(Number);
    return `::ffff:${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  };

  it.each(V4_RANGES)('IPv4 %s: %s and %s are refused (%s)', (_range, first, last, reason) => {
    for (const address of [first, last]) {
      expect(isPrivateAddress(address), address).toBe(true);
      expect(blockedReason(address), address).toBe(reason);
    }
  });

  it.each(V6_RANGES)('IPv6 %s: %s and %s are refused (%s)', (_range, first, last, reason) => {
    for (const address of [first, last, first.toUpperCase(), last.toUpperCase()]) {
      expect(isPrivateAddress(address), address).toBe(true);
      expect(blockedReason(address), address).toBe(reason);
    }
  });

  it.each(V4_RANGES)('IPv4-mapped IPv6 %s: judged as the IPv4 address in every notation (%s … %s, %s)', (_range, first, last, reason) => {
    for (const v4 of [first, last]) {
      for (const address of [`::ffff:${v4}`, hexMapped(v4), `0:0:0:0:0:ffff:${v4}`, hexMapped(v4).toUpperCase(), `0000:0000:0000:0000:0000:FFFF:${v4}`]) {
        expect(isPrivateAddress(address), address).toBe(true);
        expect(blockedReason(address), address).toBe(reason);
      }
    }
  });

  it('a link-local address with a zone index is refused', () => {
    expect(isPrivateAddress('fe80::1%eth0')).toBe(true);
  });

  const PUBLIC_V4 = [
    '1.0.0.0', // after 0.0.0.0/8
    '9.255.255.255', '11.0.0.0', // around 10/8
    '126.255.255.255', '128.0.0.0', // around 127/8
    '100.63.255.255', '100.128.0.0', // around 100.64/10
    '169.253.255.255', '169.255.0.0', // around 169.254/16
    '172.15.255.255', '172.32.0.0', // around 172.16/12
    '191.255.255.255', '192.0.1.0', // around 192.0.0/24
    '192.167.255.255', '192.169.0.0', // around 192.168/16
    '198.17.255.255', '198.20.0.0', // around 198.18/15
    '223.255.255.255', // before 224/4
    '1.1.1.1', '8.8.8.8', '9.9.9.9', '93.184.215.14', '140.82.112.3', '185.199.108.153',
  ];
  it.each(PUBLIC_V4)('%s is public, also IPv4-mapped', (address) => {
    for (const form of [address, `::ffff:${address}`, hexMapped(address)]) {
      expect(isPrivateAddress(form), form).toBe(false);
      expect(blockedReason(form), form).toBeNull();
    }
  });

  it.each(['2001:4860:4860::8888', '2606:4700:4700::1111', '2a03:2880:f12f:83:face:b00c:0:25de', '2620:fe::fe', '2a00:1450:4001:81d::200e', 'fbff:ffff:ffff:ffff:ffff:ffff:ffff:ffff'])(
    'IPv6 %s is public',
    (address) => {
      expect(isPrivateAddress(address)).toBe(false);
      expect(blockedReason(address)).toBeNull();
    },
  );

  it.each(['example.com', '', '1.2.3', '256.1.1.1', '::g', '1.2.3.4:80', '[::1]'])('%j is not an IP address and is refused', (input) => {
    expect(isPrivateAddress(input)).toBe(true);
  });
});
