import { randomBytes } from 'node:crypto';
import { formatAmount } from '../../src/shared/money';
import { call } from '../back-office/admin-client';
import { signedFetch, TestMerchant } from '../support/merchant-fixture';

/** One reply (or none: status 0, the connection failed or nothing came within REPLY_TIMEOUT_MS), timed from the request's start. */
export interface Sample {
  kind: 'submit' | 'deposit';
  /** The out_trade_no or the deposit reference. */
  what: string;
  start: number;
  end: number;
  status: number;
}

/** What the clients were told was done: the ledger must hold each of these. */
export interface Acknowledged {
  /** order_no -> merchant. */
  orders: Map<string, string>;
  /** Deposit reference -> merchant and amount in minor units. */
  deposits: Map<string, { merchantId: string; amount: bigint }>;
}

export interface LoadOptions {
  url: string;
  merchants: readonly TestMerchant[];
  /** Prefix of this run's out_trade_no and deposit references. */
  tag: string;
  submitClients: number;
  depositClients: number;
  depositAmount: bigint;
  acknowledged: Acknowledged;
  /** How long one order or deposit is retried after failures before the run gives up on it. */
  giveUpAfterMs?: number;
}

export interface Load {
  samples: Sample[];
  /** When stop() was called: the clients sent new requests until then. */
  stoppedAt?: number;
  /** Orders and deposits the clients gave up on: each failed for giveUpAfterMs. */
  abandoned: string[];
  /** Lets every client finish what it has in hand (retrying until it is acknowledged) and returns. */
  stop(): Promise<void>;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A reply later than this counts as none, and the request is sent again: three times the service's wait for the database. */
export const REPLY_TIMEOUT_MS = 30_000;

const NO_REPLY = { status: 0, body: undefined };

/** The reply, or NO_REPLY when the request fails or nothing comes within REPLY_TIMEOUT_MS (the request itself is left to finish or not). */
async function withinTimeout(send: () => Promise<{ status: number; body: any }>): Promise<{ status: number; body: any }> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<typeof NO_REPLY>((resolve) => (timer = setTimeout(() => resolve(NO_REPLY), REPLY_TIMEOUT_MS)));
  try {
    return await Promise.race([send().catch(() => NO_REPLY), late]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Merchants' signed submits and staff's deposits, each client one request
 * at a time. A request that fails (5xx, or no reply) is sent again as a
 * careful client would: a submit with the same out_trade_no (new nonce), a
 * deposit with the same reference, so whatever the service did the first
 * time, each order and deposit exists once when it is acknowledged.
 */
export function startLoad(options: LoadOptions): Load {
  const samples: Sample[] = [];
  const abandoned: string[] = [];
  const giveUpAfterMs = options.giveUpAfterMs ?? 60_000;
  let stopping = false;
  let sequence = 0;

  const timed = async (kind: Sample['kind'], what: string, send: () => Promise<{ status: number; body: any }>) => {
    const start = Date.now();
    const reply = await withinTimeout(send);
    samples.push({ kind, what, start, end: Date.now(), status: reply.status });
    return reply;
  };

  /** Sends until a 2xx, or gives up after giveUpAfterMs; 4xx are not retried (none is expected). */
  const untilAcknowledged = async (what: string, kind: Sample['kind'], send: () => Promise<{ status: number; body: any }>) => {
    const started = Date.now();
    for (;;) {
      const reply = await timed(kind, what, send);
      if (reply.status >= 200 && reply.status < 300) return reply.body;
      if ((reply.status >= 400 && reply.status < 500) || Date.now() - started > giveUpAfterMs) {
        abandoned.push(`${what}: ${reply.status} ${JSON.stringify(reply.body)}`);
        return undefined;
      }
      await sleep(100);
    }
  };

  const submitter = async (c: number) => {
    while (!stopping) {
      const n = sequence++;
      const merchant = options.merchants[(c + n) % options.merchants.length];
      const outTradeNo = `${options.tag}-${n}`;
      // Delivered by the simulator: an account_id ending 000, 001, 999 or 503 would ask it for another outcome.
      const body = JSON.stringify({ out_trade_no: outTradeNo, sku_id: 'voucher', account_id: `player-${n}-7`, account_fields: {} });
      const reply = await untilAcknowledged(outTradeNo, 'submit', () =>
        signedFetch(options, merchant, { path: '/api/v2/topup/submit', body, nonce: randomBytes(12).toString('hex') }),
      );
      if (reply) options.acknowledged.orders.set(reply.data.order_no, merchant.merchantId);
    }
  };

  const depositor = async (c: number) => {
    while (!stopping) {
      const n = sequence++;
      const merchant = options.merchants[(c + n) % options.merchants.length];
      const reference = `${options.tag}-deposit-${n}`;
      const amount = formatAmount(options.depositAmount);
      const reply = await untilAcknowledged(reference, 'deposit', () =>
        call(options.url, 'POST', `/admin/v1/merchants/${merchant.merchantId}/deposits`, { amount, reference }),
      );
      if (reply) options.acknowledged.deposits.set(reference, { merchantId: merchant.merchantId, amount: options.depositAmount });
      await sleep(20);
    }
  };

  const clients = Promise.all([
    ...Array.from({ length: options.submitClients }, (_, c) => submitter(c)),
    ...Array.from({ length: options.depositClients }, (_, c) => depositor(c)),
  ]);
  const load: Load = {
    samples,
    abandoned,
    async stop() {
      load.stoppedAt ??= Date.now();
      stopping = true;
      await clients;
    },
  };
  return load;
}

export interface RoundFigures {
  round: string;
  requests: number;
  ok: number;
  clientErrors: number;
  serverErrors: number;
  noReply: number;
  /** The longest time without a successful reply while the clients were sending new requests (from the first to `until`). */
  longestGapMs: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  /** 5xx (and no reply) answered sooner than the service's DATABASE_WAIT_MS. */
  fastFailures: number;
}

export function roundFigures(round: string, samples: readonly Sample[], until: number, waitBoundMs: number): RoundFigures {
  const latencies = samples.map((s) => s.end - s.start).sort((a, b) => a - b);
  const at = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? 0;
  const failed = samples.filter((s) => s.status >= 500 || s.status === 0);
  const successes = samples
    .filter((s) => s.status >= 200 && s.status < 300)
    .map((s) => s.end)
    .sort((a, b) => a - b);
  let longestGapMs = 0;
  let previous = Math.min(...samples.map((s) => s.start));
  for (const end of [...successes.filter((end) => end < until), until]) {
    longestGapMs = Math.max(longestGapMs, end - previous);
    previous = end;
  }
  return {
    round,
    requests: samples.length,
    ok: successes.length,
    clientErrors: samples.filter((s) => s.status >= 400 && s.status < 500).length,
    serverErrors: samples.filter((s) => s.status >= 500).length,
    noReply: samples.filter((s) => s.status === 0).length,
    longestGapMs,
    p50Ms: at(0.5),
    p99Ms: at(0.99),
    maxMs: latencies[latencies.length - 1] ?? 0,
    fastFailures: failed.filter((s) => s.end - s.start < waitBoundMs).length,
  };
}

/** The rounds as a small table for the CI log. */
export function figuresTable(rounds: readonly RoundFigures[]): string {
  const header = ['round', 'requests', '2xx', '4xx', '5xx', 'no reply', 'longest gap', 'p50', 'p99', 'max'];
  const rows = rounds.map((r) => [
    r.round,
    String(r.requests),
    String(r.ok),
    String(r.clientErrors),
    String(r.serverErrors),
    String(r.noReply),
    `${(r.longestGapMs / 1000).toFixed(1)} s`,
    `${r.p50Ms} ms`,
    `${r.p99Ms} ms`,
    `${r.maxMs} ms`,
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i].length)));
  const line = (cells: string[]) => cells.map((cell, i) => (i === 0 ? cell.padEnd(widths[i]) : cell.padStart(widths[i]))).join('  ');
  return [line(header), ...rows.map(line)].join('\n');
}
