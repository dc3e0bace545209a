import { request as httpRequest, IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { UpstreamFailCode } from '../../ledger/order/order.decider';
import { TopUpRequest, UpstreamOutcome, UpstreamProvider, UpstreamStatus } from './upstream.port';

const FAIL_CODES: readonly UpstreamFailCode[] = ['INVALID_ACCOUNT', 'UPSTREAM_REJECTED', 'SKU_UNAVAILABLE'];
const MAX_BODY_BYTES = 64 * 1024;

/** How far one HTTP exchange got: the line between "retry" and "unknown". */
type Exchange = { phase: 'not_sent'; error: string } | { phase: 'sent'; error: string } | { phase: 'answered'; status: number; body: string };

export interface HttpUpstreamOptions {
  /** From sending the request to the end of the reply. */
  timeoutMs: number;
  connectTimeoutMs: number;
}

/**
 * The upstream over HTTP (see docs/upstream-protocol.md). The replies are
 * untrusted input: redirects are not followed, bodies are bounded, and
 * anything but a well-formed definitive answer is "unknown" unless the
 * request provably never left.
 */
export class HttpUpstream implements UpstreamProvider {
  constructor(
    private readonly baseUrl: string,
    private readonly options: HttpUpstreamOptions,
  ) {}

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
    const exchange = await this.exchange('POST', '/v1/topups', body, { 'Idempotency-Key': r.orderNo });
    if (exchange.phase === 'not_sent') return { kind: 'retryable', reason: exchange.error };
    if (exchange.phase === 'sent') return { kind: 'unknown', reason: exchange.error, evidence: exchange.error };
    if (exchange.status === 503) return { kind: 'retryable', reason: 'upstream answered 503' };
    const answer = exchange.status === 200 ? definitiveAnswer(exchange.body) : undefined;
    return answer ?? { kind: 'unknown', reason: `unexpected reply (HTTP ${exchange.status})`, evidence: evidenceOf(exchange) };
  }

  async status(orderNo: string): Promise<UpstreamStatus> {
    const exchange = await this.exchange('GET', `/v1/topups/${encodeURIComponent(orderNo)}`);
    if (exchange.phase !== 'answered') return { kind: 'unknown', reason: exchange.error, evidence: exchange.error };
    if (exchange.status === 404) return { kind: 'not_received' };
    if (exchange.status === 200 && isPending(exchange.body)) return { kind: 'pending' };
    const answer = exchange.status === 200 ? definitiveAnswer(exchange.body) : undefined;
    return answer ?? { kind: 'unknown', reason: `no definitive status (HTTP ${exchange.status})`, evidence: evidenceOf(exchange) };
  }

  private exchange(method: string, path: string, body?: string, headers: Record<string, string> = {}): Promise<Exchange> {
    const url = new URL(path.replace(/^\//, ''), this.baseUrl.endsWith('/') ? this.baseUrl : `${this.baseUrl}/`);
    const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
    return new Promise<Exchange>((resolve) => {
      let sent = false;
      let settled = false;
      const finish = (exchange: Exchange) => {
        if (settled) return;
        settled = true;
        clearTimeout(connectTimer);
        clearTimeout(replyTimer);
        resolve(exchange);
      };
      const fail = (error: string) => finish(sent ? { phase: 'sent', error } : { phase: 'not_sent', error });
      // A fresh connection per request: a reused keep-alive socket that turns
      // out dead would blur "never sent" into "unknown".
      const req = send(url, {
        method,
        agent: false,
        headers: { ...headers, ...(body ? { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) } : {}) },
      });
      const connectTimer = setTimeout(() => req.destroy(new Error(`no connection within ${this.options.connectTimeoutMs} ms`)), this.options.connectTimeoutMs);
      let replyTimer: NodeJS.Timeout | undefined;
      req.on('socket', (socket) => {
        socket.once(url.protocol === 'https:' ? 'secureConnect' : 'connect', () => {
          sent = true;
          clearTimeout(connectTimer);
          replyTimer = setTimeout(() => req.destroy(new Error(`no reply within ${this.options.timeoutMs} ms`)), this.options.timeoutMs);
        });
      });
      req.on('error', (error: NodeJS.ErrnoException) => fail(error.code ? `${error.code}: ${error.message}` : error.message));
      req.on('response', (response: IncomingMessage) => {
        const chunks: Buffer[] = [];
        let size = 0;
        response.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > MAX_BODY_BYTES) {
            response.destroy();
            finish({
              phase: 'answered',
              status: response.statusCode ?? 0,
              body: `${Buffer.concat(chunks).toString('utf8', 0, 200)}... (over ${MAX_BODY_BYTES} bytes)`,
            });
            return;
          }
          chunks.push(chunk);
        });
        response.on('end', () => finish({ phase: 'answered', status: response.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
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
