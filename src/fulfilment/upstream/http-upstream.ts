import { Agent as HttpAgent, request as httpRequest, IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { cutOnKeptConnection, keptConnectionsAgent } from '../../infrastructure/http/kept-connections';
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
/** Idle connections kept: as many as fulfilment runs at once by default. */
const KEPT_CONNECTIONS = 256;

/**
 * How far one HTTP exchange got: the line between "retry" and "unknown".
 * An answer over the size limit keeps its first bytes and says it was cut.
 */
type Exchange =
  | { phase: 'not_sent'; error: string }
  | { phase: 'sent'; error: string }
  | { phase: 'answered'; status: number; body: string; bytes: Buffer; contentType: string; oversized: boolean };

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
 * The upstream over HTTP (see docs/upstream-protocol.md). The replies are
 * untrusted input: redirects are not followed, bodies are bounded, and
 * anything but a well-formed definitive answer is "unknown" unless the
 * request provably never left.
 */
export class HttpUpstream implements UpstreamProvider {
  /** Kept connections: a fresh TCP connection per order cost the service and the upstream each about 0.2 ms of CPU. */
  private readonly connections: HttpAgent;
  /** Every order's request goes here: parsed once rather than per order. */
  private readonly topUpsUrl: URL;

  constructor(
    private readonly baseUrl: string,
    private readonly options: HttpUpstreamOptions,
  ) {
    this.connections = keptConnectionsAgent(new URL(baseUrl).protocol, { idleMs: REUSE_WITHIN_MS, maxIdle: KEPT_CONNECTIONS });
    this.topUpsUrl = this.urlOf('v1/topups');
  }

  /** `path` under the base URL, which may have a path of its own. */
  private urlOf(path: string): URL {
    return new URL(path, this.baseUrl.endsWith('/') ? this.baseUrl : `${this.baseUrl}/`);
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
    const exchange = await this.exchange('POST', this.topUpsUrl, body, { 'Idempotency-Key': r.orderNo });
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
      url,
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
    const exchange = await this.exchange('GET', this.urlOf(`v1/topups/${encodeURIComponent(orderNo)}`));
    if (exchange.phase !== 'answered') return { kind: 'unknown', reason: exchange.error, evidence: exchange.error };
    if (exchange.status === 404) return { kind: 'not_received' };
    if (exchange.status === 200 && isPending(exchange.body)) return { kind: 'pending' };
    const answer = exchange.status === 200 ? definitiveAnswer(exchange.body) : undefined;
    return answer ?? { kind: 'unknown', reason: `no definitive status (HTTP ${exchange.status})`, evidence: evidenceOf(exchange) };
  }

  /**
   * One request and its reply. A kept connection the upstream closed just as
   * the request went out fails before any reply (cutOnKeptConnection); the
   * request then goes once more over a fresh connection, and the idempotency
   * key makes a second receipt harmless, so an answer there is the answer.
   * If that one is not answered either, the first may still have arrived:
   * the exchange counts as sent, and so is never "retryable".
   */
  private exchange(
    method: string,
    url: URL,
    body?: string,
    headers: Record<string, string> = {},
    limits: ExchangeLimits = { maxBytes: MAX_BODY_BYTES, timeoutMs: this.options.timeoutMs },
    fresh = false,
  ): Promise<Exchange> {
    const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
    return new Promise<Exchange>((resolve) => {
      let sent = false;
      let replied = false;
      let settled = false;
      const finish = (exchange: Exchange | Promise<Exchange>) => {
        if (settled) return;
        settled = true;
        clearTimeout(connectTimer);
        clearTimeout(replyTimer);
        resolve(exchange);
      };
      const fail = (error: string) => finish(sent ? { phase: 'sent', error } : { phase: 'not_sent', error });
      const req = send(url, {
        method,
        agent: fresh ? false : this.connections,
        headers: { ...headers, ...(body ? { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) } : {}) },
      });
      const connectTimer = setTimeout(() => req.destroy(new Error(`no connection within ${this.options.connectTimeoutMs} ms`)), this.options.connectTimeoutMs);
      let replyTimer: NodeJS.Timeout | undefined;
      const sending = () => {
        sent = true;
        clearTimeout(connectTimer);
        replyTimer = setTimeout(() => req.destroy(new Error(`no reply within ${limits.timeoutMs} ms`)), limits.timeoutMs);
      };
      // A kept connection is open already: the request goes out on it at once.
      req.on('socket', (socket) => (req.reusedSocket ? sending() : socket.once(url.protocol === 'https:' ? 'secureConnect' : 'connect', sending)));
      req.on('error', (error: NodeJS.ErrnoException) => {
        const message = error.code ? `${error.code}: ${error.message}` : error.message;
        if (!fresh && cutOnKeptConnection(req, error, replied)) {
          const again = this.exchange(method, url, body, headers, limits, true);
          return finish(
            again.then((second): Exchange =>
              second.phase === 'answered' ? second : { phase: 'sent', error: `${message} on a kept connection, then ${second.error} on a new one` },
            ),
          );
        }
        fail(message);
      });
      req.on('response', (response: IncomingMessage) => {
        replied = true;
        const chunks: Buffer[] = [];
        let size = 0;
        const answered = (oversized: boolean): Exchange => {
          const bytes = Buffer.concat(chunks);
          const status = response.statusCode ?? 0;
          const contentType = response.headers['content-type'] ?? '';
          const text = oversized ? `${bytes.toString('utf8', 0, 200)}... (over ${limits.maxBytes} bytes)` : bytes.toString('utf8');
          return { phase: 'answered', status, body: text, bytes, contentType, oversized };
        };
        response.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > limits.maxBytes) {
            response.destroy();
            finish(answered(true));
            return;
          }
          chunks.push(chunk);
        });
        response.on('end', () => finish(answered(false)));
        response.on('error', (error) => fail(`reply broken off: ${error.message}`));
      });
      req.end(body);
    });
  }
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
