import { Client, Dispatcher } from 'undici';
import { UpstreamFailCode } from '../../ledger/order/order.decider';
import { isoTimestamp } from '../../shared/clock';
import { MAX_REPORT_BYTES, TopUpRequest, UpstreamOutcome, UpstreamProvider, UpstreamReportError, UpstreamStatus } from './upstream.port';

const FAIL_CODES: readonly UpstreamFailCode[] = ['INVALID_ACCOUNT', 'UPSTREAM_REJECTED', 'SKU_UNAVAILABLE'];
const MAX_BODY_BYTES = 64 * 1024;
/** A report is a file, not an answer: it may take a while to make and to send. */
export const REPORT_TIMEOUT_MS = 60_000;
/**
 * A kept connection is reused only this soon after its last reply, well
 * inside any server's keep-alive timeout (Node's own is 5 s; a shorter
 * `Keep-Alive: timeout` the upstream announces is honoured too).
 */
const REUSE_WITHIN_MS = 1_000;
/** A connection is kept this much less than the `Keep-Alive: timeout` the upstream announces (as Node's agent does). */
const KEEP_ALIVE_MARGIN_MS = 1_000;
/** Idle connections kept: as many as fulfilment runs at once by default. */
const KEPT_CONNECTIONS = 256;
/** How a connection ends under a request: the server closed it or reset it, or it broke while the request was written. */
const CUT_CODES: ReadonlySet<string> = new Set(['UND_ERR_SOCKET', 'ECONNRESET', 'EPIPE', 'ECONNABORTED']);

/**
 * How far one HTTP exchange got: the line between "retry" and "unknown".
 * An answer over the size limit keeps its first bytes and says it was cut.
 */
type Exchange =
  | { phase: 'not_sent'; error: string }
  | { phase: 'sent'; error: string }
  | { phase: 'answered'; status: number; body: string; bytes: Buffer; contentType: string; oversized: boolean };

/** One try of an exchange; `cut` is a kept connection that ended before any reply (see exchange()). */
type Attempted = Exchange | { phase: 'cut'; error: string };

/** What one exchange may take: the reply's size, and the time from sending to its end. */
interface ExchangeLimits {
  maxBytes: number;
  timeoutMs: number;
}

export interface HttpUpstreamOptions {
  /** From sending the request to the end of the reply. */
  timeoutMs: number;
  connectTimeoutMs: number;
  /** The same for a transaction report; REPORT_TIMEOUT_MS by default. */
  reportTimeoutMs?: number;
}

/**
 * One connection to the upstream (an undici Client holds one socket at a
 * time, and opens a new one when that one has closed), counting the
 * requests written on its current socket: from the second on, a request
 * goes out on a kept connection.
 */
class KeptConnection extends Client {
  sentOnSocket = 0;

  constructor(origin: string, options: Client.Options) {
    super(origin, options);
    this.on('connect', () => (this.sentOnSocket = 0));
  }
}

/**
 * The connections, as Node's keep-alive agent keeps them: one per request in
 * flight, and up to KEPT_CONNECTIONS idle ones, the most recently used taken
 * first so that the others age out (each closes REUSE_WITHIN_MS after its
 * last reply). undici's own Pool counts a connection busy until the event
 * loop's next turn after its reply, so a request sent on the answer of the
 * one before would open a second connection.
 */
class KeptConnections {
  private readonly idle: KeptConnection[] = [];
  private readonly all = new Set<KeptConnection>();
  private closed = false;

  constructor(
    private readonly origin: string,
    private readonly options: Client.Options,
  ) {}

  /** A connection for one request, or none once closed. */
  take(): KeptConnection | undefined {
    if (this.closed) return undefined;
    const kept = this.idle.pop();
    if (kept) return kept;
    const connection = new KeptConnection(this.origin, this.options);
    this.all.add(connection);
    return connection;
  }

  /** Back from a request that has ended (its reply read, or its error reported). */
  give(connection: KeptConnection): void {
    if (!this.closed && this.idle.length < KEPT_CONNECTIONS) {
      this.idle.push(connection);
      return;
    }
    this.all.delete(connection);
    if (!this.closed) void connection.close();
  }

