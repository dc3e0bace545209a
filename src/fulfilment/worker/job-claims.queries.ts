import { Pool } from 'pg';

export interface ClaimedJob {
  order_no: string;
  attempts: number;
}

/**
 * Leases up to `limit` due jobs to this instance, oldest due first. SKIP
 * LOCKED plus the re-check of the lease on the locked row's newest version:
 * two instances never hold one job at once.
 *
 * Planned at each call, not prepared (see attempt-statements.ts): a generic
 * plan made while a new database's jobs table held a few rows joined the
 * claimed jobs to a scan of the whole table, and kept scanning it at every
 * claim as it grew.
 */
export async function claimJobs(pool: Pool, limit: number, leaseMs: number, instanceId: string): Promise<ClaimedJob[]> {
  const { rows } = await pool.query<ClaimedJob>(
    `update fulfilment_jobs set lease_until = now() + make_interval(secs => $2::float8 / 1000), leased_by = $3
     where order_no in (
       select order_no from fulfilment_jobs
       where not done and next_attempt_at <= now() and (lease_until is null or lease_until < now())
       order by next_attempt_at limit $1
       for update skip locked)
     returning order_no, attempts`,
    [limit, leaseMs, instanceId],
  );
  return rows;
}
