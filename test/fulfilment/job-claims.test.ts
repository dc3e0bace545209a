import { Pool } from 'pg';
import { allMigrations } from '../../src/schema';
import { claimJobs } from '../../projections/fulfilment-jobs.queries';
import { PlanTestDatabase, planTestDatabase, scansBetween } from '../support/table-scans';
import { TestDatabase } from '../support/test-database';

/**
 * The claim leases a few due jobs by primary key, so it must walk the index
 * however the jobs table has grown since the claim was first run: a plan made
 * while a new database held a few jobs, and kept, scanned the whole table at
 * every claim as it filled up.
 */
describe('fulfilment job claims as the jobs table grows', () => {
  let planned: PlanTestDatabase;
  let db: TestDatabase;
  /** The worker's connection that claims. */
  let worker: Pool;

  beforeAll(async () => {
    planned = await planTestDatabase(allMigrations({ eventStore: 'postgres', upstreamSimulator: true }), ['fulfilment_jobs']);
    ({ db, connection: worker } = planned);
  });

  afterAll(async () => planned.close());

  /** Three new due jobs, claimed in one call, then deleted as the projection deletes them. */
  async function claimRound(round: string): Promise<void> {
    const orders = [1, 2, 3].map((n) => `T-${round}-${n}`);
    await db.pool.query(`insert into fulfilment_jobs (order_no, next_attempt_at, accepted_at) select o, now(), now() from unnest($1::text[]) o`, [orders]);
    const claimed = await claimJobs(worker, 10, 60_000, 'worker');
    expect(claimed.map((job) => job.order_no).sort()).toEqual(orders);
    const { rows } = await db.pool.query('select leased_by from fulfilment_jobs where order_no = any($1)', [orders]);
    expect(rows).toEqual([{ leased_by: 'worker' }, { leased_by: 'worker' }, { leased_by: 'worker' }]);
    await db.pool.query('delete from fulfilment_jobs where order_no = any($1)', [orders]);
  }

  it('walks the primary key once the table is large, after many claims while it was small', async () => {
    for (let round = 0; round < 8; round++) await claimRound(`small${round}`);
    // A long queue behind them: jobs waiting to retry, due in an hour.
    await db.pool.query(
      `insert into fulfilment_jobs (order_no, attempts, next_attempt_at, accepted_at)
       select 'T-later-' || n, 1, now() + interval '1 hour', now() from generate_series(1, 20000) n`,
    );
    const before = await planned.scans();

    await claimRound('large');

    const round = scansBetween(before, await planned.scans()).fulfilment_jobs;
    // The index scans prove the worker's counts were published; the claim then scanned no table.
    expect(round.idx).toBeGreaterThan(0);
    expect(round.seq).toBe(0);
  });
});
