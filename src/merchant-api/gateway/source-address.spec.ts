import { isAllowed, parseAllowList, sourceAddress } from './source-address';

describe('source address', () => {
  it.each<[string, string | undefined, number, string]>([
    ['the socket peer without trusted proxies', '10.1.2.3, 10.9.9.9', 0, '192.0.2.1'],
    ['the address the one trusted proxy saw', '198.51.100.7', 1, '198.51.100.7'],
    ['ignoring entries a client forged to the left', '10.1.2.3, 198.51.100.7', 1, '198.51.100.7'],
    ['two trusted hops', '10.1.2.3, 198.51.100.7, 203.0.113.9', 2, '198.51.100.7'],
    ['the leftmost when fewer hops arrived than trusted', '198.51.100.7', 3, '198.51.100.7'],
    ['no header at all', undefined, 1, '192.0.2.1'],
  ])('%s', (_, forwardedFor, hops, expected) => {
    expect(sourceAddress('192.0.2.1', forwardedFor, hops)).toBe(expected);
  });

  it('reads an IPv4-mapped IPv6 peer as IPv4', () => {
    expect(sourceAddress('::ffff:127.0.0.1', undefined, 0)).toBe('127.0.0.1');
  });
});

describe('IP whitelist', () => {
  it.each<[string[], string, boolean]>([
    [['127.0.0.1'], '127.0.0.1', true],
    [['127.0.0.1'], '127.0.0.2', false],
    [['10.0.0.0/8'], '10.255.255.255', true],
    [['10.0.0.0/8'], '11.0.0.0', false],
    [['192.168.1.0/24'], '192.168.1.77', true],
    [['192.168.1.0/24'], '192.168.2.1', false],
    [['0.0.0.0/0'], '8.8.8.8', true],
    [['::1'], '::1', true],
    [['2001:db8::/32'], '2001:db8:ffff::1', true],
    [['2001:db8::/32'], '2001:db9::1', false],
    [['2001:db8::/32'], '10.0.0.1', false],
    [['10.0.0.0/8'], '2001:db8::1', false],
    [['10.0.0.0/8', '2001:db8::/32'], '2001:db8::1', true],
  ])('%j allows %s: %s', (entries, address, allowed) => {
    expect(isAllowed(parseAllowList(entries)!, address)).toBe(allowed);
  });

  it.each([['10.0.0.0/33'], ['2001:db8::/129'], ['not-an-ip'], ['10.0.0.1/8/1'], ['10.0.0.0/x']])('refuses the entry %s', (entry) => {
    expect(parseAllowList([entry])).toBeUndefined();
  });

  it('allows nothing that is not an address', () => {
    expect(isAllowed(parseAllowList(['0.0.0.0/0'])!, 'localhost')).toBe(false);
  });
});
