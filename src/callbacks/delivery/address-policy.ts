import { BlockList, isIP } from 'node:net';

/**
 * Addresses a callback must never reach unless private networks are allowed
 * (contract §2): anything that is not a public unicast host. Two lists, one
 * per family, because BlockList matches IPv4 addresses against IPv6 rules
 * (as ::ffff:a.b.c.d), which would let the IPv6 catch-alls swallow all of IPv4.
 */
const ipv4 = new BlockList();
for (const [network, bits] of [
  ['0.0.0.0', 8], // "this network", includes the unspecified 0.0.0.0
  ['10.0.0.0', 8], // private
  ['100.64.0.0', 10], // carrier-grade NAT
  ['127.0.0.0', 8], // loopback
  ['169.254.0.0', 16], // link-local, includes the 169.254.169.254 metadata service
  ['172.16.0.0', 12], // private
  ['192.0.0.0', 24], // IETF protocol assignments
  ['192.0.2.0', 24], // documentation
  ['192.88.99.0', 24], // deprecated 6to4 relay anycast
  ['192.168.0.0', 16], // private
  ['198.18.0.0', 15], // benchmarking, used by proxies for fake-IP DNS
  ['198.51.100.0', 24], // documentation
  ['203.0.113.0', 24], // documentation
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, includes broadcast
] as const)
  ipv4.addSubnet(network, bits, 'ipv4');

const ipv6 = new BlockList();
for (const [network, bits] of [
  ['::', 128], // unspecified
  ['::1', 128], // loopback
  ['fc00::', 7], // unique local, includes fd00:ec2::254 (the EC2 metadata service)
  ['fe80::', 10], // link-local
  ['ff00::', 8], // multicast
  ['2001::', 32], // Teredo: tunnels to an IPv4 address we cannot vet
  ['2001:db8::', 32], // documentation
  ['2002::', 16], // 6to4: tunnels to an IPv4 address; deprecated (RFC 7526)
  // Public unicast is 2000::/3; the rest is reserved or unassigned (IPv4-compatible,
  // SIIT, local-use NAT64, discard, site-local). The named ranges above document intent.
  ['::', 3],
  ['4000::', 2],
  ['8000::', 1],
] as const)
  ipv6.addSubnet(network, bits, 'ipv6');

/**
 * Why callbacks to `url` will be refused, when its host alone shows it: an
 * address that is not public, or localhost (RFC 6761 keeps it on loopback).
 * Other names are resolved when each callback is sent, since DNS can change
 * in between, so a name that resolves to a private address is not caught here.
 */
export function refusedCallbackHost(url: string): string | undefined {
  let host: string;
  try {
    host = new URL(url).hostname.replace(/^\[(.*)\]$/, '$1');
  } catch {
    return undefined;
  }
  if (host === 'localhost' || host.endsWith('.localhost')) return `${host} is a loopback name`;
  if (isIP(host) === 0 || !isForbiddenAddress(host)) return undefined;
  return isLoopback(host) ? `${host} is a loopback address` : `${host} is not a public address`;
}

function isLoopback(address: string): boolean {
  const embedded = isIP(address) === 6 ? embeddedIPv4(address) : address;
  return embedded === undefined ? address === '::1' : embedded.startsWith('127.');
}

export function isForbiddenAddress(ip: string): boolean {
  const address = ip.split('%')[0]; // a zone id (fe80::1%eth0) only says which interface
  switch (isIP(address)) {
    case 4:
      return ipv4.check(address, 'ipv4');
    case 6: {
      const embedded = embeddedIPv4(address);
      return embedded !== undefined ? ipv4.check(embedded, 'ipv4') : ipv6.check(address, 'ipv6');
    }
    default:
      return true; // not an address: fail closed
  }
}

/** The IPv4 address behind an IPv4-mapped (::ffff:0:0/96) or NAT64 (64:ff9b::/96) address: that is where the packets go. */
function embeddedIPv4(address: string): string | undefined {
  const g = groups(address);
  const mapped = g.slice(0, 5).every((x) => x === 0) && g[5] === 0xffff;
  const nat64 = g[0] === 0x64 && g[1] === 0xff9b && g.slice(2, 6).every((x) => x === 0);
  return mapped || nat64 ? [g[6] >> 8, g[6] & 0xff, g[7] >> 8, g[7] & 0xff].join('.') : undefined;
}

/** The eight 16-bit groups of a valid IPv6 address (isIP has vetted it). */
function groups(address: string): number[] {
  const hex = address.replace(/(\d+)\.(\d+)\.(\d+)\.(\d+)$/, (_, a, b, c, d) => `${((+a << 8) | +b).toString(16)}:${((+c << 8) | +d).toString(16)}`);
  const [head, tail] = hex.split('::');
  const left = head ? head.split(':') : [];
  const right = tail ? tail.split(':') : [];
  const fill = tail === undefined ? [] : Array<string>(8 - left.length - right.length).fill('0');
  return [...left, ...fill, ...right].map((x) => parseInt(x, 16));
}
