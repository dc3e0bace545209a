import { promises as dns } from 'node:dns';
import { isIP } from 'node:net';
import { StringDecoder } from 'node:string_decoder';
import { isAcknowledged } from './acknowledgement';
import { isForbiddenAddress } from './address-policy';
import { callbackConnections, CallbackConnections } from './callback-connections';

const MAX_REPLY_BYTES = 64 * 1024;
const EXCERPT_BYTES = 200;

export interface ResolvedAddress {
  address: string;
  family: number;
}

export interface SendCallbackOptions {
  /** Parsed already when the caller needed its path (to sign it): not parsed again. */
  url: string | URL;
  headers: Record<string, string>;
  body: string;
  /** Bounds the whole attempt, name resolution included. */
  timeoutMs: number;
  allowPrivateNetworks: boolean;
  lookup?: (hostname: string) => Promise<ResolvedAddress[]>;
  /** Where kept connections come from; the process's own by default. */
  connections?: CallbackConnections;
}

export interface CallbackAttemptResult {
  acknowledged: boolean;
  statusCode: number | null;
  latencyMs: number;
  /** The first 200 bytes of the reply as UTF-8, invalid bytes and NULs replaced. */
  replyExcerpt: string;
  /** Why the attempt failed before a complete reply, or null. A complete but unacknowledging reply is not an error. */
  error: string | null;
  /** Set when the attempt was refused because the URL's host is not a public address. */
  refusedAddress?: string;
}

/** The address rule refused the callback's host: no connection was tried. */
class ForbiddenAddressError extends Error {
  constructor(readonly address: string) {
    super(`forbidden address ${address}`);
  }
}

type Outcome = Omit<CallbackAttemptResult, 'latencyMs'>;

const defaultLookup = (hostname: string): Promise<ResolvedAddress[]> => dns.lookup(hostname, { all: true });

/** One delivery attempt. Never throws: every failure is a result with `error` set. */
export async function sendCallback(options: SendCallbackOptions): Promise<CallbackAttemptResult> {
  const started = process.hrtime.bigint();
  const deadline = new Deadline(options.timeoutMs, started);
  let outcome: Outcome;
  try {
    outcome = await attempt(options, deadline);
  } catch (error) {
    outcome = { acknowledged: false, statusCode: null, replyExcerpt: '', error: messageOf(error) };
    if (error instanceof ForbiddenAddressError) outcome.refusedAddress = error.address;
  } finally {
    deadline.clear();
  }
  return { ...outcome, latencyMs: Math.floor(elapsedMs(started)) };
}

async function attempt(options: SendCallbackOptions, deadline: Deadline): Promise<Outcome> {
  const url = targetOf(options.url);
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  // Resolved now, not when the URL was registered: the merchant's DNS may have changed since.
  const addresses = isIP(host) ? [{ address: host, family: isIP(host) }] : await deadline.race(resolve(options.lookup ?? defaultLookup, host));
  if (!options.allowPrivateNetworks) {
    const forbidden = addresses.find((a) => isForbiddenAddress(a.address));
    if (forbidden) throw new ForbiddenAddressError(forbidden.address);
  }
  deadline.throwIfPassed();
  return exchange(url, addresses, options, deadline);
}

