import { Inject, Injectable } from '@nestjs/common';
import { Pool } from 'pg';
import { PG_POOL } from '../../../infrastructure/infrastructure.tokens';
import { inOneSnapshot, inTransaction } from '../../../infrastructure/postgres/transactions';
import type { UnknownResultOrder } from '../../../../projections/orders.queries';
import { staffNameSql } from '../../display-names/display-names';
import { recordAudit } from '../../staff-audit-trail/audit-trail';
import { ApplyResult, AppliedColumns, AppliedDetail, APPLY_RESULTS } from '../bulk-apply/bulk-apply.view';
import { REQUERY_ANSWERS, REQUERY_PROPOSALS, RequeryAnswer, RequeryProposal } from './requery-proposal';

/** The filter as stored: only what was given. */
export interface StoredRequeryFilter {
  merchant_id?: string;
  created_from?: string;
  created_to?: string;
  order_nos?: string[];
}

export interface NewRequeryJob {
  jobId: string;
  requestedBy: string;
  filter: StoredRequeryFilter;
  notInQueue: string[];
  orders: readonly UnknownResultOrder[];
}

export interface RequeryJobRow {
  job_id: string;
  requested_by: string;
  requested_by_name: string | null;
  filter: StoredRequeryFilter;
  not_in_queue: string[];
  total: number;
  done: number;
  created_at: Date;
  finished_at: Date | null;
  /** created_at as Postgres prints it, full precision: the list's cursor. */
  sort_at: string;
}

export interface RequeryItemRow extends AppliedColumns {
  item: number;
  order_no: string;
  merchant_id: string;
  amount: string;
  currency: string;
  upstream: RequeryAnswer | null;
  answer: Record<string, unknown> | null;
  proposal: RequeryProposal | null;
  answered_at: Date | null;
}

/** An order leased to this instance to ask the upstream about. */
export interface ClaimedRequery {
  job_id: string;
  order_no: string;
  /** Claims so far, this one included: more than one means an earlier lease ran out. */
  attempts: number;
}

export interface RequeryCounts {
  upstream: Record<RequeryAnswer, number>;
  proposals: Record<RequeryProposal, number>;
  applied: Record<ApplyResult, number>;
}

// Any constant of its own: serialises the claims of every instance, so that together they stay within REQUERY_CONCURRENCY.
const CLAIM_LOCK = 727_050;

const JOB_COLUMNS = `job_id, requested_by, ${staffNameSql('requery_jobs.requested_by')} as requested_by_name, filter, not_in_queue, total,
  total - (select count(*) from requery_items w where w.job_id = requery_jobs.job_id and w.state = 'waiting')::int as done,
  created_at, finished_at, created_at::text as sort_at`;

const countsOf = <K extends string>(keys: readonly K[], column: string) =>
  keys.map((k) => `count(*) filter (where ${column} = '${k}')::int as "${column}:${k}"`).join(', ');

/**
 * Bulk re-query jobs and their orders, in Postgres rather than in an
 * instance's memory: every instance reports a job, and any instance carries
 * on the orders of a job whose instance stopped. Every read and write of
 * requery_jobs and requery_items is here.
 */
@Injectable()
export class RequeryJobs {
  constructor(@Inject(PG_POOL) private readonly pool: Pool) {}

