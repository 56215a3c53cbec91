import { describe, expect, it } from 'vitest';
import { blockedReason, isPrivateAddress, resolveCallbackTarget, unmapIPv4 } from '../../src/domain/webhooks/address-guard.ts';

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
