import type { IncomingMessage } from 'node:http';

/**
 * Whether the client reached us over TLS: directly, or through the proxies
 * TRUST_PROXY counts, the nearest of which says so in X-Forwarded-Proto
 * (each proxy appends; the last entry is the one we trust). Without a
 * trusted proxy a client's own X-Forwarded-Proto proves nothing.
 */
export function arrivedOverTls(request: IncomingMessage, trustProxy: number): boolean {
  if ((request.socket as { encrypted?: boolean }).encrypted) return true;
  if (trustProxy === 0) return false;
  // Node joins a repeated X-Forwarded-Proto with commas, as a proxy appending to it does.
  const forwarded = String(request.headers['x-forwarded-proto'] ?? '');
  return (
    forwarded
      .slice(forwarded.lastIndexOf(',') + 1)
      .trim()
      .toLowerCase() === 'https'
  );
}
