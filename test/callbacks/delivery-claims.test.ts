import { claimDeliveries } from '../../src/callbacks/delivery-claims.queries';
import { migrate } from '../../src/infrastructure/postgres/migrations';
import { allMigrations } from '../../src/schema';
import { createTestDatabase, TestDatabase } from '../support/test-database';

/**
 * A claim leases the oldest due deliveries, but never more of one merchant
 * than that merchant has free slots: a merchant with a long backlog must not
 * fill the claim with deliveries the worker would only hand back.
 */
describe('claiming callback deliveries', () => {
  let db: TestDatabase;

  beforeEach(async () => {
    db = await createTestDatabase();
    await migrate(db.pool, allMigrations({ eventStore: 'postgres', upstreamSimulator: false }));
  });

  afterEach(async () => {
    await db.drop();
  });

  /** A due delivery, `ageS` seconds overdue; its merchant on the row, or only in the orders read model, or unknown. */
  async function due(orderNo: string, ageS: number, merchant: { onRow?: string; inReadModel?: string }) {
    await db.pool.query(
      `insert into callback_deliveries (order_no, merchant_id, attempts_made, due_at, created_at)
       values ($1, $2, 0, now() - make_interval(secs => $3), now())`,
      [orderNo, merchant.onRow ?? null, ageS],
    );
    if (merchant.inReadModel)
      await db.pool.query(
        `insert into rm_orders (order_no, merchant_id, out_trade_no, attempt, stage, sku_id, account_id, account_fields, amount, currency, created_at, completed_at, updated_at)
         values ($1, $2, $1, 1, 'succeeded', 'sku', 'acc', '{}', 100, 'USD', now(), '2026-01-02T03:04:05.678Z', now())`,
        [orderNo, merchant.inReadModel],
      );
  }

  const claim = (slots: number, inFlight: Record<string, number> = {}) =>
    claimDeliveries(db.pool, { slots, perMerchant: 3, inFlight: new Map(Object.entries(inFlight)), leaseMs: 60_000, instanceId: 'instance-a' });

  it('takes at most a merchant’s share of its backlog, oldest first, and fills the rest with other merchants', async () => {
    for (let i = 0; i < 10; i++) await due(`A-${i}`, 100 - i, { onRow: 'mch_a' });
    await due('B-0', 50, { inReadModel: 'mch_b' });
    await due('B-1', 40, { inReadModel: 'mch_b' });

    const claimed = await claim(8);

    expect(claimed.map((d) => d.order_no).sort()).toEqual(['A-0', 'A-1', 'A-2', 'B-0', 'B-1']);
    // The merchant known only from the read model is written into the claimed row.
    expect(claimed.find((d) => d.order_no === 'B-0')!.merchant_id).toBe('mch_b');
    // The order as the read model shows it comes with the claim (what the callback carries); none without a row.
    expect(claimed.find((d) => d.order_no === 'B-0')!.order).toEqual({
      merchant_id: 'mch_b',
      out_trade_no: 'B-0',
      stage: 'succeeded',
      amount: '100',
      account_id: 'acc',
      fail_code: null,
      fail_reason: null,
      completed_ms: String(Date.parse('2026-01-02T03:04:05.678Z')),
    });
    expect(claimed.find((d) => d.order_no === 'A-0')!.order).toBeNull();
    const { rows } = await db.pool.query(`select order_no, merchant_id, leased_by from callback_deliveries where order_no like 'B-%' order by order_no`);
    expect(rows).toEqual([
      { order_no: 'B-0', merchant_id: 'mch_b', leased_by: 'instance-a' },
      { order_no: 'B-1', merchant_id: 'mch_b', leased_by: 'instance-a' },
    ]);
  });

  it('passes over a merchant with no free slot, takes only the free ones of a busy merchant, and never re-leases a leased delivery', async () => {
    for (let i = 0; i < 5; i++) await due(`A-${i}`, 100 - i, { onRow: 'mch_a' });
    for (let i = 0; i < 5; i++) await due(`B-${i}`, 90 - i, { onRow: 'mch_b' });

    // mch_a has all its 3 slots in flight, mch_b 2 of them.
    const first = await claim(10, { mch_a: 3, mch_b: 2 });
    expect(first.map((d) => d.order_no)).toEqual(['B-0']);

    const second = await claim(10);
    expect(second.map((d) => d.order_no).sort()).toEqual(['A-0', 'A-1', 'A-2', 'B-1', 'B-2', 'B-3']);
  });

  it('claims a delivery whose merchant is not known yet, and stops at the free slots', async () => {
    for (let i = 0; i < 4; i++) await due(`U-${i}`, 10 - i, {});

    const claimed = await claim(3);

    expect(claimed.map((d) => [d.order_no, d.merchant_id])).toEqual([
      ['U-0', null],
      ['U-1', null],
      ['U-2', null],
    ]);
  });
});
