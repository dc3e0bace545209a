import { LookupFunction } from 'node:net';
import { buildConnector, Client } from 'undici';

/** An idle connection is closed after this long, or sooner when the merchant's server announces a shorter keep-alive. */
const IDLE_MS = 4_000;
/** How long before the end of an announced `Keep-Alive: timeout` a connection stops being used (as node:http's agents do). */
const ANNOUNCED_IDLE_MARGIN_MS = 1_000;
/** Endpoints whose connections are kept by default; beyond it the least recently used one's idle connections are closed. */
const MAX_ENDPOINTS = 1_000;
/**
 * Idle connections kept per endpoint: as many as callbacks go out at once by
 * default (CALLBACK_CONCURRENCY). An endpoint many merchants share gets a
 * burst of callbacks when a batch of orders settles; with fewer kept, most of
 * the next burst opened new connections (0.6 per callback in the benchmark).
 * Callbacks beyond it never wait for a connection: they open one of their own,
 * which is closed after its reply unless there is room for it among the kept.
 */
const KEPT_PER_ENDPOINT = 256;

export interface VettedAddress {
  address: string;
  family: number;
}

/** A connection to an endpoint, handed out for one callback; `reused` when it served an earlier callback. */
export interface CallbackConnection {
  readonly client: Client;
  readonly reused: boolean;
}

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
  private readonly endpoints = new Map<string, CallbackEndpoint>();

  constructor(private readonly maxEndpoints = MAX_ENDPOINTS) {}

  endpointFor(url: URL, addresses: readonly VettedAddress[]): CallbackEndpoint {
    const key = `${url.protocol}//${url.host} ${addresses
      .map((a) => a.address)
      .sort()
      .join(',')}`;
    let endpoint = this.endpoints.get(key);
    if (endpoint) {
      // Most recently used last: the first is the one to close.
      this.endpoints.delete(key);
    } else {
      endpoint = new CallbackEndpoint(url.origin, addresses);
      if (this.endpoints.size >= this.maxEndpoints) {
        const [oldest, evicted] = this.endpoints.entries().next().value as [string, CallbackEndpoint];
        this.endpoints.delete(oldest);
        // Its callbacks in flight finish; their connections are then closed.
        evicted.retire();
      }
    }
    this.endpoints.set(key, endpoint);
    return endpoint;
  }

  /** Closes every connection, those of callbacks in flight too. */
  close(): void {
    for (const endpoint of this.endpoints.values()) endpoint.destroy();
    this.endpoints.clear();
  }
}

/**
 * The connections to one origin at one set of vetted addresses: each an undici
 * `Client` (one socket, one request at a time). Idle ones wait in a stack, the
 * most recently used taken first, so the others age out. An idle socket is
 * unreferenced by undici, so kept connections never hold the process open.
 */
export class CallbackEndpoint {
  private readonly idle: Client[] = [];
  private readonly busy = new Set<Client>();
  private retired = false;
  /** Shared by the endpoint's connections, so that a new one resumes a TLS session. */
  private readonly connector: buildConnector.connector;

  constructor(
    private readonly origin: string,
    addresses: readonly VettedAddress[],
  ) {
    // No connect timeout of undici's own: the attempt's deadline bounds connecting.
    this.connector = buildConnector({ lookup: pinnedLookup(addresses), timeout: 0 });
  }

  /** A kept idle connection, or a new one; `fresh` asks for a new one (not to be kept). */
  take(fresh = false): CallbackConnection {
    const kept = fresh ? undefined : this.idle.pop();
    const client = kept ?? this.open();
    this.busy.add(client);
    return { client, reused: kept !== undefined };
  }

  /** Takes back a connection whose callback is over: kept if its reply was complete and there is room, closed otherwise. */
  give(client: Client, keep: boolean): void {
    this.busy.delete(client);
    if (keep && !this.retired && this.idle.length < KEPT_PER_ENDPOINT) this.idle.push(client);
    else close(client);
  }

  /** No longer handed out: the idle connections close now, the busy ones when their callbacks are over. */
  retire(): void {
    this.retired = true;
    for (const client of this.idle.splice(0)) close(client);
  }

  destroy(): void {
    this.retire();
    for (const client of this.busy) close(client);
    this.busy.clear();
  }

  private open(): Client {
    const client = new Client(this.origin, {
      connect: this.connector,
      keepAliveTimeout: IDLE_MS,
      keepAliveMaxTimeout: IDLE_MS,
      keepAliveTimeoutThreshold: ANNOUNCED_IDLE_MARGIN_MS,
      // The attempt's deadline bounds the wait for the reply.
      headersTimeout: 0,
      bodyTimeout: 0,
    });
    // A connection closed while idle (its idle time is up, or the server closed it) is not handed out again.
    client.on('disconnect', () => {
      const at = this.idle.indexOf(client);
      if (at === -1) return;
      this.idle.splice(at, 1);
      close(client);
    });
    return client;
  }
}

function close(client: Client): void {
  client.destroy().catch(() => undefined);
}

/**
 * Hands the socket the addresses already vetted, so a second DNS answer (rebinding)
 * can never be the one connected to. The hostname still goes into Host, TLS SNI
 * and the certificate check.
 */
function pinnedLookup(addresses: readonly VettedAddress[]): LookupFunction {
  const all = addresses.map((a) => ({ address: a.address, family: a.family }));
  return (_hostname, options, callback) => process.nextTick(() => (options.all ? callback(null, all) : callback(null, all[0].address, all[0].family)));
}

/** The process's connections. */
export const callbackConnections = new CallbackConnections();
