import { Agent as HttpAgent, ClientRequest } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';

/**
 * An agent that keeps connections open between requests, for an HTTP client
 * that talks to the same server again and again (a merchant's callback
 * endpoint). An idle connection is closed after `idleMs`, or sooner
 * when the server announces a shorter `Keep-Alive: timeout`; the most
 * recently used one is taken first, so the others age out.
 */
export function keptConnectionsAgent(protocol: string, { idleMs, maxIdle }: { idleMs: number; maxIdle: number }): HttpAgent {
  const options = { keepAlive: true, timeout: idleMs, maxFreeSockets: maxIdle, scheduling: 'lifo' as const };
  return protocol === 'https:' ? new HttpsAgent(options) : new HttpAgent(options);
}

/**
 * A request on a kept connection that the server closed just as the request
 * went out: it fails before any byte of a reply, and nothing tells whether
 * the request arrived. Such a request may go once more over a new connection.
 */
export function cutOnKeptConnection(req: ClientRequest, error: unknown, replied: boolean): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return req.reusedSocket && !replied && (code === 'ECONNRESET' || code === 'EPIPE' || code === 'ECONNABORTED');
}
