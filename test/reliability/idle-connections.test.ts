import { Client } from 'pg';
import { PROJECTION_THREAD_APPLICATION } from '../../projections/projection-thread';
import { ChildService, spawnService } from '../support/child-service';
import { provisionOverHttp } from '../support/http-provisioning';
import { signedFetch } from '../support/merchant-fixture';
import { sample, scrapeMetrics } from '../support/prometheus-text';
import { createTestDatabase, TestDatabase } from '../support/test-database';

const IDLE_MS = 300;
const QUIET_MS = 2500;
/** Longer than node-postgres's own idle time (10 s), which a pool not given the setting would use. */
const LULL_MS = 11_000;
/** How the pools' connections show in pg_stat_activity: the main and admission pools', the projections thread's. */
const POOLED = ['topup-ledger', PROJECTION_THREAD_APPLICATION];

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * DATABASE_POOL_IDLE_MS reaches each of the service's three pools: the main
 * one, the admission pool that consumes nonces, and the projections thread's.
 * A connection opened again plans its statements again, so by default they
 * stay open through a lull; a short setting closes them.
 */
describe('pooled connections with nothing to do (DATABASE_POOL_IDLE_MS)', () => {
  /** The service's pooled backends by application name (its LISTEN connections are not pooled and go unnamed). */
  async function pooledBackends(db: TestDatabase): Promise<Map<string, Set<number>>> {
    const dba = new Client({ ...db.config, database: 'postgres' });
    await dba.connect();
    const { rows } = await dba.query<{ pid: number; application_name: string }>(
      `select pid, application_name from pg_stat_activity where datname = $1 and application_name = any($2)`,
      [db.name, POOLED],
    );
    await dba.end();
    const byApplication = new Map<string, Set<number>>();
    for (const row of rows) byApplication.set(row.application_name, (byApplication.get(row.application_name) ?? new Set()).add(row.pid));
    return byApplication;
  }

  /** Uses every pool once: the back office's provisioning (main), a signed merchant request (admission), and events for the projections thread. */
  async function useEveryPool(service: ChildService): Promise<void> {
    const merchant = await provisionOverHttp(service.url);
    expect((await signedFetch(service, merchant, { path: '/api/v2/balance' })).status).toBe(200);
  }

  async function withService(env: Record<string, string>, check: (db: TestDatabase, service: ChildService) => Promise<void>): Promise<void> {
    const db = await createTestDatabase();
    // The log's fallback poll at its default (1 s, not the tests' 200 ms): more often than the idle time, it would keep one connection busy.
    const service = await spawnService(db, { CALLBACK_CONCURRENCY: '0', EVENT_STORE_POLL_MS: '1000', ...env });
    try {
      await check(db, service);
    } finally {
      await service.kill('SIGTERM');
      await db.drop();
    }
  }

  it(`closes every pool's connections after ${IDLE_MS} ms unused`, () =>
    withService({ DATABASE_POOL_IDLE_MS: String(IDLE_MS) }, async (db, service) => {
      await useEveryPool(service);
      const before = await pooledBackends(db);
      expect([...before.keys()].sort()).toEqual([...POOLED].sort());
      expect(sample(await scrapeMetrics(service.url), 'pg_pool_connections', { pool: 'admission', state: 'idle' })).toBeGreaterThan(0);

      await sleep(QUIET_MS);
      const after = await pooledBackends(db);
      for (const [application, pids] of before) {
        const kept = [...pids].filter((pid) => after.get(application)?.has(pid));
        expect({ application, kept }).toEqual({ application, kept: [] });
      }
      // The scrape reads the database through the main pool only.
      expect(sample(await scrapeMetrics(service.url), 'pg_pool_connections', { pool: 'admission', state: 'idle' })).toBe(0);
    }));

  // The default, given explicitly: the suites' environment sets 10 s (test/support/service.ts).
  it('keeps them open through a lull longer than 10 s at the default (10 min)', () =>
    withService({ DATABASE_POOL_IDLE_MS: '600000' }, async (db, service) => {
      await useEveryPool(service);
      const before = await pooledBackends(db);
      const admissionIdle = sample(await scrapeMetrics(service.url), 'pg_pool_connections', { pool: 'admission', state: 'idle' });
      expect(admissionIdle).toBeGreaterThan(0);

      await sleep(LULL_MS);
      const after = await pooledBackends(db);
      for (const [application, pids] of before) {
        const closed = [...pids].filter((pid) => !after.get(application)?.has(pid));
        expect({ application, closed }).toEqual({ application, closed: [] });
      }
      expect(sample(await scrapeMetrics(service.url), 'pg_pool_connections', { pool: 'admission', state: 'idle' })).toBe(admissionIdle);
    }));
});
