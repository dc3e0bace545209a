import { Pool } from 'pg';
import { fedProjections } from '../../projections/all-projections';
import { InFlightVacuum, inFlightTables } from '../../projections/in-flight-vacuum';
import { migrate } from '../../src/infrastructure/postgres/migrations';
import { allMigrations } from '../../src/schema';
import { callbackEndpoint, CALLBACK_ENV } from '../support/callback-endpoint';
import { awaitFinal, FULFILMENT_ENV_EVERY_ORDER_ENDS } from '../support/fulfilment';
import { provisionMerchant, signedFetch } from '../support/merchant-fixture';
import { startService } from '../support/service';
import { createTestDatabase, TestDatabase } from '../support/test-database';
import { until } from '../support/until';

const IN_FLIGHT = ['callback_deliveries', 'fulfilment_jobs', 'rm_upstream_sends', 'rm_wallet_holds'];

/** Manual vacuums of each in-flight table so far (a vacuum reports its own counts at its end). */
async function vacuums(pool: Pool): Promise<Record<string, number>> {
  const { rows } = await pool.query<{ relname: string; n: string }>(
    'select relname, vacuum_count::text as n from pg_stat_user_tables where relname = any($1) order by relname',
    [IN_FLIGHT],
  );
  return Object.fromEntries(rows.map((row) => [row.relname, Number(row.n)]));
}

const pages = async (pool: Pool, table: string) =>
  Number((await pool.query<{ n: string }>('select (pg_relation_size($1::regclass) / 8192)::text as n', [table])).rows[0].n);

describe('the in-flight tables', () => {
  it('are the projections’ tables with a row per order in flight', () => {
    expect(inFlightTables(fedProjections).sort()).toEqual(IN_FLIGHT);
  });
});

describe('vacuuming the in-flight tables', () => {
  let db: TestDatabase;

  beforeAll(async () => {
    db = await createTestDatabase();
    await migrate(db.pool, allMigrations({ eventStore: 'postgres', upstreamSimulator: false }));
  });

  afterAll(async () => db.drop());

  it('gives a table back the pages of its deleted rows', async () => {
    await db.pool.query(
      `insert into fulfilment_jobs (order_no, next_attempt_at, accepted_at) select 'T-' || i, now(), now() from generate_series(1, 20000) i;
       delete from fulfilment_jobs`,
    );
    expect(await pages(db.pool, 'fulfilment_jobs')).toBeGreaterThan(100);

    await new InFlightVacuum(db.pool, IN_FLIGHT, 1000, () => undefined).vacuum();

    expect(await pages(db.pool, 'fulfilment_jobs')).toBe(0);
  });

  it('with no tables named, vacuums nothing (VACUUM alone would take the whole database)', async () => {
    const before = await vacuums(db.pool);
    await new InFlightVacuum(db.pool, [], 1000, () => undefined).vacuum();
    expect(await vacuums(db.pool)).toEqual(before);
  });

  it('runs a round only after the read models changed, and none after it stops', async () => {
    const failures: unknown[] = [];
    const vacuum = new InFlightVacuum(db.pool, IN_FLIGHT, 20, (error) => failures.push(error));
    const before = await vacuums(db.pool);
    vacuum.start();
    try {
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(await vacuums(db.pool)).toEqual(before);

      vacuum.changed();
      const after = await until(
        () => vacuums(db.pool),
        (counts) => IN_FLIGHT.every((table) => counts[table] > before[table]),
        5000,
      );
      // One round for one change.
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(await vacuums(db.pool)).toEqual(after);
      expect(IN_FLIGHT.map((table) => after[table] - before[table])).toEqual([1, 1, 1, 1]);
    } finally {
      await vacuum.stop();
    }
    vacuum.changed();
    const stopped = await vacuums(db.pool);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(await vacuums(db.pool)).toEqual(stopped);
    expect(failures).toEqual([]);
  });

  it('stops only once a round in progress has ended (a database being dropped must not have a vacuum running)', async () => {
    let open!: () => void;
    const gate = new Promise<void>((resolve) => (open = resolve));
    let sent = false;
    // The round's statement waits at the gate before it reaches Postgres.
    const gated = {
      query: async (sql: string) => {
        sent = true;
        await gate;
        return db.pool.query(sql);
      },
    } as unknown as Pool;
    const vacuum = new InFlightVacuum(gated, IN_FLIGHT, 20, () => undefined);
    const before = await vacuums(db.pool);
    vacuum.start();
    vacuum.changed();
    expect(
      await until(
        async () => sent,
        (s) => s,
        5000,
      ),
    ).toBe(true);

    let stopped = false;
    const stopping = vacuum.stop().then(() => (stopped = true));
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(stopped).toBe(false);

    open();
    await stopping;
    const after = await vacuums(db.pool);
    expect(IN_FLIGHT.map((table) => after[table] - before[table])).toEqual([1, 1, 1, 1]);
  });

  it('leaves a table someone else holds for the next round, without waiting for it', async () => {
    const holder = await db.pool.connect();
    try {
      // What another vacuum (autovacuum, or a second instance) holds.
      await holder.query('begin; lock table rm_wallet_holds in share update exclusive mode');
      const before = await vacuums(db.pool);
      const round = new InFlightVacuum(db.pool, IN_FLIGHT, 1000, () => undefined).vacuum();
      let timer: NodeJS.Timeout | undefined;
      const waited = new Promise((resolve) => (timer = setTimeout(resolve, 5000, 'waiting')));
      const outcome = await Promise.race([round.then(() => 'done'), waited]);
      clearTimeout(timer);
      expect(outcome).toBe('done');
      const after = await vacuums(db.pool);
      expect(after.rm_wallet_holds).toBe(before.rm_wallet_holds);
      expect(after.fulfilment_jobs).toBe(before.fulfilment_jobs + 1);
    } finally {
      await holder.query('rollback');
      holder.release();
    }
  });
});

describe('a running service', () => {
  it('vacuums its in-flight tables while orders go through, every IN_FLIGHT_VACUUM_INTERVAL_MS', async () => {
    const db = await createTestDatabase();
    const endpoint = await callbackEndpoint(() => ({ status: 200, body: 'success' }));
    const service = await startService(db, {
      ...FULFILMENT_ENV_EVERY_ORDER_ENDS,
      ...CALLBACK_ENV,
      UPSTREAM_SIM_DELAY_MS: '10',
      IN_FLIGHT_VACUUM_INTERVAL_MS: '100',
    });
    try {
      const before = await vacuums(service.pool);
      const merchant = await provisionMerchant(service, { callbackUrl: endpoint.url });
      const reply = await signedFetch(service, merchant, {
        path: '/api/v2/topup/submit',
        body: JSON.stringify({ out_trade_no: 'V-1', sku_id: 'mlbb-86', account_id: '12345678', account_fields: { server_id: '1' } }),
      });
      expect(reply.status).toBe(202);
      expect((await awaitFinal(service, merchant, reply.body.data.order_no)).status).toBe('success');
      const after = await until(
        () => vacuums(service.pool),
        (counts) => IN_FLIGHT.every((table) => counts[table] > before[table]),
        10_000,
      );
      expect(IN_FLIGHT.filter((table) => after[table] > before[table])).toEqual(IN_FLIGHT);
    } finally {
      await service.stop();
      await endpoint.stop();
      await db.drop();
    }
  }, 60_000);
});
