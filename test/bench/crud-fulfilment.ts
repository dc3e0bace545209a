/**
 * The whole-life half of the benchmark's conventional peer (crud-server.ts
 * with CRUD_UPSTREAM_URL set): what completing an order costs done the usual
 * way, on node:http and pg, without events or projections.
 *
 * A submit's transaction also inserts a `topup` job. A dispatcher claims due
 * jobs in batches (`for update skip locked`, a lease of 30 s, as many as it
 * has free slots) and runs each:
 *   - topup: POST {upstream}/v1/topups with the order number as the
 *     idempotency key over kept-alive connections; delivered or failed settles
 *     the order in one transaction (its status, the merchant's balance and
 *     frozen funds) that also turns the job into a `callback` job; 503 or no
 *     connection frees the job for a retry; anything else leaves the money
 *     frozen (status unknown) and ends the job.
 *   - callback: the signed POST to the merchant's callback_url (contract §2),
 *     its attempt recorded; acknowledged ends the job, otherwise it is retried
 *     after the contract's delays.
 * With nothing due the dispatcher polls every POLL_MS; a submit wakes it at once.
 */
import http from 'node:http';
import { Pool } from 'pg';
import { newNonce, sign } from '../../src/merchant-client/signing';
import { isAcknowledged } from '../../src/callbacks/delivery/acknowledgement';
import { isoTimestamp } from '../../src/shared/clock';
import { formatAmount } from '../../src/shared/money';

const POLL_MS = 50;
const CLAIM_BATCH = 100;
const UPSTREAM_TIMEOUT_MS = 10_000;
const CALLBACK_TIMEOUT_MS = 10_000;
/** Contract §2: the retries' delays after a failed attempt. */
const CALLBACK_RETRY_S = [30, 120, 600, 1800, 7200];

interface Job {
  id: string;
  kind: 'topup' | 'callback';
  attempts: number;
  order_no: string;
  merchant_id: string;
  out_trade_no: string;
  sku_id: string;
  account_id: string;
  account_fields: Record<string, string>;
  amount: string;
  status: string;
  fail_code: string | null;
  completed_at: Date | null;
  api_key: string;
  app_secret: string;
  currency: string;
  callback_url: string | null;
}

type UpstreamAnswer = { outcome: 'delivered' } | { outcome: 'failed'; code: string } | { outcome: 'retry' } | { outcome: 'unknown' };

const agent = new http.Agent({ keepAlive: true, maxSockets: 256 });

function post(url: URL, headers: http.OutgoingHttpHeaders, body: string, timeoutMs: number): Promise<{ status: number; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const request = http.request(
      url,
      { method: 'POST', agent, headers: { ...headers, 'content-length': Buffer.byteLength(body) }, timeout: timeoutMs },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () => resolve({ status: response.statusCode ?? 0, body: Buffer.concat(chunks) }));
        response.on('error', reject);
      },
    );
    request.on('timeout', () => request.destroy(new Error('timeout')));
    request.on('error', reject);
    request.end(body);
  });
}

export class CrudFulfilment {
  private running = 0;
  private wake: (() => void) | undefined;
  private stopped = false;

  constructor(
    private readonly pool: Pool,
    private readonly upstreamUrl: string,
    private readonly concurrency: number,
  ) {}

  start(): void {
    void this.dispatch();
  }

  stop(): void {
    this.stopped = true;
    this.wake?.();
  }

  /** A new job is there: claim it now rather than at the next poll. */
  notify(): void {
    this.wake?.();
  }

