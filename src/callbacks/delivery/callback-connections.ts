import { Agent as HttpAgent } from 'node:http';
import { keptConnectionsAgent } from '../../infrastructure/http/kept-connections';

/** An idle connection is closed after this long, or sooner when the merchant's server announces a shorter keep-alive. */
const IDLE_MS = 4_000;
/** Endpoints whose connections are kept by default; beyond it the least recently used one's idle connections are closed. */
const MAX_ENDPOINTS = 1_000;
/**
 * Idle connections kept per endpoint: as many callbacks as go out at once by
 * default (CALLBACK_CONCURRENCY). An endpoint many merchants share gets a
 * burst of callbacks when a batch of orders settles; with fewer kept, most of
 * the next burst opened new connections (0.6 per callback in the benchmark).
 */
const KEPT_PER_ENDPOINT = 128;

/**
 * Keep-alive connections to merchants' callback endpoints, so that a busy
 * merchant's callbacks do not each open a TCP connection (and a TLS session).
 * An endpoint is the URL's origin together with the addresses its name
 * resolved to and passed the address rule: a connection is reused only for
 * a callback whose name resolves to the same addresses, so a changed DNS
 * answer (rebinding) never rides on a socket connected to an address vetted
 * earlier; it gets connections of its own.
 */
export class CallbackConnections {
  private readonly agents = new Map<string, HttpAgent>();

  constructor(private readonly maxEndpoints = MAX_ENDPOINTS) {}

  agentFor(url: URL, addresses: readonly { address: string }[]): HttpAgent {
    const key = `${url.protocol}//${url.host} ${addresses
      .map((a) => a.address)
      .sort()
      .join(',')}`;
    let agent = this.agents.get(key);
    if (agent) {
      // Most recently used last: the first is the one to close.
      this.agents.delete(key);
    } else {
      agent = keptConnectionsAgent(url.protocol, { idleMs: IDLE_MS, maxIdle: KEPT_PER_ENDPOINT });
      if (this.agents.size >= this.maxEndpoints) {
        const [oldest, evicted] = this.agents.entries().next().value as [string, HttpAgent];
        this.agents.delete(oldest);
        // Its callbacks in flight finish; their sockets then time out idle.
        closeIdle(evicted);
      }
    }
    this.agents.set(key, agent);
    return agent;
  }

  /** Closes every kept connection. */
  close(): void {
    for (const agent of this.agents.values()) agent.destroy();
    this.agents.clear();
  }
}

function closeIdle(agent: HttpAgent): void {
  for (const sockets of Object.values(agent.freeSockets)) for (const socket of sockets ?? []) socket.destroy();
}

/** The process's connections: kept sockets are unreferenced, so they never hold the process open. */
export const callbackConnections = new CallbackConnections();
