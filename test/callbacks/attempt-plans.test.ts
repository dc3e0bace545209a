import { Pool } from 'pg';
import { AttemptResult, AttemptStart, recordAttemptResults, startAttempts } from '../../projections/callback-schedule.queries';
import { allMigrations } from '../../src/schema';
import { PlanTestDatabase, planTestDatabase, scansBetween } from '../support/table-scans';
import { TestDatabase } from '../support/test-database';

/** A first attempt's result: the merchant acknowledged it. */
const acknowledged = (orderNo: string): AttemptResult => ({
  order_no: orderNo,
  attempt: 1,
  next: 'acknowledged',
  delay_ms: 0,
  status_code: 200,
  latency_ms: 5,
  reply_excerpt: 'SUCCESS',
  acknowledged: true,
  error: null,
});

/**
 * The attempt statements name their rows by primary key, so they must walk
 * it however the tables have grown since the statements were first run. A
 * new database's first callbacks run them against tables of a few rows; a
 * plan made then and kept (a prepared statement's generic plan lives until
 * the tables are next analyzed) scanned both tables at every call as they
 * filled up.
 */
describe('callback attempt statements as the tables grow', () => {
  let planned: PlanTestDatabase;
  let db: TestDatabase;
  /** The service's connection that sends the statements. */
  let sender: Pool;

  beforeAll(async () => {
    planned = await planTestDatabase(allMigrations({ eventStore: 'postgres', upstreamSimulator: true }), ['callback_attempts', 'callback_deliveries']);
    ({ db, connection: sender } = planned);
  });

  afterAll(async () => planned.close());

  const start = (orderNo: string): AttemptStart => ({
    order_no: orderNo,
    attempt: 1,
    kind: 'scheduled',
    url: 'https://merchant.example/callback',
    merchant_id: 'mch_1',
    delay_ms: 10_000,
  });

  /** Three new deliveries leased to the sender, started and acknowledged in one call each. */
  async function sendRound(round: string): Promise<void> {
    const orders = [1, 2, 3].map((n) => `T-${round}-${n}`);
    await db.pool.query(
      `insert into callback_deliveries (order_no, due_at, lease_until, leased_by, created_at)
       select o, now(), now() + interval '1 minute', 'sender', now() from unnest($1::text[]) o`,
      [orders],
    );
    expect(await startAttempts(sender, 'sender', orders.map(start))).toEqual([true, true, true]);
    await recordAttemptResults(sender, 'sender', orders.map(acknowledged));
  }

  it('walk the primary keys once the tables are large, after many calls while they were small', async () => {
    for (let round = 0; round < 8; round++) await sendRound(`small${round}`);
    // A long outage's deliveries, run out of attempts, and their attempts (acknowledged ones leave callback_deliveries).
    await db.pool.query(
      `insert into callback_deliveries (order_no, state, attempts_made, due_at, created_at)
       select 'T-old-' || n, 'exhausted', 1, now(), now() from generate_series(1, 20000) n;
       insert into callback_attempts (order_no, attempt, kind, started_at, sent_by, acknowledged)
       select 'T-old-' || n, 1, 'scheduled', now(), 'sender', false from generate_series(1, 20000) n`,
    );
    const before = await planned.scans();

    await sendRound('large');

    const round = scansBetween(before, await planned.scans());
    // Acknowledged: the deliveries left the schedule, their attempts recorded.
    expect((await db.pool.query(`select from callback_deliveries where order_no like 'T-large-%'`)).rowCount).toBe(0);
    const { rows } = await db.pool.query(`select acknowledged from callback_attempts where order_no like 'T-large-%'`);
    expect(rows).toEqual([{ acknowledged: true }, { acknowledged: true }, { acknowledged: true }]);
    // The index scans prove the sender's counts were published; the round then scanned neither table.
    expect(round.callback_attempts.idx).toBeGreaterThan(0);
    expect(round.callback_deliveries.idx).toBeGreaterThan(0);
    expect([round.callback_attempts.seq, round.callback_deliveries.seq]).toEqual([0, 0]);
  });
});

/**
 * Between vacuums the schedule holds a few hundred live deliveries on
 * thousands of pages of acknowledged (deleted) ones. Joined with a call's
 * results, the delete of the acknowledged deliveries became a nested loop
 * over a sequential scan of the table, run once per result.
 */
describe('recording a batch of acknowledgements among the pages of deleted deliveries', () => {
  let planned: PlanTestDatabase;

  beforeAll(async () => {
    planned = await planTestDatabase(allMigrations({ eventStore: 'postgres', upstreamSimulator: false }), ['callback_deliveries', 'callback_attempts']);
  });

  afterAll(async () => planned.close());

  it('reads the acknowledged deliveries by key, never the whole table', async () => {
    const { db, connection } = planned;
    const results = 120;
    await db.pool.query(
      `insert into callback_deliveries (order_no, merchant_id, attempts_made, due_at, created_at)
       select 'GONE-' || i, 'mch_1', 1, now(), now() from generate_series(1, 100000) i;
       delete from callback_deliveries;
       insert into callback_deliveries (order_no, merchant_id, attempts_made, due_at, lease_until, leased_by, created_at)
       select 'ACK-' || i, 'mch_1', 1, now(), now() + interval '1 minute', 'sender', now() from generate_series(1, 300) i;
       insert into callback_attempts (order_no, attempt, kind, started_at, sent_by)
       select 'ACK-' || i, 1, 'scheduled', now(), 'sender' from generate_series(1, 300) i;
       analyze callback_deliveries; analyze callback_attempts`,
    );
    const before = await planned.scans();

    await recordAttemptResults(
      connection,
      'sender',
      Array.from({ length: results }, (_, i) => acknowledged(`ACK-${i + 1}`)),
    );

    const read = scansBetween(before, await planned.scans());
    expect((await db.pool.query(`select count(*)::int as n from callback_deliveries`)).rows[0].n).toBe(300 - results);
    // By key, a few index scans a result: the nested loop rescanned the table (by index here: 7,380 scans
    // for 120 results; in a soak, sequentially) once per result.
    expect(read.callback_deliveries.idx).toBeLessThan(results * 4);
    expect(read.callback_deliveries.blocks).toBeLessThan(5_000);
  });
});
