import { newNonce, sign } from '../../src/merchant-client/signing';
import { KeepAliveClient } from './keep-alive-client';
import { sleep } from './processes';

/** What every submit goes to: the service and the baseline answer the same path. */
export const SUBMIT_PATH = '/api/v2/topup/submit';
/** An account whose number ends in none of the simulator's special suffixes (000, 001, 999, 503): delivered. */
export const ACCOUNT_ID = '12345678';

/** The body of every submit the benchmark sends. */
export function submitBody(outTradeNo: string, skuId: string): string {
  return JSON.stringify({ out_trade_no: outTradeNo, sku_id: skuId, account_id: ACCOUNT_ID, account_fields: {} });
}
/** A request that has not finished after this long counts as an error, so a run always ends. */
const REQUEST_TIMEOUT_MS = 30_000;

export interface Credentials {
  apiKey: string;
  appSecret: string;
}

export interface LoadOptions {
  /** http://127.0.0.1:PORT */
  baseUrl: string;
  /** Closed loop: requests in flight. Open loop: the most connections (requests beyond them wait for one, and the wait counts). */
  concurrency: number;
  /** Open loop: a request every 1/rate seconds, whether or not the earlier ones were answered. Without it, closed loop. */
  ratePerSecond?: number;
  /** Unmeasured load before the measured window. */
  warmupMs?: number;
  /** The measured window: requests sent during this long count (their replies may come after)... */
  durationMs?: number;
  /** ...or the next this many requests. */
  requests?: number;
  /** Unmeasured load after the window, so that what is read at its end is read under the same load as at its start. */
  cooldownMs?: number;
  /** Called as the window opens and as it closes, e.g. to take snapshots; awaited before the run returns. */
  onWindow?: (edge: 'start' | 'end') => unknown;
  /** Requests go round-robin over these merchants. */
  merchants: readonly Credentials[];
  skuId: string;
  /** Makes every out_trade_no of the run unique: `${tag}-${sequence}`. */
  tag: string;
  /** Called on every 202, as it comes, for a caller that follows the run. */
  onAccepted?: () => void;
}

export interface LoadResult {
  /** Requests sent in the measured window. */
  requests: number;
  /** 202 replies to them. */
  accepted: number;
  /** 202 replies to the requests before and after the window. */
  acceptedOutside: number;
  /** Length of the measured window, in ms. */
  elapsedMs: number;
  /** Latency of every request of the window, ascending, in ms. */
  latenciesMs: Float64Array;
  /** Every reply that was not 2xx, by status ("ERR:<code>" for a failed connection or a timeout). */
  failures: Map<string, number>;
  /** 2xx replies other than 202 (a 200 DUPLICATE would mean a reused out_trade_no). */
  otherSuccess: Map<string, number>;
  /** The first body seen for each failure status, for the report. */
  samples: Map<string, string>;
  /**
   * The longest time a measured request waited with no reply of any kind
   * coming meanwhile: a stall of everything in the reply's path (the
   * server, its database, the disk, the machine) rather than a slow request.
   */
  longestSilenceMs: number;
}

type Phase = 'warmup' | 'window' | 'cooldown' | 'done';

/**
 * Closed loop (the default): `concurrency` workers, each sending one signed
 * submit over a keep-alive connection and the next as soon as its reply is in;
 * signing happens before the clock starts for that request. Open loop
 * (`ratePerSecond`): request i is due at i/rate seconds, and its latency runs
 * from that moment, so a server that falls behind is charged for the queue
 * it causes rather than slowing the arrivals down. Either way the load runs
 * without a break from the warm-up through the window into the cool-down.
 */
