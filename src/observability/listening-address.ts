import type { Server } from 'node:net';

/**
 * Where a server really listens, said plainly: a wildcard address is every
 * interface, not 127.0.0.1 (which is all Nest's getUrl() reports for it).
 */
export function listeningAddress(server: Server): string {
  const address = server.address();
  if (address === null || typeof address === 'string') return String(address);
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  const url = `http://${host}:${address.port}`;
  if (address.address === '0.0.0.0') return `${url} (every IPv4 interface)`;
  if (address.address === '::') return `${url} (every interface)`;
  return url;
}