  /** Closes every connection once its request in flight has ended. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.idle.length = 0;
    await Promise.all([...this.all].map((connection) => connection.close()));
    this.all.clear();
  }
}

/**
 * The upstream over HTTP (see docs/upstream-protocol.md), with undici, the
 * Node team's HTTP client: about half the CPU per request of node:http. The
 * replies are untrusted input: redirects are not followed, bodies are
 * bounded, and anything but a well-formed definitive answer is "unknown"
 * unless the request provably never left.
 */
export class HttpUpstream implements UpstreamProvider {
  /** Kept connections: a fresh TCP connection per order cost the service and the upstream each about 0.2 ms of CPU. */
  private readonly connections: KeptConnections;
  /** For the one request sent again on a new connection (exchange()). */
  private readonly connectionOptions: Client.Options;
  private readonly origin: string;
  /** The base URL's user and password, sent as Basic credentials. */
  private readonly authorization: string | undefined;
  /** Every order's request goes here: parsed once rather than per order. */
  private readonly topUpsPath: string;

  constructor(
    private readonly baseUrl: string,
    private readonly options: HttpUpstreamOptions,
  ) {
    const base = new URL(baseUrl);
    this.origin = base.origin;
    if (base.username || base.password) {
      this.authorization = `Basic ${Buffer.from(`${decodeURIComponent(base.username)}:${decodeURIComponent(base.password)}`).toString('base64')}`;
    }
    this.connectionOptions = {
      keepAliveTimeout: REUSE_WITHIN_MS,
      keepAliveMaxTimeout: REUSE_WITHIN_MS,
      keepAliveTimeoutThreshold: KEEP_ALIVE_MARGIN_MS,
      // The exchange times the reply itself, from sending to its end.
      headersTimeout: 0,
      bodyTimeout: 0,
      connect: { timeout: options.connectTimeoutMs },
    };
    this.connections = new KeptConnections(this.origin, this.connectionOptions);
    this.topUpsPath = pathOf(this.urlOf('v1/topups'));
  }

  /** `path` under the base URL, which may have a path of its own. */
  private urlOf(path: string): URL {
    return new URL(path, this.baseUrl.endsWith('/') ? this.baseUrl : `${this.baseUrl}/`);
  }

  /** Closes the kept connections once the requests in flight have ended. */
  async close(): Promise<void> {
    await this.connections.close();
  }

  async topUp(r: TopUpRequest): Promise<UpstreamOutcome> {
    const body = JSON.stringify({
      order_no: r.orderNo,
      sku_id: r.skuId,
      route: r.route,
      account_id: r.accountId,
      account_fields: r.accountFields,
      amount: r.amount,
      currency: r.currency,
    });
    const exchange = await this.exchange('POST', this.topUpsPath, body, { 'Idempotency-Key': r.orderNo });
    if (exchange.phase === 'not_sent') return { kind: 'retryable', reason: exchange.error };
    if (exchange.phase === 'sent') return { kind: 'unknown', reason: exchange.error, evidence: exchange.error };
    if (exchange.status === 503) return { kind: 'retryable', reason: 'upstream answered 503' };
    const answer = exchange.status === 200 ? definitiveAnswer(exchange.body) : undefined;
    return answer ?? { kind: 'unknown', reason: `unexpected reply (HTTP ${exchange.status})`, evidence: evidenceOf(exchange) };
  }

  async transactionReport(from: Date, to: Date): Promise<Buffer> {
    const url = this.urlOf('v1/reports/transactions');
    url.searchParams.set('from', isoTimestamp(from));
    url.searchParams.set('to', isoTimestamp(to));
    const exchange = await this.exchange(
      'GET',
      pathOf(url),
      undefined,
      { Accept: 'text/csv' },
      {
        maxBytes: MAX_REPORT_BYTES,
        timeoutMs: this.options.reportTimeoutMs ?? REPORT_TIMEOUT_MS,
      },
    );
    if (exchange.phase !== 'answered') throw new UpstreamReportError(`the upstream's transaction report could not be fetched: ${exchange.error}`);
    if (exchange.oversized) throw new UpstreamReportError(`the upstream's transaction report is larger than ${MAX_REPORT_BYTES / 1024 / 1024} MiB`);
    if (exchange.status !== 200) {
      throw new UpstreamReportError(`the upstream answered the transaction report with ${evidenceOf(exchange).slice(0, 300)}`);
    }
    if (!/^text\/(csv|plain)\b/i.test(exchange.contentType)) {
      throw new UpstreamReportError(`the upstream answered the transaction report with Content-Type ${JSON.stringify(exchange.contentType)}, not text/csv`);
    }
    return exchange.bytes;
  }