  /** The job, its orders in the queue's order and its audit row, in one transaction. */
  async create(job: NewRequeryJob): Promise<void> {
    await inTransaction(this.pool, async (client) => {
      const { rows } = await client.query<{ created_at: Date }>(
        `insert into requery_jobs (job_id, requested_by, filter, not_in_queue, total, finished_at)
         values ($1, $2, $3, $4, $5, case when $5 = 0 then now() end) returning created_at`,
        [job.jobId, job.requestedBy, JSON.stringify(job.filter), JSON.stringify(job.notInQueue), job.orders.length],
      );
      await client.query(
        `insert into requery_items (job_id, order_no, item, merchant_id, amount, currency, queued_at)
         select $1, o.order_no, o.item, o.merchant_id, o.amount, o.currency, $2
         from unnest($3::text[], $4::text[], $5::bigint[], $6::text[]) with ordinality as o(order_no, merchant_id, amount, currency, item)`,
        [
          job.jobId,
          rows[0].created_at,
          job.orders.map((o) => o.order_no),
          job.orders.map((o) => o.merchant_id),
          job.orders.map((o) => o.amount),
          job.orders.map((o) => o.currency),
        ],
      );
      await recordAudit(client, {
        staffId: job.requestedBy,
        action: 'reconciliation.requery_started',
        target: `requery:${job.jobId}`,
        details: { filter: { ...job.filter, order_nos: job.filter.order_nos?.length }, total: job.orders.length, not_in_queue: job.notInQueue.length },
      });
    });
  }

  /**
   * Leases up to `limit` waiting orders to this instance, oldest job first,
   * but no more than leave `maxInFlight` leased at once across every
   * instance. The claims take turns under an advisory lock, so the count they
   * compare against is never stale; a lease that ran out (its instance
   * stopped) is taken over.
   */
  async claim(limit: number, maxInFlight: number, leaseMs: number, instanceId: string): Promise<ClaimedRequery[]> {
    // Most calls find nothing: answered without a transaction or the lock.
    const due = await this.pool.query(`select 1 from requery_items where state = 'waiting' and (lease_until is null or lease_until <= now()) limit 1`);
    if (due.rows.length === 0) return [];
    return inTransaction(this.pool, async (client) => {
      await client.query('select pg_advisory_xact_lock($1)', [CLAIM_LOCK]);
      const { rows: inFlight } = await client.query<{ n: number }>(
        `select count(*)::int as n from requery_items where state = 'waiting' and lease_until > now()`,
      );
      const take = Math.min(limit, maxInFlight - inFlight[0].n);
      if (take <= 0) return [];
      const { rows } = await client.query<ClaimedRequery>(
        `update requery_items i set lease_until = now() + make_interval(secs => $2::float8 / 1000), leased_by = $3, attempts = i.attempts + 1
         from (select job_id, order_no from requery_items
               where state = 'waiting' and (lease_until is null or lease_until <= now())
               order by queued_at, job_id, item limit $1
               for update skip locked) as due
         where i.job_id = due.job_id and i.order_no = due.order_no
         returning i.job_id, i.order_no, i.attempts`,
        [take, leaseMs, instanceId],
      );
      return rows;
    });
  }

  /**
   * The answer to a leased order, recorded only by its leaseholder; the job
   * is finished in the same transaction when nothing waits any more. The
   * job's row is locked first, so the answers to one job are recorded one
   * at a time and the last of them always sees the others.
   */
  async recordAnswer(
    claimed: ClaimedRequery,
    instanceId: string,
    answer: { upstream: RequeryAnswer; said: Record<string, unknown>; proposal: RequeryProposal },
  ): Promise<boolean> {
    return inTransaction(this.pool, async (client) => {
      await client.query('select 1 from requery_jobs where job_id = $1 for update', [claimed.job_id]);
      const { rowCount } = await client.query(
        `update requery_items set state = 'answered', upstream = $4, answer = $5, proposal = $6, answered_at = now(), lease_until = null
         where job_id = $1 and order_no = $2 and state = 'waiting' and leased_by = $3`,
        [claimed.job_id, claimed.order_no, instanceId, answer.upstream, JSON.stringify(answer.said), answer.proposal],
      );
      await client.query(
        `update requery_jobs set finished_at = now()
         where job_id = $1 and finished_at is null and not exists (select 1 from requery_items where job_id = $1 and state = 'waiting')`,
        [claimed.job_id],
      );
      return rowCount === 1;
    });
  }