function targetOf(raw: string | URL): URL {
  let url: URL;
  try {
    url = typeof raw === 'string' ? new URL(raw) : raw;
  } catch {
    throw new Error('invalid callback URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error(`unsupported URL scheme ${url.protocol}`);
  // Credentials would be sent as Basic auth to whoever the merchant's DNS names.
  if (url.username || url.password) throw new Error('credentials in the callback URL are not allowed');
  return url;
}

async function resolve(lookup: (hostname: string) => Promise<ResolvedAddress[]>, host: string): Promise<ResolvedAddress[]> {
  const addresses = await lookup(host).catch((error: unknown) => {
    throw new Error(`cannot resolve ${host}: ${messageOf(error)}`);
  });
  if (!Array.isArray(addresses) || addresses.length === 0) throw new Error(`cannot resolve ${host}: no addresses`);
  const bad = addresses.find((a) => isIP(a?.address) === 0);
  if (bad) throw new Error(`cannot resolve ${host}: not an address: ${String(bad?.address)}`);
  return addresses.map((a) => ({ address: a.address, family: isIP(a.address) }));
}

/**
 * One POST over a kept connection to the same vetted addresses, or a new one.
 * A kept connection the merchant's server closed while it was idle fails
 * before any reply; the callback then goes once more, over a new connection
 * (`fresh`), within the same attempt and deadline.
 */
function exchange(url: URL, addresses: ResolvedAddress[], options: SendCallbackOptions, deadline: Deadline, fresh = false): Promise<Outcome> {
  return new Promise<Outcome>((settle) => {
    // The connection's addresses are the vetted ones: the endpoint's connections connect only to them.
    const endpoint = (options.connections ?? callbackConnections).endpointFor(url, addresses);
    const { client, reused } = endpoint.take(fresh);
    let statusCode: number | null = null;
    let keepAlive = true;
    const chunks: Buffer[] = [];
    let size = 0;
    let settled = false;
    /** Settles with `outcome`; a complete reply (no error) leaves the connection to be kept, anything else closes it. */
    const end = (outcome: Promise<Outcome> | Outcome, keepConnection: boolean) => {
      if (settled) return;
      settled = true;
      stopWaiting();
      endpoint.give(client, keepConnection && keepAlive);
      settle(outcome);
    };
    const finish = (error: string | null, acknowledged = false) =>
      end({ acknowledged, statusCode, replyExcerpt: excerptOf(Buffer.concat(chunks)), error }, error === null);
    const stopWaiting = deadline.onPassed((reason) => finish(messageOf(reason)));

    // An undici Client never follows redirects: a 3xx is just a status that does not acknowledge.
    client.dispatch(
      {
        path: url.pathname + url.search,
        method: 'POST',
        headers: {
          ...headersWithout(options.headers, 'content-type', 'content-length'),
          ...(fresh && { connection: 'close' }),
          'Content-Type': 'application/json',
          'Content-Length': String(Buffer.byteLength(options.body)),
        },
        body: options.body,
      },
      {
        onRequestStart() {},
        onResponseStart(_controller, status, headers) {
          if (status < 200) return; // informational: the reply is still to come
          statusCode = status;
          if (String(headers.connection).toLowerCase() === 'close') keepAlive = false;
        },
        onResponseData(_controller, chunk: Buffer) {
          if (settled) return;
          const room = MAX_REPLY_BYTES - size;
          chunks.push(chunk.subarray(0, room));
          size += Math.min(chunk.length, room);
          // A reply this large is not one of the acknowledging bodies; stop reading rather than buffer it.
          if (chunk.length > room) finish(`reply body exceeds ${MAX_REPLY_BYTES} bytes`);
        },
        onResponseEnd() {
          finish(null, statusCode !== null && isAcknowledged(statusCode, Buffer.concat(chunks)));
        },
        onResponseError(_controller, error) {
          if (!settled && reused && !fresh && statusCode === null && cutOnKeptConnection(error)) end(exchange(url, addresses, options, deadline, true), false);
          else finish(messageOf(error));
        },
      },
    );
  });
}

/** `headers` but for those named (in any case), which the request sets itself. */
function headersWithout(headers: Record<string, string>, ...names: string[]): Record<string, string> {
  const kept: Record<string, string> = {};
  for (const name in headers) if (!names.includes(name.toLowerCase())) kept[name] = headers[name];
  return kept;
}

/**
 * A request on a kept connection that the server closed just as the request
 * went out fails before any byte of a reply, and nothing tells whether the
 * request arrived: undici reports the socket closed (or reset) under it.
 */
function cutOnKeptConnection(error: unknown): boolean {
  const { code, message } = (typeof error === 'object' && error !== null ? error : {}) as { code?: unknown; message?: unknown };
  if (code === 'UND_ERR_SOCKET') return message === 'other side closed' || message === 'closed';
  return code === 'ECONNRESET' || code === 'EPIPE' || code === 'ECONNABORTED';
}

/**
 * The attempt's deadline: `timeoutMs` after `started`. A timer that fires
 * early re-arms, so latency >= timeout holds. Lighter than an AbortController
 * (whose signal is an EventTarget) on a path taken once per callback; the
 * attempt's steps wait on it one at a time, so it holds one listener.
 */
class Deadline {
  private reason?: Error;
  private listener?: (reason: Error) => void;
  private timer?: NodeJS.Timeout;

  constructor(
    private readonly timeoutMs: number,
    private readonly started: bigint,
  ) {
    this.arm();
  }

  /** Calls `listener` when the deadline passes, in place of any earlier one; returns what removes it (if still in place). */
  onPassed(listener: (reason: Error) => void): () => void {
    this.listener = listener;
    return () => {
      if (this.listener === listener) this.listener = undefined;
    };
  }

  throwIfPassed(): void {
    if (this.reason) throw this.reason;
  }

  /** Stops waiting for a promise (a DNS lookup cannot be cancelled) once the deadline passes. */
  race<T>(promise: Promise<T>): Promise<T> {
    return new Promise<T>((resolvePromise, reject) => {
      if (this.reason) return reject(this.reason);
      promise.then(resolvePromise, reject).finally(this.onPassed(reject));
    });
  }

  clear(): void {
    clearTimeout(this.timer);
  }

  private arm(): void {
    const left = this.timeoutMs - elapsedMs(this.started);
    if (left > 0) {
      this.timer = setTimeout(() => this.arm(), Math.ceil(left));
      return;
    }
    this.reason = new Error(`timed out after ${this.timeoutMs} ms`);
    this.listener?.(this.reason);
  }
}

/**
 * The first bytes of the reply, for the attempt record. A character cut at the
 * boundary is dropped rather than replaced, so valid UTF-8 stays within 200
 * bytes; NUL becomes U+FFFD because Postgres text cannot hold it.
 */
function excerptOf(body: Buffer): string {
  return new StringDecoder('utf8').write(body.subarray(0, EXCERPT_BYTES)).replace(/\u0000/g, '\uFFFD');
}

function elapsedMs(started: bigint): number {
  return Number(process.hrtime.bigint() - started) / 1e6;
}

/** Duck-typed: errors from node internals fail `instanceof Error` under Jest's separate realm. */
function messageOf(error: unknown): string {
  const { message, code } = (typeof error === 'object' && error !== null ? error : {}) as { message?: unknown; code?: unknown };
  if (typeof message !== 'string') return String(error);
  return (typeof code === 'string' && !message.includes(code) ? `${code}: ${message}` : message).trim();
}
