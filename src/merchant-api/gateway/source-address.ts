import { BlockList, isIP } from 'node:net';

/**
 * The client's address: the socket peer, or with `trustedHops` reverse
 * proxies in front, the address the outermost trusted proxy saw. Entries
 * a client adds to X-Forwarded-For itself lie further left and are ignored.
 */
export function sourceAddress(socketAddress: string | undefined, forwardedFor: string | string[] | undefined, trustedHops: number): string {
  const chain = [
    ...(trustedHops > 0
      ? [forwardedFor ?? []]
          .flat()
          .flatMap((h) => h.split(','))
          .map((a) => a.trim())
          .filter(Boolean)
      : []),
    socketAddress ?? '',
  ];
  return normalize(chain[Math.max(0, chain.length - 1 - trustedHops)]);
}

/** "::ffff:10.1.2.3" is the IPv4 address 10.1.2.3. */
function normalize(address: string): string {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  return mapped ? mapped[1] : address;
}

/** Parses whitelist entries (addresses and CIDR ranges, IPv4 and IPv6); undefined for a bad entry. */
export function parseAllowList(entries: readonly string[]): BlockList | undefined {
  const list = new BlockList();
  for (const entry of entries) {
    const [address, prefix, ...rest] = entry.split('/');
    const family = isIP(address);
    if (family === 0 || rest.length > 0) return undefined;
    const type = family === 4 ? 'ipv4' : 'ipv6';
    if (prefix === undefined) {
      list.addAddress(address, type);
      continue;
    }
    const bits = /^\d{1,3}$/.test(prefix) ? Number(prefix) : NaN;
    if (!(bits >= 0 && bits <= (family === 4 ? 32 : 128))) return undefined;
    list.addSubnet(address, bits, type);
  }
  return list;
}

export function isAllowed(list: BlockList, address: string): boolean {
  const family = isIP(address);
  if (family === 0) return false;
  return list.check(address, family === 4 ? 'ipv4' : 'ipv6');
}
