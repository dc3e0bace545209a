import { Client } from 'pg';
import { connectionConfig } from '../../src/config/database-connection';
import { startService, RunningService } from '../support/service';
import { createTestDatabase, TestDatabase } from '../support/test-database';

/**
 * Postgres 15 publishes a quiet backend's counts within 10 s, so the start-up's
 * commits are all published after SETTLE_MS and the window's edges each lag by
 * at most that much: over a steady idle rate the lags cancel out.
 */
const SETTLE_MS = 11_000;
const WINDOW_MS = 20_000;
/** "A handful a second": the idle pollers, with nothing to do. */
const MAX_IDLE_COMMITS_PER_S = 5;

describe('an idle instance costs nearly nothing: commits a second with nothing to do, with the production defaults', () => {
  let db: TestDatabase;
  let service: RunningService;
  let stats: Client;

  beforeAll(async () => {
    db = await createTestDatabase();
    // Every worker on, at the defaults an operator gets (the test settings make the pollers faster and turn workers off).
    service = await startService(db, {
      EVENT_STORE_POLL_MS: '1000',
      ORDER_RECOVERY_INTERVAL_MS: '10000',
      FULFILMENT_CONCURRENCY: '256',
      CALLBACK_CONCURRENCY: '128',
    });
    // Read from the maintenance database, so that reading is not counted.
    stats = new Client({ ...connectionConfig(process.env.DATABASE_URL), database: 'postgres' });
    await stats.connect();
  }, 60_000);

  afterAll(async () => {
    await stats?.end();
    await service?.stop();
    await db?.drop();
  });

  const commits = async () =>
    Number((await stats.query<{ n: string }>('select xact_commit as n from pg_stat_database where datname = $1', [db.name])).rows[0].n);

  it(`makes at most ${MAX_IDLE_COMMITS_PER_S} a second`, async () => {
    await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
    const before = { at: Date.now(), n: await commits() };
    await new Promise((resolve) => setTimeout(resolve, WINDOW_MS));
    const perSecond = ((await commits()) - before.n) / ((Date.now() - before.at) / 1000);
    expect(perSecond).toBeGreaterThan(0); // the pollers do run: a reading that never moves would prove nothing
    expect(perSecond).toBeLessThanOrEqual(MAX_IDLE_COMMITS_PER_S);
  }, 60_000);
});
