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

  /** Three new due jobs, claimed in one call, then closed as the projection closes them. */
  async function claimRound(round: string): Promise<void> {
    const orders = [1, 2, 3].map((n) => `T-${round}-${n}`);
    await db.pool.query(`insert into fulfilment_jobs (order_no, next_attempt_at, accepted_at) select o, now(), now() from unnest($1::text[]) o`, [orders]);
    const claimed = await claimJobs(worker, 10, 60_000, 'worker');
    expect(claimed.map((job) => job.order_no).sort()).toEqual(orders);
    await db.pool.query('update fulfilment_jobs set done = true where order_no = any($1)', [orders]);
  }

  it('walks the primary key once the table is large, after many claims while it was small', async () => {
    for (let round = 0; round < 8; round++) await claimRound(`small${round}`);
    await db.pool.query(
      `insert into fulfilment_jobs (order_no, done, next_attempt_at, accepted_at)
       select 'T-old-' || n, true, now(), now() from generate_series(1, 20000) n`,
    );
    const before = await planned.scans();

    await claimRound('large');

    const round = scansBetween(before, await planned.scans()).fulfilment_jobs;
    const { rows } = await db.pool.query(`select leased_by from fulfilment_jobs where order_no like 'T-large-%'`);
    expect(rows).toEqual([{ leased_by: 'worker' }, { leased_by: 'worker' }, { leased_by: 'worker' }]);
    // The index scans prove the worker's counts were published; the claim then scanned no table.
    expect(round.idx).toBeGreaterThan(0);
    expect(round.seq).toBe(0);
  });
});
