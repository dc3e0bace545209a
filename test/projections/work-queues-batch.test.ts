import { callbackScheduleProjection } from '../../projections/callback-schedule.projection';
import { fulfilmentJobsProjection } from '../../projections/fulfilment-jobs.projection';
import { LedgerEvent } from '../../projections/ledger-event';
import { ordersProjection } from '../../projections/orders.projection';
import { liveTables, Projection, suffixedTables } from '../../projections/projection';
import { applyBatch } from '../../projections/projection-runner';
import { inlineStatements } from '../../projections/statement-batch';
import { interleaved } from '../support/order-lives';
import { projectionCases } from '../support/projection-cases';

/**
 * The fulfilment jobs and the callback schedule take a batch's events in a
 * statement or two. Whatever the batches, their rows must be what the
 * events one by one make: a job per accepted order, deleted once the
 * upstream has nothing more to do; a delivery per final order.
 */
describe.each<[Projection, string, string, number]>([
  // The jobs: one insert for the accepted orders, one delete for the finished ones.
  [fulfilmentJobsProjection, 'fulfilment_jobs', 'order_no, attempts, next_attempt_at, lease_until, accepted_at', 2],
  // The deliveries: one insert for the final orders.
  [callbackScheduleProjection, 'callback_deliveries', 'order_no, state, attempts_made, due_at, created_at', 1],
])('%s: a batch of events writes what the events one by one write', (projection, table, columns, statementsPerBatch) => {
  const cases = projectionCases(projection, [ordersProjection]);
  const rowsAfter = async (batches: LedgerEvent[][]) => {
    const t = await cases.applied(batches);
    return (await cases.pool().query(`select ${columns} from ${t[table]} order by order_no`)).rows;
  };

  it('one batch, batches of three, and one event at a time leave the same rows', async () => {
    const log = interleaved();
    const oneByOne = await rowsAfter(log.map((event) => [event]));
    const threes: LedgerEvent[][] = [];
    for (let i = 0; i < log.length; i += 3) threes.push(log.slice(i, i + 3));
    expect(await rowsAfter([log])).toEqual(oneByOne);
    expect(await rowsAfter(threes)).toEqual(oneByOne);
    // `apply`, event by event, is the same write.
    const t = await cases.freshTables();
    for (const event of log) await cases.pool().query(inlineStatements(projection.apply(event, t)));
    expect((await cases.pool().query(`select ${columns} from ${t[table]} order by order_no`)).rows).toEqual(oneByOne);
  });

  it('sends a whole batch in one statement per kind of write', async () => {
    const t = await cases.freshTables();
    expect(projection.applyAll!(interleaved(), t)).toHaveLength(statementsPerBatch);
  });
});

describe('the work queues after the order lives', () => {
  const jobs = projectionCases(fulfilmentJobsProjection);
  const deliveries = projectionCases(callbackScheduleProjection, [ordersProjection]);

  it('hold a job only for an accepted order waiting upstream, and a delivery per final order', async () => {
    const log = interleaved();
    const jobTables = await jobs.applied([log]);
    // A is accepted and waits for its send; B, C and D ended (D through a clerk): their jobs are gone. E was refused: no job.
    const whole = `select order_no, accepted_at from ${jobTables.fulfilment_jobs} order by order_no`;
    expect((await jobs.pool().query(whole)).rows).toEqual([{ order_no: 'A', accepted_at: new Date('2026-11-25T10:00:01.000Z') }]);
    const deliveryTables = await deliveries.applied([log]);
    expect((await deliveries.pool().query(`select order_no, state, due_at from ${deliveryTables.callback_deliveries} order by order_no`)).rows).toEqual([
      { order_no: 'B', state: 'pending', due_at: new Date('2026-11-25T10:00:06.000Z') },
      { order_no: 'C', state: 'pending', due_at: new Date('2026-11-25T10:00:04.000Z') },
      { order_no: 'D', state: 'pending', due_at: new Date('2026-11-25T10:00:05.000Z') },
    ]);
  });
});

describe('the fulfilment queue of an earlier release, which kept finished jobs', () => {
  const jobs = projectionCases(fulfilmentJobsProjection);

  it('keeps the jobs in flight and deletes the finished ones when it is migrated', async () => {
    const t = suffixedTables(fulfilmentJobsProjection, '_upgrade');
    const [created, fillfactor, onlyInFlight] = fulfilmentJobsProjection.migrations;
    expect(onlyInFlight.id).toBe('projections/fulfilment-jobs/003-only-work-in-flight');
    for (const migration of [created, fillfactor]) await jobs.pool().query(migration.sql(t));
    await jobs.pool().query(
      `insert into ${t.fulfilment_jobs} (order_no, done, attempts, next_attempt_at, accepted_at)
       values ('FINISHED', true, 0, now(), now()), ('WAITING', false, 2, now() + interval '1 minute', now())`,
    );

    await jobs.pool().query(onlyInFlight.sql(t));

    expect((await jobs.pool().query(`select order_no, attempts from ${t.fulfilment_jobs}`)).rows).toEqual([{ order_no: 'WAITING', attempts: 2 }]);
    const indexes = await jobs.pool().query(`select indexdef from pg_indexes where tablename = $1 order by indexname`, [t.fulfilment_jobs]);
    expect(indexes.rows.map((r) => r.indexdef.replace(/^.* USING /, ''))).toEqual(['btree (next_attempt_at)', 'btree (order_no)']);
  });
});

