import { LedgerEvent } from '../../projections/ledger-event';
import { ordersProjection } from '../../projections/orders.projection';
import { inlineStatements } from '../../projections/statement-batch';
import { OrderEvent } from '../../src/ledger/order/order.decider';
import { orderStream } from '../../src/ledger/streams';
import { projectionCases, recordedLedgerEvent } from '../support/projection-cases';

/**
 * The orders projection folds an order's events within one batch into one
 * write. Whatever the batches the runner hands it, the rows must be what
 * applying the events one by one makes.
 */
describe('orders projection: a batch of events writes what the events one by one write', () => {
  const cases = projectionCases(ordersProjection);

  type OrderSpec = { orderNo: string; event: OrderEvent };
  const order = (orderNo: string, event: OrderEvent): OrderSpec => ({ orderNo, event });
  const placed = (orderNo: string, attempt: number, at: string): OrderSpec =>
    order(orderNo, {
      type: 'OrderPlaced',
      data: {
        orderNo,
        merchantId: 'mch_1',
        outTradeNo: `OUT-${orderNo}`,
        skuId: `sku-${attempt}`,
        accountId: `acc-${attempt}`,
        accountFields: { server_id: String(attempt) },
        amount: 1000n * BigInt(attempt),
        currency: 'USD',
        attempt,
        at,
      },
    });

  /** Every order's life the service can write, each event a second apart. */
  function lives(): OrderSpec[][] {
    const at = (s: number) => `2026-11-25T10:00:${String(s).padStart(2, '0')}.000+00:00`;
    return [
      [placed('A', 1, at(0)), order('A', { type: 'OrderAccepted', data: { attempt: 1, at: at(1) } })],
      [
        placed('B', 1, at(0)),
        order('B', { type: 'OrderRefused', data: { attempt: 1, code: 'INSUFFICIENT_BALANCE', at: at(1) } }),
        placed('B', 2, at(2)),
        order('B', { type: 'OrderAccepted', data: { attempt: 2, at: at(3) } }),
        order('B', { type: 'OrderSentUpstream', data: { upstreamAttempt: 1, at: at(4) } }),
        order('B', { type: 'OrderDeliveryConfirmed', data: { at: at(5) } }),
        order('B', { type: 'OrderSucceeded', data: { at: at(6) } }),
      ],
      [
        placed('C', 1, at(0)),
        order('C', { type: 'OrderAccepted', data: { attempt: 1, at: at(1) } }),
        order('C', { type: 'OrderSentUpstream', data: { upstreamAttempt: 1, at: at(2) } }),
        order('C', { type: 'OrderDeliveryFailed', data: { failCode: 'INVALID_ACCOUNT', failReason: 'no such player', at: at(3) } }),
        order('C', { type: 'OrderFailed', data: { failCode: 'INVALID_ACCOUNT', failReason: 'no such player', at: at(4) } }),
      ],
      [
        placed('D', 1, at(0)),
        order('D', { type: 'OrderAccepted', data: { attempt: 1, at: at(1) } }),
        order('D', { type: 'OrderSentUpstream', data: { upstreamAttempt: 1, at: at(2) } }),
        order('D', { type: 'OrderResultUnknown', data: { reason: 'timeout', evidence: 'no reply in 10 s', at: at(3) } }),
        order('D', { type: 'OrderResolved', data: { outcome: 'failed', resolvedBy: 'clerk-1', note: 'provider says never delivered', at: at(4) } }),
        order('D', { type: 'OrderFailed', data: { failCode: 'RESOLVED_FAILED', failReason: 'provider says never delivered', at: at(5) } }),
      ],
      [placed('E', 1, at(0)), order('E', { type: 'OrderRefused', data: { attempt: 1, code: 'INSUFFICIENT_BALANCE', at: at(1) } })],
    ];
  }

  /**
   * The orders' events interleaved, as the log holds concurrent orders: each
   * recorded (encoded, at the next position) and decoded as the runner does.
   */
  function interleaved(): LedgerEvent[] {
    const queues = lives();
    const log: LedgerEvent[] = [];
    while (queues.some((q) => q.length > 0)) {
      for (const q of queues) {
        const next = q.shift();
        if (!next) continue;
        log.push(recordedLedgerEvent(orderStream(next.orderNo), 0n, { commit: 1n, prepare: BigInt(log.length + 1) }, next.event));
      }
    }
    return log;
  }

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
});