  async status(orderNo: string): Promise<UpstreamStatus> {
    const exchange = await this.exchange('GET', pathOf(this.urlOf(`v1/topups/${encodeURIComponent(orderNo)}`)));
    if (exchange.phase !== 'answered') return { kind: 'unknown', reason: exchange.error, evidence: exchange.error };
    if (exchange.status === 404) return { kind: 'not_received' };
    if (exchange.status === 200 && isPending(exchange.body)) return { kind: 'pending' };
    const answer = exchange.status === 200 ? definitiveAnswer(exchange.body) : undefined;
    return answer ?? { kind: 'unknown', reason: `no definitive status (HTTP ${exchange.status})`, evidence: evidenceOf(exchange) };
  }

  /**
   * One request and its reply. A kept connection the upstream closed just as
   * the request went out fails before any reply (cut); the request then goes
   * once more over a fresh connection, and the idempotency key makes a second
   * receipt harmless, so an answer there is the answer. If that one is not
   * answered either, the first may still have arrived: the exchange counts
   * as sent, and so is never "retryable".
   */
  private async exchange(
    method: Dispatcher.HttpMethod,
    path: string,
    body?: string,
    headers: Record<string, string> = {},
    limits: ExchangeLimits = { maxBytes: MAX_BODY_BYTES, timeoutMs: this.options.timeoutMs },
  ): Promise<Exchange> {
    const request = (): Dispatcher.DispatchOptions => ({
      origin: this.origin,
      method,
      path,
      body,
      headers: {
        ...headers,
        ...(body ? { 'Content-Type': 'application/json' } : {}),
        ...(this.authorization ? { Authorization: this.authorization } : {}),
      },
    });
    const connection = this.connections.take();
    if (!connection) return { phase: 'not_sent', error: 'the upstream client is closed' };
    const first = await this.attempt(connection, request(), limits, () => this.connections.give(connection));
    if (first.phase !== 'cut') return first;
    const fresh = new Client(this.origin, this.connectionOptions);
    try {
      const second = await this.attempt(fresh, { ...request(), reset: true }, limits);
      return second.phase === 'answered' ? second : { phase: 'sent', error: `${first.error} on a kept connection, then ${second.error} on a new one` };
    } finally {
      void fresh.destroy();
    }
  }

  /** One try on one connection; `ended` is called once undici is done with the request. */
  private attempt(connection: Client, request: Dispatcher.DispatchOptions, limits: ExchangeLimits, ended?: () => void): Promise<Attempted> {
    return new Promise<Attempted>((resolve) => {
      connection.dispatch(request, new Attempt(connection, limits, this.options.connectTimeoutMs, resolve, ended));
    });
  }
}

/**
 * One request's way through undici: it counts as sent from the moment it is
 * written on a connection (onRequestStart), and the reply is timed from then
 * to its end.
 */
class Attempt implements Dispatcher.DispatchHandler {
  private controller: Dispatcher.DispatchController | undefined;
  /** Why the request was stopped before it had a connection: it must not go out later. */
  private stopped: Error | undefined;
  private sent = false;
  private reused = false;
  private replied = false;
  private settled = false;
  private readonly connectTimer: NodeJS.Timeout;
  private replyTimer: NodeJS.Timeout | undefined;
  private status = 0;
  private contentType = '';
  private readonly chunks: Buffer[] = [];
  private size = 0;