describe('the callback schedule of an earlier release, which kept acknowledged deliveries', () => {
  const deliveries = projectionCases(callbackScheduleProjection, [ordersProjection]);

  it('keeps the deliveries to make and those that ran out of attempts, and deletes the acknowledged ones, when it is migrated', async () => {
    const t = suffixedTables(callbackScheduleProjection, '_upgrade');
    const earlier = callbackScheduleProjection.migrations.slice(0, 3);
    const onlyUndelivered = callbackScheduleProjection.migrations[3];
    expect(onlyUndelivered.id).toBe('projections/callback-schedule/004-only-undelivered');
    for (const migration of earlier) await deliveries.pool().query(migration.sql(t));
    await deliveries.pool().query(
      `insert into ${t.callback_deliveries} (order_no, state, attempts_made, due_at, created_at)
       values ('ACKNOWLEDGED', 'acknowledged', 1, now(), now()), ('EXHAUSTED', 'exhausted', 6, now(), now()),
              ('PENDING', 'pending', 2, now() + interval '1 minute', now())`,
    );

    await deliveries.pool().query(onlyUndelivered.sql(t));

    const left = await deliveries.pool().query(`select order_no, state, attempts_made from ${t.callback_deliveries} order by order_no`);
    expect(left.rows).toEqual([
      { order_no: 'EXHAUSTED', state: 'exhausted', attempts_made: 6 },
      { order_no: 'PENDING', state: 'pending', attempts_made: 2 },
    ]);
  });
});

describe('the callback schedule beside the orders read model', () => {
  const deliveries = projectionCases(callbackScheduleProjection, [ordersProjection]);

  it('writes each delivery’s merchant, from the order’s row that the same batch brought up to date', async () => {
    const t = await deliveries.freshTables();
    const orders = liveTables(ordersProjection);
    const log = interleaved();
    await applyBatch(
      deliveries.pool(),
      [
        { projection: ordersProjection, tables: orders, checkpoint: 'orders-merchants' },
        { projection: callbackScheduleProjection, tables: t, checkpoint: 'deliveries-merchants' },
      ],
      log.map((e) => e.recorded),
    );
    expect((await deliveries.pool().query(`select order_no, merchant_id from ${t.callback_deliveries} order by order_no`)).rows).toEqual([
      { order_no: 'B', merchant_id: 'mch_1' },
      { order_no: 'C', merchant_id: 'mch_1' },
      { order_no: 'D', merchant_id: 'mch_1' },
    ]);
  });

  it('gives the deliveries of an earlier release their merchants, and indexes them by merchant, when it is migrated', async () => {
    const t = suffixedTables(callbackScheduleProjection, '_by_merchant');
    const byMerchant = callbackScheduleProjection.migrations[4];
    expect(byMerchant.id).toBe('projections/callback-schedule/005-by-merchant');
    for (const migration of callbackScheduleProjection.migrations.slice(0, 4)) await deliveries.pool().query(migration.sql(t));
    await deliveries.pool().query(
      `insert into ${liveTables(ordersProjection).rm_orders} (order_no, merchant_id, out_trade_no, attempt, stage, sku_id, account_id, account_fields, amount, currency, created_at, updated_at)
       values ('OLD-KNOWN', 'mch_9', 'OUT-OLD', 1, 'succeeded', 'sku', 'acc', '{}', 100, 'USD', now(), now());
       insert into ${t.callback_deliveries} (order_no, merchant_id, due_at, created_at)
       values ('OLD-KNOWN', null, now(), now()), ('OLD-STARTED', 'mch_8', now(), now()), ('OLD-NO-ORDER', null, now(), now())`,
    );

    await deliveries.pool().query(byMerchant.sql(t));

    expect((await deliveries.pool().query(`select order_no, merchant_id from ${t.callback_deliveries} order by order_no`)).rows).toEqual([
      { order_no: 'OLD-KNOWN', merchant_id: 'mch_9' },
      { order_no: 'OLD-NO-ORDER', merchant_id: null },
      { order_no: 'OLD-STARTED', merchant_id: 'mch_8' },
    ]);
    const indexes = await deliveries.pool().query(`select indexdef from pg_indexes where tablename = $1`, [t.callback_deliveries]);
    expect(indexes.rows.map((r) => r.indexdef.replace(/^.* USING /, '')).sort()).toEqual([
      "btree (created_at) WHERE (state = 'exhausted'::text)",
      "btree (due_at) WHERE ((state = 'pending'::text) AND (merchant_id IS NULL))",
      "btree (due_at) WHERE (state = 'pending'::text)",
      "btree (merchant_id, due_at) WHERE (state = 'pending'::text)",
      'btree (order_no)',
    ]);
  });
});
