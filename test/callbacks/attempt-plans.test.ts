import { Pool } from 'pg';
import { AttemptResult, AttemptStart, recordAttemptResults, startAttempts } from '../../src/callbacks/attempt-statements';
import { migrate } from '../../src/infrastructure/postgres/migrations';
import { allMigrations } from '../../src/schema';
import { scansBetween, tableScans } from '../support/table-scans';
import { createTestDatabase, TestDatabase } from '../support/test-database';

/**
 * The attempt statements name their rows by primary key, so they must walk
 * it however the tables have grown since the statements were first run. A
 * new database's first callbacks run them against tables of a few rows; a
 * plan made then and kept (a prepared statement's generic plan lives until
 * the tables are next analyzed) scanned both tables at every call as they
 * filled up.
 */
describe('callback attempt statements as the tables grow', () => {
  let db: TestDatabase;
  /** One connection, as a service's pooled connection runs the statements again and again. */
  let sender: Pool;

  beforeAll(async () => {
    db = await createTestDatabase();
    await migrate(db.pool, allMigrations({ eventStore: 'postgres', upstreamSimulator: true }));
    // Statistics stay as they were, as between two runs of autovacuum.
    for (const table of ['callback_attempts', 'callback_deliveries']) await db.pool.query(`alter table ${table} set (autovacuum_enabled = false)`);
    sender = new Pool({ ...db.config, max: 1 });
  });

  afterAll(async () => {
    await sender.end();
    await db.drop();
  });

  const start = (orderNo: string): AttemptStart => ({
    order_no: orderNo,
    attempt: 1,
    kind: 'scheduled',
    url: 'https://merchant.example/callback',
    merchant_id: 'mch_1',
    delay_ms: 10_000,
  });
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

  const scans = () => tableScans(sender, db.pool, ['callback_attempts', 'callback_deliveries']);

  it('walk the primary keys once the tables are large, after many calls while they were small', async () => {
    for (let round = 0; round < 8; round++) await sendRound(`small${round}`);
    await db.pool.query(
      `insert into callback_deliveries (order_no, state, attempts_made, due_at, created_at)
       select 'T-old-' || n, 'acknowledged', 1, now(), now() from generate_series(1, 20000) n;
       insert into callback_attempts (order_no, attempt, kind, started_at, sent_by, acknowledged)
       select 'T-old-' || n, 1, 'scheduled', now(), 'sender', true from generate_series(1, 20000) n`,
    );
    const before = await scans();

    await sendRound('large');

    const round = scansBetween(before, await scans());
    const { rows } = await db.pool.query(`select state from callback_deliveries where order_no like 'T-large-%'`);
    expect(rows).toEqual([{ state: 'acknowledged' }, { state: 'acknowledged' }, { state: 'acknowledged' }]);
    // The index scans prove the sender's counts were published; the round then scanned neither table.
    expect(round.callback_attempts.idx).toBeGreaterThan(0);
    expect(round.callback_deliveries.idx).toBeGreaterThan(0);
    expect([round.callback_attempts.seq, round.callback_deliveries.seq]).toEqual([0, 0]);
  });
});
