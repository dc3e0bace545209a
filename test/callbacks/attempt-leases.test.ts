import { AttemptResult, AttemptStart, recordAttemptResults, startAttempts } from '../../projections/callback-schedule.queries';
import { deliveryLogOf, requestRedelivery } from '../../projections/callback-log.queries';
import { migrate } from '../../src/infrastructure/postgres/migrations';
import { allMigrations } from '../../src/schema';
import { createTestDatabase, TestDatabase } from '../support/test-database';

/**
 * A callback attempt is written down before it is sent, and only by the
 * instance that holds the delivery's lease. A sender whose lease ran out
 * while it was loading the order (another instance claimed the delivery
 * meanwhile) must write nothing: an attempt row left behind by it would take
 * the number the new leaseholder is about to use, and the delivery would
 * never be sent again.
 */
describe('callback attempts and expired leases', () => {
  let db: TestDatabase;

  beforeAll(async () => {
    db = await createTestDatabase();
    await migrate(db.pool, allMigrations({ eventStore: 'postgres', upstreamSimulator: true }));
  });

  afterAll(async () => {
    await db.drop();
  });

  const start = (orderNo: string, attempt: number): AttemptStart => ({
    order_no: orderNo,
    attempt,
    kind: 'scheduled',
    url: 'https://merchant.example/callback',
    merchant_id: 'mch_1',
    delay_ms: 10_000,
  });

  async function delivery(orderNo: string, leasedBy: string, attemptsMade = 0) {
    await db.pool.query(
      `insert into callback_deliveries (order_no, attempts_made, due_at, lease_until, leased_by, created_at)
       values ($1, $2, now(), now() + interval '1 minute', $3, now())`,
      [orderNo, attemptsMade, leasedBy],
    );
  }

  const attempts = async (orderNo: string) =>
    (await db.pool.query('select attempt, sent_by from callback_attempts where order_no = $1 order by attempt', [orderNo])).rows;
  const deliveryRow = async (orderNo: string) =>
    (await db.pool.query('select attempts_made, leased_by, state from callback_deliveries where order_no = $1', [orderNo])).rows[0];

  it('a sender whose lease passed to another instance writes nothing, and the leaseholder takes the attempt', async () => {
    await delivery('T-stale', 'instance-b');

    expect(await startAttempts(db.pool, 'instance-a', [start('T-stale', 1)])).toEqual([false]);
    expect(await attempts('T-stale')).toEqual([]);
    expect(await deliveryRow('T-stale')).toMatchObject({ attempts_made: 0, leased_by: 'instance-b' });

    expect(await startAttempts(db.pool, 'instance-b', [start('T-stale', 1)])).toEqual([true]);
    expect(await attempts('T-stale')).toEqual([{ attempt: 1, sent_by: 'instance-b' }]);
    expect(await deliveryRow('T-stale')).toMatchObject({ attempts_made: 1, leased_by: 'instance-b' });
  });

  it('the leaseholder takes only the attempt after the recorded count, once', async () => {
    await delivery('T-count', 'instance-a', 2);

    expect(await startAttempts(db.pool, 'instance-a', [start('T-count', 2)])).toEqual([false]);
    expect(await startAttempts(db.pool, 'instance-a', [start('T-count', 3)])).toEqual([true]);
    expect(await startAttempts(db.pool, 'instance-a', [start('T-count', 3)])).toEqual([false]);
    expect(await attempts('T-count')).toEqual([{ attempt: 3, sent_by: 'instance-a' }]);
    expect(await deliveryRow('T-count')).toMatchObject({ attempts_made: 3 });
  });

  it('in one statement, each delivery is judged on its own', async () => {
    await delivery('T-mine', 'instance-a');
    await delivery('T-theirs', 'instance-b');

    expect(await startAttempts(db.pool, 'instance-a', [start('T-mine', 1), start('T-theirs', 1)])).toEqual([true, false]);
    expect(await attempts('T-theirs')).toEqual([]);
  });

  it("a stale sender's result is kept in the log, but only the leaseholder moves the delivery on", async () => {
    await delivery('T-result', 'instance-a');
    expect(await startAttempts(db.pool, 'instance-a', [start('T-result', 1)])).toEqual([true]);
    // The lease runs out while the callback is on its way; another instance claims the delivery.
    await db.pool.query(`update callback_deliveries set leased_by = 'instance-b' where order_no = 'T-result'`);

    const result = { status_code: 200, latency_ms: 12, reply_excerpt: 'SUCCESS', acknowledged: true, error: null };
    await recordAttemptResults(db.pool, 'instance-a', [{ order_no: 'T-result', attempt: 1, next: 'acknowledged', delay_ms: 0, ...result }]);

    const { rows } = await db.pool.query('select acknowledged, status_code from callback_attempts where order_no = $1', ['T-result']);
    expect(rows).toEqual([{ acknowledged: true, status_code: 200 }]);
    expect(await deliveryRow('T-result')).toMatchObject({ state: 'pending', leased_by: 'instance-b' });
  });

  it('counts each result once, in the sender’s row of the minute the attempt started', async () => {
    await delivery('T-count-ack', 'instance-count');
    await delivery('T-count-refused', 'instance-count');
    expect(await startAttempts(db.pool, 'instance-count', [start('T-count-ack', 1), start('T-count-refused', 1)])).toEqual([true, true]);
    const result = (orderNo: string, acknowledged: boolean): AttemptResult => ({
      order_no: orderNo,
      attempt: 1,
      next: acknowledged ? 'acknowledged' : 'pending',
      delay_ms: 100,
      status_code: acknowledged ? 200 : 500,
      latency_ms: 7,
      reply_excerpt: acknowledged ? 'SUCCESS' : '',
      acknowledged,
      error: null,
    });
    const results = [result('T-count-ack', true), result('T-count-refused', false)];
    await recordAttemptResults(db.pool, 'instance-count', results);
    // The same statement again (sent again after a lost connection, say) counts nothing more.
    await recordAttemptResults(db.pool, 'instance-count', results);
    const { rows } = await db.pool.query(
      `select m.minute = date_bin('1 minute', a.started_at, timestamptz '1970-01-01 00:00:00+00') as started_then, m.acknowledged, m.not_acknowledged
       from callback_attempt_minutes m, callback_attempts a where m.sent_by = 'instance-count' and a.order_no = 'T-count-ack'`,
    );
    expect(rows).toEqual([{ started_then: true, acknowledged: 1, not_acknowledged: 1 }]);
  });

  describe('an acknowledged delivery', () => {
    const acknowledged = (orderNo: string, attempt: number): AttemptResult => ({
      order_no: orderNo,
      attempt,
      next: 'acknowledged',
      delay_ms: 0,
      status_code: 200,
      latency_ms: 9,
      reply_excerpt: 'SUCCESS',
      acknowledged: true,
      error: null,
    });

    it('leaves the schedule; its log tells it from the attempts, and a redelivery puts it back after its last attempt', async () => {
      await delivery('T-done', 'instance-a', 1);
      expect(await startAttempts(db.pool, 'instance-a', [start('T-done', 2)])).toEqual([true]);
      await recordAttemptResults(db.pool, 'instance-a', [acknowledged('T-done', 2)]);

      expect(await deliveryRow('T-done')).toBeUndefined();
      const log = await deliveryLogOf(db.pool, 'T-done');
      expect(log.delivery).toEqual({ state: 'acknowledged', attempts_made: 2, due_at: null, leased: false });
      expect(log.attempts.map((a) => [a.attempt, a.acknowledged])).toEqual([[2, true]]);

      expect(await requestRedelivery(db.pool, 'T-done')).toBe(true);
      const reopened = await db.pool.query(
        `select state, attempts_made, max_attempts, manual_requested, due_at <= now() as due, lease_until from callback_deliveries where order_no = 'T-done'`,
      );
      expect(reopened.rows).toEqual([{ state: 'pending', attempts_made: 2, max_attempts: 3, manual_requested: true, due: true, lease_until: null }]);
      // Asked twice: the second request only brings it forward.
      expect(await requestRedelivery(db.pool, 'T-done')).toBe(true);
      expect(await deliveryRow('T-done')).toMatchObject({ state: 'pending', attempts_made: 2 });
    });

    it('keeps a redelivery that staff asked for while the attempt was in flight', async () => {
      await delivery('T-asked', 'instance-a');
      expect(await startAttempts(db.pool, 'instance-a', [start('T-asked', 1)])).toEqual([true]);
      expect(await requestRedelivery(db.pool, 'T-asked')).toBe(true);
      await recordAttemptResults(db.pool, 'instance-a', [acknowledged('T-asked', 1)]);

      const { rows } = await db.pool.query(
        `select state, attempts_made, max_attempts, manual_requested, due_at <= now() as due, lease_until from callback_deliveries where order_no = 'T-asked'`,
      );
      expect(rows).toEqual([{ state: 'pending', attempts_made: 1, max_attempts: 2, manual_requested: true, due: true, lease_until: null }]);
    });

    it('is told apart from an order that has no delivery', async () => {
      expect(await deliveryLogOf(db.pool, 'T-none')).toEqual({ delivery: undefined, attempts: [] });
      expect(await requestRedelivery(db.pool, 'T-none')).toBe(false);
      expect(await deliveryRow('T-none')).toBeUndefined();
    });
  });
});