  constructor(
    private readonly connection: Client,
    private readonly limits: ExchangeLimits,
    connectTimeoutMs: number,
    private readonly done: (attempted: Attempted) => void,
    private ended: (() => void) | undefined,
  ) {
    this.connectTimer = setTimeout(() => this.stop(new Error(`no connection within ${connectTimeoutMs} ms`)), connectTimeoutMs);
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.controller = controller;
    if (this.stopped) return controller.abort(this.stopped);
    this.sent = true;
    // A kept connection is open already: the request goes out on it at once.
    this.reused = this.connection instanceof KeptConnection && this.connection.sentOnSocket++ > 0;
    clearTimeout(this.connectTimer);
    this.replyTimer = setTimeout(() => this.stop(new Error(`no reply within ${this.limits.timeoutMs} ms`)), this.limits.timeoutMs);
  }

  onResponseStart(_: Dispatcher.DispatchController, statusCode: number, headers: Record<string, string | string[] | undefined>): void {
    if (statusCode < 200) return;
    this.replied = true;
    this.status = statusCode;
    const contentType = headers['content-type'];
    this.contentType = (Array.isArray(contentType) ? contentType[0] : contentType) ?? '';
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    if (this.settled) return;
    this.size += chunk.length;
    if (this.size > this.limits.maxBytes) {
      this.finish(this.answered(true));
      controller.abort(new Error(`reply over ${this.limits.maxBytes} bytes`));
      return;
    }
    this.chunks.push(chunk);
  }

  onResponseEnd(): void {
    this.finish(this.answered(false));
    this.end();
  }

  onResponseError(_: Dispatcher.DispatchController | undefined, error: Error): void {
    this.end();
    if (this.settled) return;
    const code = (error as NodeJS.ErrnoException).code;
    const message = code ? `${code}: ${error.message}` : error.message;
    if (!this.sent) return this.finish({ phase: 'not_sent', error: message });
    if (this.reused && !this.replied && code !== undefined && CUT_CODES.has(code)) return this.finish({ phase: 'cut', error: message });
    this.finish({ phase: 'sent', error: this.replied && error !== this.stopped ? `reply broken off: ${message}` : message });
  }

  /** A timer ran out: before a connection, the request is dropped (it never leaves); after, the connection is closed. */
  private stop(error: Error): void {
    this.stopped = error;
    if (this.controller) this.controller.abort(error);
    else this.finish({ phase: 'not_sent', error: error.message });
  }

  private answered(oversized: boolean): Exchange {
    const bytes = Buffer.concat(this.chunks);
    const text = oversized ? `${bytes.toString('utf8', 0, 200)}... (over ${this.limits.maxBytes} bytes)` : bytes.toString('utf8');
    return { phase: 'answered', status: this.status, body: text, bytes, contentType: this.contentType, oversized };
  }

  /** undici is done with the request: its connection may take another. */
  private end(): void {
    const ended = this.ended;
    this.ended = undefined;
    ended?.();
  }

  private finish(attempted: Attempted): void {
    if (this.settled) return;
    this.settled = true;
    clearTimeout(this.connectTimer);
    clearTimeout(this.replyTimer);
    this.done(attempted);
  }
}

/** The request line's path: the URL's path and query. */
function pathOf(url: URL): string {
  return url.pathname + url.search;
}

/** A well-formed delivered or failed answer, or undefined for anything else. */
function definitiveAnswer(
  text: string,
): { kind: 'delivered'; reference?: string } | { kind: 'refused'; failCode: UpstreamFailCode; failReason: string } | undefined {
  let reply: unknown;
  try {
    reply = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (typeof reply !== 'object' || reply === null) return undefined;
  const { status, code, message, reference } = reply as Record<string, unknown>;
  if (status === 'delivered') return { kind: 'delivered', reference: typeof reference === 'string' ? reference.slice(0, 128) : undefined };
  if (status === 'failed' && FAIL_CODES.includes(code as UpstreamFailCode)) {
    const reason = typeof message === 'string' && message.trim() !== '' ? message.replace(/\p{C}/gu, ' ').slice(0, 200) : String(code);
    return { kind: 'refused', failCode: code as UpstreamFailCode, failReason: reason };
  }
  return undefined;
}

function isPending(text: string): boolean {
  try {
    return (JSON.parse(text) as { status?: unknown } | null)?.status === 'pending';
  } catch {
    return false;
  }
}

function evidenceOf(exchange: { status: number; body: string }): string {
  return `HTTP ${exchange.status}: ${exchange.body.slice(0, 500)}`;
}
