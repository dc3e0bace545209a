import { Pool } from 'pg';

/**
 * Every read and write of the fulfilment queue (fulfilment_jobs) outside the
 * projection that fills it: the workers' claims and retries, and the backlog
 * the status page and the metrics report.
 */

export interface ClaimedJob {
  order_no: string;
  attempts: number;
}

/**
 * Leases up to `limit` due jobs to this instance, oldest due first. SKIP
 * LOCKED plus the re-check of the lease on the locked row's newest version:
 * two instances never hold one job at once.
 *
 * Planned at each call, not prepared (see the attempts' statements in
 * callback-schedule.queries.ts): a generic plan made while a new database's
 * jobs table held a few rows joined the claimed jobs to a scan of the whole
 * table, and kept scanning it at every claim as it grew.
 */
export async function claimJobs(pool: Pool, limit: number, leaseMs: number, instanceId: string): Promise<ClaimedJob[]> {
  const { rows } = await pool.query<ClaimedJob>(
    `update fulfilment_jobs set lease_until = now() + make_interval(secs => $2::float8 / 1000), leased_by = $3
     where order_no in (
       select order_no from fulfilment_jobs
       where next_attempt_at <= now() and (lease_until is null or lease_until < now())
       order by next_attempt_at limit $1
       for update skip locked)
     returning order_no, attempts`,
    [limit, leaseMs, instanceId],
  );
  return rows;
}

/** A claimed job's send never reached the upstream: due again after `delayMs`, its lease let go. Only the leaseholder can. */
export async function retryJobLater(pool: Pool, orderNo: string, delayMs: number, error: string, instanceId: string): Promise<void> {
  await pool.query(
    `update fulfilment_jobs set attempts = attempts + 1, last_error = $3, lease_until = null,
         next_attempt_at = now() + make_interval(secs => $2::float8 / 1000)
       where order_no = $1 and leased_by = $4`,
    [orderNo, delayMs, error, instanceId],
  );
}

/**
 * The jobs due and not claimed by any worker: orders waiting for a worker
 * slot, which is what grows when intake outruns completion (a job waiting to
 * retry is not due, one in flight is leased). Counted up to `cap` + 1 only,
 * along the due-time index, so a long queue costs no more to read than a
 * short one; `oldestWaitS` is how long the first of them has been due.
 */
export async function waitingJobs(pool: Pool, cap: number): Promise<{ waiting: number; oldestWaitS: number }> {
  const { rows } = await pool.query<{ waiting: number; oldest_wait_s: number | null }>(
    `select count(*)::int as waiting, extract(epoch from now() - min(next_attempt_at))::float8 as oldest_wait_s
     from (select next_attempt_at from fulfilment_jobs
           where next_attempt_at <= now() and (lease_until is null or lease_until < now())
           order by next_attempt_at limit $1) due`,
    [cap + 1],
  );
  return { waiting: rows[0].waiting, oldestWaitS: Math.max(0, rows[0].oldest_wait_s ?? 0) };
}

/** Jobs in the queue, those retrying, and the earliest due time among them. */
export async function fulfilmentBacklog(pool: Pool): Promise<{ pending: number; retrying: number; oldest: Date | null }> {
  const { rows } = await pool.query<{ pending: number; retrying: number; oldest: Date | null }>(
    `select count(*)::int as pending, count(*) filter (where attempts > 0)::int as retrying, min(next_attempt_at) as oldest
         from fulfilment_jobs`,
  );
  return rows[0];
}

/**
 * The jobs in the queue and the age in seconds of the oldest (jobs, jobs_age),
 * as scalar subqueries: a metrics scrape selects them in one statement with
 * the other work queues'.
 */
export const FULFILMENT_BACKLOG_COLUMNS = `(select count(*) from fulfilment_jobs) as jobs,
              (select extract(epoch from now() - min(accepted_at))::float8 from fulfilment_jobs) as jobs_age`;

export interface FulfilmentBacklogColumns {
  jobs: string;
  jobs_age: number | null;
}
