import http from 'node:http';
import { newNonce, sign } from '../../src/merchant-client/signing';

/** What every submit goes to: the service and the baseline answer the same path. */
export const SUBMIT_PATH = '/api/v2/topup/submit';
/** An account whose number ends in none of the simulator's special suffixes (000, 001, 999, 503): delivered. */
export const ACCOUNT_ID = '12345678';
/** A request that has not finished after this long counts as an error, so a run always ends. */
const REQUEST_TIMEOUT_MS = 30_000;

export interface Credentials {
  apiKey: string;
  appSecret: string;
}

export interface LoadOptions {
  /** http://127.0.0.1:PORT */
  baseUrl: string;
  concurrency: number;
  /** Stop issuing new requests after this long (requests in flight finish and count)... */
  durationMs?: number;
  /** ...or after exactly this many requests. */
  requests?: number;
  /** Requests go round-robin over these merchants. */
  merchants: readonly Credentials[];
  skuId: string;
  /** Makes every out_trade_no of the run unique: `${tag}-${sequence}`. */
  tag: string;
}

export interface LoadResult {
  requests: number;
  /** 202 replies. */
  accepted: number;
  /** From the first request to the last reply, in ms. */
  elapsedMs: number;
  /** Latency of every request, ascending, in ms. */
  latenciesMs: Float64Array;
  /** Every reply that was not 2xx, by status ("ERR:<code>" for a failed connection or a timeout). */
  failures: Map<string, number>;
  /** 2xx replies other than 202 (a 200 DUPLICATE would mean a reused out_trade_no). */
  otherSuccess: Map<string, number>;
  /** The first body seen for each failure status, for the report. */
  samples: Map<string, string>;
}

type Outcome = { status: number; body?: string } | { error: string };

/**
 * A closed-loop load generator: `concurrency` workers, each sending one signed
 * submit over a keep-alive connection and the next as soon as its reply is in.
 * Signing happens before the clock starts for that request.
 */
export async function runLoad(options: LoadOptions): Promise<LoadResult> {
  if (options.merchants.length === 0) throw new Error('no merchants to send as');
  const url = new URL(options.baseUrl);
  const agent = new http.Agent({ keepAlive: true, maxSockets: options.concurrency, maxFreeSockets: options.concurrency });
  const latencies: number[] = [];
  const failures = new Map<string, number>();
  const otherSuccess = new Map<string, number>();
  const samples = new Map<string, string>();
  let issued = 0;
  let accepted = 0;

  const started = process.hrtime.bigint();
  const deadline = options.durationMs === undefined ? undefined : started + BigInt(Math.round(options.durationMs * 1e6));
  const more = () =>
    options.requests !== undefined ? issued < options.requests : deadline !== undefined && process.hrtime.bigint() < deadline;

  async function worker(): Promise<void> {
    while (more()) {
      const sequence = issued++;
      const merchant = options.merchants[sequence % options.merchants.length];
      const body = JSON.stringify({ out_trade_no: `${options.tag}-${sequence}`, sku_id: options.skuId, account_id: ACCOUNT_ID, account_fields: {} });
      const timestamp = String(Math.floor(Date.now() / 1000));
      const nonce = newNonce();
      const signature = sign(merchant.appSecret, timestamp, nonce, SUBMIT_PATH, body);
      const headers = {
        'content-type': 'application/json',
        'content-length': String(Buffer.byteLength(body)),
        'x-api-key': merchant.apiKey,
        'x-timestamp': timestamp,
        'x-nonce': nonce,
        'x-signature': signature,
      };
      const sent = process.hrtime.bigint();
      const outcome = await send(agent, url, headers, body);
      latencies.push(Number(process.hrtime.bigint() - sent) / 1e6);
      if ('error' in outcome) {
        count(failures, `ERR:${outcome.error}`);
      } else if (outcome.status === 202) {
        accepted++;
      } else if (outcome.status >= 200 && outcome.status < 300) {
        count(otherSuccess, String(outcome.status));
      } else {
        const key = String(outcome.status);
        count(failures, key);
        if (!samples.has(key) && outcome.body !== undefined) samples.set(key, outcome.body.slice(0, 300));
      }
    }
  }

  try {
    await Promise.all(Array.from({ length: options.concurrency }, () => worker()));
  } finally {
    agent.destroy();
  }
  const elapsedMs = Number(process.hrtime.bigint() - started) / 1e6;
  const latenciesMs = Float64Array.from(latencies).sort();
  return { requests: latencies.length, accepted, elapsedMs, latenciesMs, failures, otherSuccess, samples };
}

function send(agent: http.Agent, url: URL, headers: Record<string, string>, body: string): Promise<Outcome> {
  return new Promise((resolve) => {
    const request = http.request(
      { agent, host: url.hostname, port: url.port, method: 'POST', path: SUBMIT_PATH, headers },
      (response) => {
        const status = response.statusCode ?? 0;
        if (status === 202) {
          // Read and drop: the socket goes back to the pool once the body is consumed.
          response.resume();
          response.on('end', () => resolve({ status }));
        } else {
          const chunks: Buffer[] = [];
          response.on('data', (chunk: Buffer) => chunks.push(chunk));
          response.on('end', () => resolve({ status, body: Buffer.concat(chunks).toString('utf8') }));
        }
        response.on('error', (error: NodeJS.ErrnoException) => resolve({ error: error.code ?? error.message }));
      },
    );
    request.setTimeout(REQUEST_TIMEOUT_MS, () => request.destroy(Object.assign(new Error('timeout'), { code: 'TIMEOUT' })));
    request.on('error', (error: NodeJS.ErrnoException) => resolve({ error: error.code ?? error.message }));
    request.end(body);
  });
}

function count(map: Map<string, number>, key: string): void {
  map.set(key, (map.get(key) ?? 0) + 1);
}

/** Nearest-rank percentile of an ascending array, in its unit; NaN when empty. */
export function percentile(sorted: Float64Array, p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.max(1, Math.ceil((p / 100) * sorted.length));
  return sorted[Math.min(rank, sorted.length) - 1];
}