export async function runLoad(options: LoadOptions): Promise<LoadResult> {
  if (options.merchants.length === 0) throw new Error('no merchants to send as');
  if (options.durationMs === undefined && options.requests === undefined) throw new Error('neither a duration nor a number of requests');
  const url = new URL(options.baseUrl);
  const client = new KeepAliveClient({ host: url.hostname, port: Number(url.port), maxConnections: options.concurrency, timeoutMs: REQUEST_TIMEOUT_MS });
  const latencies: number[] = [];
  const failures = new Map<string, number>();
  const otherSuccess = new Map<string, number>();
  const samples = new Map<string, string>();
  const edges: unknown[] = [];
  let issued = 0;
  let measuredIssued = 0;
  let accepted = 0;
  let acceptedOutside = 0;
  let lastReplyAt = 0n;
  let longestSilenceMs = 0;

  const ms = (ns: bigint) => Number(ns) / 1e6;
  const started = process.hrtime.bigint();
  const after = (from: bigint, msLater = 0) => from + BigInt(Math.round(msLater * 1e6));
  let phase: Phase = 'warmup';
  let phaseEnds = after(started, options.warmupMs);
  let windowStart = started;
  let windowEnd = started;
  /**
   * The phase a request belongs to, moving on as time passes: by when it is
   * sent, or in the open loop by when it was due, so that a request sent late
   * (the machine busy) still counts in the window it was due in.
   */
  const phaseAt = (now: bigint): Phase => {
    if (phase === 'warmup' && now >= phaseEnds) {
      phase = 'window';
      windowStart = now;
      phaseEnds = options.durationMs === undefined ? now : after(now, options.durationMs);
      edges.push(options.onWindow?.('start'));
    }
    if (phase === 'window' && (options.durationMs !== undefined ? now >= phaseEnds : measuredIssued >= options.requests!)) {
      phase = 'cooldown';
      windowEnd = now;
      phaseEnds = after(now, options.cooldownMs);
      edges.push(options.onWindow?.('end'));
    }
    if (phase === 'cooldown' && now >= phaseEnds) phase = 'done';
    return phase;
  };

  /** Sends request number `sequence`; its latency counts from `since` (default: once it is signed). */
  async function submit(sequence: number, measured: boolean, since?: bigint): Promise<void> {
    const merchant = options.merchants[sequence % options.merchants.length];
    const body = submitBody(`${options.tag}-${sequence}`, options.skuId);
    const timestamp = String(Math.floor(Date.now() / 1000));
    const nonce = newNonce();
    const signature = sign(merchant.appSecret, timestamp, nonce, SUBMIT_PATH, body);
    const headers = {
      'content-type': 'application/json',
      'x-api-key': merchant.apiKey,
      'x-timestamp': timestamp,
      'x-nonce': nonce,
      'x-signature': signature,
    };
    const sent = since ?? process.hrtime.bigint();
    // Only a refusal's body is kept, for the report's sample of each status.
    const outcome = await client.post(SUBMIT_PATH, headers, body, (status) => status !== 202);
    const repliedAt = process.hrtime.bigint();
    const silentSince = lastReplyAt > sent ? lastReplyAt : sent;
    lastReplyAt = repliedAt;
    const isAccepted = !('error' in outcome) && outcome.status === 202;
    if (isAccepted) options.onAccepted?.();
    if (!measured) {
      if (isAccepted) acceptedOutside++;
      return;
    }
    latencies.push(ms(repliedAt - sent));
    longestSilenceMs = Math.max(longestSilenceMs, ms(repliedAt - silentSince));
    if ('error' in outcome) {
      count(failures, `ERR:${outcome.error}`);
    } else if (isAccepted) {
      accepted++;
    } else if (outcome.status >= 200 && outcome.status < 300) {
      count(otherSuccess, String(outcome.status));
    } else {
      const key = String(outcome.status);
      count(failures, key);
      if (!samples.has(key) && outcome.body !== undefined) samples.set(key, outcome.body.slice(0, 300));
    }
  }

  /** The next request's number and whether it is measured, or undefined once the run is over. */
  const next = (at = process.hrtime.bigint()): { sequence: number; measured: boolean } | undefined => {
    const now = phaseAt(at);
    if (now === 'done') return undefined;
    if (now === 'window') measuredIssued++;
    return { sequence: issued++, measured: now === 'window' };
  };

  async function worker(): Promise<void> {
    for (let request = next(); request; request = next()) await submit(request.sequence, request.measured);
  }

  async function arrivals(rate: number): Promise<void> {
    const inFlight = new Set<Promise<void>>();
    const dueAt = (sequence: number) => after(started, (sequence * 1000) / rate);
    for (;;) {
      const now = process.hrtime.bigint();
      while (dueAt(issued) <= now) {
        const request = next(dueAt(issued));
        if (!request) {
          await Promise.all(inFlight);
          return;
        }
        const sending: Promise<void> = submit(request.sequence, request.measured, dueAt(request.sequence)).finally(() => inFlight.delete(sending));
        inFlight.add(sending);
      }
      // A timer, never a spin on setImmediate: the load generator shares the
      // machine with the server it measures, and spinning until the next
      // request is due took it 0.3 to 1 core. Timers fire a millisecond apart
      // at best, so a request may go out up to about 1 ms after it was due;
      // its latency still counts from when it was due.
      await sleep(Math.max(1, ms(dueAt(issued) - process.hrtime.bigint())));
    }
  }

  try {
    if (options.ratePerSecond !== undefined) await arrivals(options.ratePerSecond);
    else await Promise.all(Array.from({ length: options.concurrency }, () => worker()));
    await Promise.all(edges);
  } finally {
    client.close();
  }
  const latenciesMs = Float64Array.from(latencies).sort();
  return {
    requests: latencies.length,
    accepted,
    acceptedOutside,
    elapsedMs: ms(windowEnd - windowStart),
    latenciesMs,
    failures,
    otherSuccess,
    samples,
    longestSilenceMs,
  };
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