  /** The job, its counts and one page of its orders (all, or those with one proposal), as of one moment. */
  async find(
    jobId: string,
    page: { proposal?: RequeryProposal; limit: number; offset: number },
  ): Promise<{ job: RequeryJobRow; counts: RequeryCounts; items: RequeryItemRow[] } | undefined> {
    return inOneSnapshot(this.pool, async (client) => {
      const { rows } = await client.query<RequeryJobRow>(`select ${JOB_COLUMNS} from requery_jobs where job_id = $1`, [jobId]);
      if (rows.length === 0) return undefined;
      const { rows: counted } = await client.query<Record<string, number>>(
        `select ${countsOf(REQUERY_ANSWERS, 'upstream')}, ${countsOf(REQUERY_PROPOSALS, 'proposal')}, ${countsOf(APPLY_RESULTS, 'applied_result')}
         from requery_items where job_id = $1`,
        [jobId],
      );
      const { rows: items } = await client.query<RequeryItemRow>(
        `select item, order_no, merchant_id, amount::text, currency, upstream, answer, proposal, answered_at,
                applied_result, applied_detail, applied_by, applied_at
         from requery_items where job_id = $1 and ($2::text is null or proposal = $2) order by item limit $3 offset $4`,
        [jobId, page.proposal ?? null, page.limit, page.offset],
      );
      const pick = <K extends string>(keys: readonly K[], column: string) =>
        Object.fromEntries(keys.map((k) => [k, counted[0][`${column}:${k}`]])) as Record<K, number>;
      return {
        job: rows[0],
        counts: {
          upstream: pick(REQUERY_ANSWERS, 'upstream'),
          proposals: pick(REQUERY_PROPOSALS, 'proposal'),
          applied: pick(APPLY_RESULTS, 'applied_result'),
        },
        items,
      };
    });
  }

  /** Jobs newest first, after the cursor (the sort key of the last row shown). */
  async list(after: readonly string[] | undefined, limit: number): Promise<RequeryJobRow[]> {
    const { rows } = await this.pool.query<RequeryJobRow>(
      `select ${JOB_COLUMNS} from requery_jobs
       where $1::text is null or (created_at, job_id) < ($1::timestamptz, $2)
       order by created_at desc, job_id desc limit $3`,
      [after?.[0] ?? null, after?.[1] ?? null, limit],
    );
    return rows;
  }

  /** Whether the job exists. */
  async exists(jobId: string): Promise<boolean> {
    const { rows } = await this.pool.query('select 1 from requery_jobs where job_id = $1', [jobId]);
    return rows.length > 0;
  }

  /** The job's orders (or those of `orderNos` among them), answered or not, for a bulk apply. */
  async itemsForApply(jobId: string, orderNos?: readonly string[]): Promise<RequeryItemRow[]> {
    const { rows } = await this.pool.query<RequeryItemRow>(
      `select item, order_no, merchant_id, amount::text, currency, upstream, answer, proposal, answered_at,
              applied_result, applied_detail, applied_by, applied_at
       from requery_items where job_id = $1 and ($2::text[] is null or order_no = any($2)) order by item`,
      [jobId, orderNos ?? null],
    );
    return rows;
  }

  /** What a bulk apply did with each order; a later apply never overwrites an `applied` with anything but another. */
  async recordApplied(jobId: string, results: readonly { orderNo: string; result: ApplyResult; detail: AppliedDetail }[], appliedBy: string): Promise<void> {
    if (results.length === 0) return;
    await this.pool.query(
      `update requery_items i set applied_result = r.result, applied_detail = r.detail, applied_by = $3, applied_at = now()
       from jsonb_to_recordset($2::jsonb) as r(order_no text, result text, detail jsonb)
       where i.job_id = $1 and i.order_no = r.order_no and (i.applied_result is distinct from 'applied' or r.result = 'applied')`,
      [jobId, JSON.stringify(results.map((r) => ({ order_no: r.orderNo, result: r.result, detail: r.detail }))), appliedBy],
    );
  }
}
