import { LedgerEvent } from '../../projections/ledger-event';
import { ordersProjection } from '../../projections/orders.projection';
import { inlineStatements } from '../../projections/statement-batch';
import { at, interleaved, order, OrderSpec, orderLives, placed } from '../support/order-lives';
import { projectionCases } from '../support/projection-cases';

/**
 * The orders projection folds an order's events within one batch into one
 * write. Whatever the batches the runner hands it, the rows must be what
 * applying the events one by one makes.
 */
describe('orders projection: a batch of events writes what the events one by one write', () => {
  const cases = projectionCases(ordersProjection);

  /** The rows after the runner applied the batches, each in its own transaction, from a checkpoint of their own. */
  async function rowsAfter(batches: LedgerEvent[][]): Promise<unknown[]> {
    const t = await cases.applied(batches);
    return (await cases.pool().query(`select * from ${t.rm_orders} order by order_no`)).rows;
  }

  it('one batch, batches of three, and one event at a time leave the same rows', async () => {
    const log = interleaved();
    const oneByOne = await rowsAfter(log.map((event) => [event]));
    const threes: LedgerEvent[][] = [];
    for (let i = 0; i < log.length; i += 3) threes.push(log.slice(i, i + 3));

    // The runner hands the projection the batch whole.
    const applyAll = jest.spyOn(ordersProjection, 'applyAll');
    expect(await rowsAfter([log])).toEqual(oneByOne);
    expect(applyAll.mock.calls.map(([events]) => events.length)).toEqual([log.length]);
    applyAll.mockClear();
    expect(await rowsAfter(threes)).toEqual(oneByOne);
    // A batch of events the checkpoint has passed already (two instances
    // racing for it) changes nothing: played again, the placements would put
    // every order back to 'placed'.
    applyAll.mockClear();
    expect(await rowsAfter([log, log.slice(0, 5)])).toEqual(oneByOne);
    expect(applyAll.mock.calls.map(([events]) => events.length)).toEqual([log.length]);
    applyAll.mockRestore();
    // And `apply`, event by event, is the same write.
    const t = await cases.freshTables();
    for (const event of log) await cases.pool().query(inlineStatements(ordersProjection.apply(event, t)));
    expect((await cases.pool().query(`select * from ${t.rm_orders} order by order_no`)).rows).toEqual(oneByOne);
  });

  it('writes each order once per batch, and the rows say what the events said', async () => {
    const log = interleaved();
    const t = await cases.freshTables();
    const statements = ordersProjection.applyAll!(log, t);
    // B is placed twice: the refused attempt's write, then the new attempt's.
    expect(statements).toHaveLength(6);
    await cases.pool().query(inlineStatements(statements));
    const rows = (await cases.pool().query(`select * from ${t.rm_orders} order by order_no`)).rows;
    const pick = (orderNo: string, ...columns: string[]) => {
      const row = rows.find((r) => r.order_no === orderNo);
      return Object.fromEntries(columns.map((c) => [c, row[c] instanceof Date ? row[c].toISOString() : row[c]]));
    };

    expect(pick('A', 'stage', 'attempt', 'refusal_code', 'accepted_at', 'completed_at')).toEqual({
      stage: 'accepted',
      attempt: 1,
      refusal_code: null,
      accepted_at: '2026-11-25T10:00:01.000Z',
      completed_at: null,
    });
    expect(pick('B', 'stage', 'attempt', 'sku_id', 'amount', 'refusal_code', 'upstream_attempts', 'created_at', 'completed_at')).toEqual({
      stage: 'succeeded',
      attempt: 2,
      sku_id: 'sku-2',
      amount: '2000',
      refusal_code: null,
      upstream_attempts: 1,
      created_at: '2026-11-25T10:00:02.000Z',
      completed_at: '2026-11-25T10:00:06.000Z',
    });
    expect(pick('C', 'stage', 'fail_code', 'fail_reason', 'completed_at')).toEqual({
      stage: 'failed',
      fail_code: 'INVALID_ACCOUNT',
      fail_reason: 'no such player',
      completed_at: '2026-11-25T10:00:04.000Z',
    });
    expect(pick('D', 'stage', 'result_unknown_at', 'unknown_reason', 'resolved_by', 'resolution_note', 'fail_code')).toEqual({
      stage: 'failed',
      result_unknown_at: '2026-11-25T10:00:03.000Z',
      unknown_reason: 'timeout',
      resolved_by: 'clerk-1',
      resolution_note: 'provider says never delivered',
      fail_code: 'RESOLVED_FAILED',
    });
    expect(pick('E', 'stage', 'refusal_code', 'updated_at')).toEqual({
      stage: 'refused',
      refusal_code: 'INSUFFICIENT_BALANCE',
      updated_at: '2026-11-25T10:00:01.000Z',
    });
  });

  it('writes the orders a batch writes once set-wise: a burst of submits is one statement, their sends one more', async () => {
    const orderNos = Array.from({ length: 40 }, (_, i) => `S${String(i).padStart(2, '0')}`);
    // Round robin over the lives: every placement, then every acceptance, then every send.
    const log = interleaved(
      orderNos.map((orderNo) => [
        placed(orderNo, 1, at(0)),
        order(orderNo, { type: 'OrderAccepted', data: { attempt: 1, at: at(1) } }),
        order(orderNo, { type: 'OrderSentUpstream', data: { upstreamAttempt: 1, at: at(2) } }),
      ]),
    );
    const submits = log.slice(0, 2 * orderNos.length);
    const sends = log.slice(2 * orderNos.length);
    const t = await cases.freshTables();
    expect(ordersProjection.applyAll!(submits, t)).toHaveLength(1);
    expect(ordersProjection.applyAll!(sends, t)).toHaveLength(1);

    const setWise = await cases.applied([submits, sends]);
    const oneByOne = await cases.applied([...submits, ...sends].map((event) => [event]));
    const rows = async (tables: typeof t) => (await cases.pool().query(`select * from ${tables.rm_orders} order by order_no`)).rows;
    expect(await rows(setWise)).toEqual(await rows(oneByOne));
    expect((await rows(setWise)).map((row) => [row.stage, row.upstream_attempts, row.accepted_at.toISOString()])).toEqual(
      orderNos.map(() => ['sent', 1, '2026-11-25T10:00:01.000Z']),
    );
  });

  it('writes texts with quotes and backslashes as they are, set-wise and one by one', async () => {
    const reason = String.raw`player's id \ "x" not found: C:\games\it's`;
    const life = (orderNo: string) => [
      placed(orderNo, 1, at(0)),
      order(orderNo, { type: 'OrderAccepted', data: { attempt: 1, at: at(1) } }),
      order(orderNo, { type: 'OrderSentUpstream', data: { upstreamAttempt: 1, at: at(2) } }),
      order(orderNo, { type: 'OrderDeliveryFailed', data: { failCode: 'INVALID_ACCOUNT', failReason: reason, at: at(3) } }),
    ];
    const log = interleaved([life("Q'1"), life('Q\\2')]);
    for (const batches of [[log], log.map((event) => [event])]) {
      const t = await cases.applied(batches);
      const { rows } = await cases.pool().query(`select order_no, fail_code, fail_reason from ${t.rm_orders} order by order_no`);
      expect(rows).toEqual([
        { order_no: "Q'1", fail_code: 'INVALID_ACCOUNT', fail_reason: reason },
        { order_no: 'Q\\2', fail_code: 'INVALID_ACCOUNT', fail_reason: reason },
      ]);
    }
  });

  /** Whether each row's two keys follow its stage: the reconciliation queue's and the recovery sweep's. */
  const keysFollowStages = (rows: Record<string, any>[]) =>
    rows.map((row) => ({
      order_no: row.order_no,
      stage: row.stage,
      queued: row.awaiting_clerk_since?.toISOString() ?? null,
      stepPending: row.step_pending_since?.toISOString() ?? null,
    }));
  const expectedKeys = (rows: Record<string, any>[]) =>
    rows.map((row) => ({
      order_no: row.order_no,
      stage: row.stage,
      queued: row.stage === 'unknown' ? row.result_unknown_at.toISOString() : null,
      stepPending: ['placed', 'succeeding', 'failing'].includes(row.stage) ? row.updated_at.toISOString() : null,
    }));

  it('keeps the queue key set exactly while an order is unknown, and the step key while its next step is due, after every event', async () => {
    const log = interleaved([
      ...orderLives(),
      [
        placed('F', 1, at(0)),
        order('F', { type: 'OrderAccepted', data: { attempt: 1, at: at(1) } }),
        order('F', { type: 'OrderSentUpstream', data: { upstreamAttempt: 1, at: at(2) } }),
        order('F', { type: 'OrderResultUnknown', data: { reason: 'timeout', at: at(3) } }),
      ],
      [
        placed('G', 1, at(0)),
        order('G', { type: 'OrderAccepted', data: { attempt: 1, at: at(1) } }),
        order('G', { type: 'OrderSentUpstream', data: { upstreamAttempt: 1, at: at(2) } }),
        order('G', { type: 'OrderDeliveryConfirmed', data: { at: at(3) } }),
      ],
    ]);
    const t = await cases.freshTables();
    let stagesSeen = new Set<string>();
    for (const event of log) {
      await cases.pool().query(inlineStatements(ordersProjection.apply(event, t)));
      const { rows } = await cases.pool().query(`select * from ${t.rm_orders} order by order_no`);
      expect(keysFollowStages(rows)).toEqual(expectedKeys(rows));
      stagesSeen = new Set([...stagesSeen, ...rows.map((row) => row.stage as string)]);
    }
    // Every stage passed through on the way, the ones with a key among them.
    expect([...stagesSeen].sort()).toEqual(['accepted', 'failed', 'failing', 'placed', 'refused', 'sent', 'succeeded', 'succeeding', 'unknown']);
    // Whole, in one batch, the same.
    const whole = await cases.applied([log]);
    const { rows } = await cases.pool().query(`select * from ${whole.rm_orders} order by order_no`);
    expect(keysFollowStages(rows)).toEqual(expectedKeys(rows));
  });

  it("updates an order's row in its normal life without changing a column any index holds or filters on, so the updates can be HOT", async () => {
    const orderNos = Array.from({ length: 20 }, (_, i) => `H${String(i).padStart(2, '0')}`);
    const step = (make: (orderNo: string) => OrderSpec[]) => interleaved(orderNos.map(make));
    const submits = step((o) => [placed(o, 1, at(0)), order(o, { type: 'OrderAccepted', data: { attempt: 1, at: at(1) } })]);
    const sends = step((o) => [order(o, { type: 'OrderSentUpstream', data: { upstreamAttempt: 1, at: at(2) } })]);
    const settles = step((o) => [order(o, { type: 'OrderDeliveryConfirmed', data: { at: at(3) } }), order(o, { type: 'OrderSucceeded', data: { at: at(4) } })]);
    const t = await cases.freshTables();
    // Every column an index of the table holds, or names in its predicate: a change to one makes an update non-HOT.
    const { rows: indexed } = await cases.pool().query<{ column_name: string }>(
      `select distinct a.attname as column_name
         from pg_index x join pg_attribute a on a.attrelid = x.indrelid and a.attnum > 0 and not a.attisdropped
        where x.indrelid = $1::regclass
          and (a.attnum = any(x.indkey) or coalesce(pg_get_expr(x.indpred, x.indrelid), '') ~ ('\\m' || a.attname || '\\M'))`,
      [t.rm_orders],
    );
    const columns = indexed.map((r) => r.column_name).sort();
    expect(columns).toEqual(['account_id', 'awaiting_clerk_since', 'created_at', 'merchant_id', 'order_no', 'out_trade_no', 'step_pending_since']);
    const snapshot = async () =>
      (await cases.pool().query(`select ${columns.join(', ')} from ${t.rm_orders} order by order_no`)).rows.map((row) => JSON.stringify(row));
    await cases.pool().query(inlineStatements(ordersProjection.applyAll!(submits, t)));
    const afterSubmits = await snapshot();
    await cases.pool().query(inlineStatements(ordersProjection.applyAll!(sends, t)));
    expect(await snapshot()).toEqual(afterSubmits);
    await cases.pool().query(inlineStatements(ordersProjection.applyAll!(settles, t)));
    expect(await snapshot()).toEqual(afterSubmits);
    expect(new Set((await cases.pool().query(`select stage from ${t.rm_orders}`)).rows.map((r) => r.stage))).toEqual(new Set(['succeeded']));
  });

  it("and Postgres does make them HOT: one order's life, each step in a transaction of its own", async () => {
    const t = await cases.freshTables();
    const client = await cases.pool().connect();
    try {
      // The backend's own counts, not yet published, read at the transaction's start and end (they publish only between transactions).
      const read = async () =>
        (
          await client.query<{ updated: string; hot: string }>(
            `select pg_stat_get_xact_tuples_updated($1::regclass) as updated, pg_stat_get_xact_tuples_hot_updated($1::regclass) as hot`,
            [t.rm_orders],
          )
        ).rows[0];
      const counts = { updated: 0, hot: 0 };
      const life = [
        [placed('L', 1, at(0)), order('L', { type: 'OrderAccepted', data: { attempt: 1, at: at(1) } })],
        [order('L', { type: 'OrderSentUpstream', data: { upstreamAttempt: 1, at: at(2) } })],
        [order('L', { type: 'OrderDeliveryConfirmed', data: { at: at(3) } }), order('L', { type: 'OrderSucceeded', data: { at: at(4) } })],
      ];
      for (const specs of life) {
        await client.query('begin');
        const before = await read();
        await client.query(inlineStatements(ordersProjection.applyAll!(interleaved([specs]), t)));
        const after = await read();
        await client.query('commit');
        counts.updated += Number(after.updated) - Number(before.updated);
        counts.hot += Number(after.hot) - Number(before.hot);
      }
      // One row on its page: room for both new versions, so whether they are HOT is up to the indexes alone.
      expect(counts).toEqual({ updated: 2, hot: 2 });
    } finally {
      client.release();
    }
  });
});