  private async dispatch(): Promise<void> {
    while (!this.stopped) {
      const free = this.concurrency - this.running;
      const jobs = free > 0 ? await this.claim(Math.min(free, CLAIM_BATCH)).catch(() => []) : [];
      for (const job of jobs) {
        this.running++;
        void this.run(job).finally(() => {
          this.running--;
          this.wake?.();
        });
      }
      if (jobs.length === 0 || this.running >= this.concurrency) {
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, POLL_MS);
          this.wake = () => {
            clearTimeout(timer);
            resolve();
          };
        });
        this.wake = undefined;
      }
    }
  }

  private async claim(limit: number): Promise<Job[]> {
    const { rows } = await this.pool.query<Job>(
      `with due as (
         select id from jobs where run_after <= now() order by run_after limit $1 for update skip locked
       ), claimed as (
         update jobs j set run_after = now() + interval '30 seconds', attempts = j.attempts + 1
         from due where j.id = due.id returning j.id, j.kind, j.attempts, j.order_no
       )
       select c.id, c.kind, c.attempts, o.order_no, o.merchant_id, o.out_trade_no, o.sku_id, o.account_id, o.account_fields,
              o.amount, o.status, o.fail_code, o.completed_at, m.api_key, m.app_secret, m.currency, m.callback_url
       from claimed c join orders o on o.order_no = c.order_no join merchants m on m.id = o.merchant_id`,
      [limit],
    );
    return rows;
  }

  private async run(job: Job): Promise<void> {
    try {
      if (job.kind === 'topup') await this.topUp(job);
      else await this.callBack(job);
    } catch (error) {
      // The lease runs out and another claim retries it.
      console.error(`job ${job.id} (${job.kind}) failed: ${error instanceof Error ? error.message : String(error)}`);
    }
  }

  private async topUp(job: Job): Promise<void> {
    const answer = await this.askUpstream(job);
    if (answer.outcome === 'retry') {
      await this.pool.query(`update jobs set run_after = now() + interval '1 second' where id = $1`, [job.id]);
      return;
    }
    if (answer.outcome === 'unknown') {
      await this.pool.query(`with o as (update orders set status = 'unknown' where order_no = $2) delete from jobs where id = $1`, [job.id, job.order_no]);
      return;
    }
    const delivered = answer.outcome === 'delivered';
    const client = await this.pool.connect();
    let order: Pick<Job, 'status' | 'fail_code' | 'completed_at'>;
    try {
      await client.query('begin');
      const settled = await client.query<Pick<Job, 'status' | 'fail_code' | 'completed_at'>>(
        `update orders set status = $2, fail_code = $3, completed_at = now() where order_no = $1 and status = 'processing'
         returning status, fail_code, completed_at`,
        [job.order_no, delivered ? 'success' : 'failed', delivered ? null : answer.code],
      );
      if (settled.rowCount === 1) {
        await client.query(`update merchants set balance = balance - $2, frozen = frozen - $3 where id = $1`, [
          job.merchant_id,
          delivered ? job.amount : '0',
          job.amount,
        ]);
      }
      // The first attempt goes out at once, from here: its lease keeps the dispatcher off it meanwhile.
      await client.query(`update jobs set kind = 'callback', attempts = 1, run_after = now() + interval '30 seconds' where id = $1`, [job.id]);
      await client.query('commit');
      client.release();
      order = settled.rows[0] ?? job;
    } catch (error) {
      await client.query('rollback').catch(() => undefined);
      client.release(error as Error);
      throw error;
    }
    await this.callBack({ ...job, ...order, kind: 'callback', attempts: 1 });
  }

  private async askUpstream(job: Job): Promise<UpstreamAnswer> {
    const body = JSON.stringify({
      order_no: `C${job.order_no}`,
      sku_id: job.sku_id,
      route: 'default',
      account_id: job.account_id,
      account_fields: job.account_fields,
      amount: formatAmount(BigInt(job.amount)),
      currency: job.currency,
    });
    let reply: { status: number; body: Buffer };
    try {
      reply = await post(
        new URL('/v1/topups', this.upstreamUrl),
        { 'content-type': 'application/json', 'idempotency-key': `C${job.order_no}` },
        body,
        UPSTREAM_TIMEOUT_MS,
      );
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      return code === 'ECONNREFUSED' ? { outcome: 'retry' } : { outcome: 'unknown' };
    }
    if (reply.status === 503) return { outcome: 'retry' };
    if (reply.status !== 200) return { outcome: 'unknown' };
    const parsed = JSON.parse(reply.body.toString('utf8')) as { status?: string; code?: string };
    if (parsed.status === 'delivered') return { outcome: 'delivered' };
    if (parsed.status === 'failed' && typeof parsed.code === 'string') return { outcome: 'failed', code: parsed.code };
    return { outcome: 'unknown' };
  }

  private async callBack(job: Job): Promise<void> {
    if (!job.callback_url) {
      await this.pool.query('delete from jobs where id = $1', [job.id]);
      return;
    }
    const url = new URL(job.callback_url);
    const body = JSON.stringify({
      order_no: `C${job.order_no}`,
      out_trade_no: job.out_trade_no,
      status: job.status,
      amount: formatAmount(BigInt(job.amount)),
      account_id: job.account_id,
      fail_code: job.fail_code,
      fail_reason: job.fail_code,
      completed_at: job.completed_at && isoTimestamp(job.completed_at),
    });
    const timestamp = String(Math.floor(Date.now() / 1000));
    const nonce = newNonce();
    let acknowledged = false;
    let status = 0;
    try {
      const reply = await post(
        url,
        {
          'content-type': 'application/json',
          'x-api-key': job.api_key,
          'x-timestamp': timestamp,
          'x-nonce': nonce,
          'x-signature': sign(job.app_secret, timestamp, nonce, url.pathname, body),
        },
        body,
        CALLBACK_TIMEOUT_MS,
      );
      status = reply.status;
      acknowledged = isAcknowledged(reply.status, reply.body);
    } catch {
      // No reply, a refused connection or a timeout: not acknowledged.
    }
    const retryS = CALLBACK_RETRY_S[job.attempts - 1];
    await this.pool.query(
      `with attempt as (insert into callback_attempts (order_no, attempt, http_status, acknowledged) values ($2, $3, $4, $5))
       ${acknowledged || retryS === undefined ? 'delete from jobs where id = $1' : `update jobs set run_after = now() + make_interval(secs => $6) where id = $1`}`,
      acknowledged || retryS === undefined
        ? [job.id, job.order_no, job.attempts, status, acknowledged]
        : [job.id, job.order_no, job.attempts, status, acknowledged, retryS],
    );
  }
}
