import { Pool, QueryConfig } from 'pg';
import { claimDeliveries } from '../../projections/callback-claims.queries';
import { migrate } from '../../src/infrastructure/postgres/migrations';
import { allMigrations } from '../../src/schema';
import { PlanTestDatabase, planTestDatabase, scansBetween } from '../support/table-scans';
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

  /** The names of the statements the claims sent, in order. */
  let statements: string[];
  beforeEach(() => (statements = []));
  const recordingPool = () =>
    ({
      query: (config: QueryConfig) => {
        statements.push(config.name ?? '');
        return db.pool.query(config);
      },
    }) as unknown as Pool;

  const claim = (slots: number, inFlight: Record<string, number> = {}) =>
    claimDeliveries(recordingPool(), {
      slots,
      perMerchant: 3,
      inFlight: new Map(Object.entries(inFlight)),
      leaseMs: 60_000,
      instanceId: 'instance-a',
      timeoutMs: 10_000,
      retryDelaysMs: [15_000, 60_000],
    });

  async function provision(merchantId: string, callbackUrl: string | null) {
    await db.pool.query(
      `insert into merchants (merchant_id, name, currency, api_key, app_secret_enc, callback_url, rate_limit_per_second, created_by, updated_by)
       values ($1, $1, 'USD', 'ak_' || $1, '\\x0102'::bytea, $2, 100, 'test', 'test')`,
      [merchantId, callbackUrl],
    );
  }
  const deliveryRow = async (orderNo: string) =>
    (
      await db.pool.query(
        `select attempts_made, manual_requested, leased_by, extract(epoch from due_at - now())::float8 as due_in_s
         from callback_deliveries where order_no = $1`,
        [orderNo],
      )
    ).rows[0];
  /** Seconds until due, as set a moment before the read: up to a second less for the time between them. */
  const dueIn = (seconds: number) => ({
    asymmetricMatch: (actual: number) => actual > seconds - 1 && actual <= seconds,
    toString: () => `a number in (${seconds - 1}, ${seconds}]`,
  });
  const attemptRows = async (orderNo: string) =>
    (await db.pool.query('select attempt, kind, url, sent_by, acknowledged from callback_attempts where order_no = $1 order by attempt', [orderNo])).rows;

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

  /** `count` due deliveries of a merchant, `M-0` the oldest, all older than `olderThanS` seconds. */
  async function backlog(prefix: string, merchantId: string, count: number, olderThanS: number) {
    await db.pool.query(
      `insert into callback_deliveries (order_no, merchant_id, attempts_made, due_at, created_at)
       select $1 || '-' || i, $2, 0, now() - make_interval(secs => $3 + $4 - i), now() from generate_series(0, $4 - 1) i`,
      [prefix, merchantId, olderThanS, count],
    );
  }
  const merchantsOf = (claimed: readonly { order_no: string }[]) => {
    const counts: Record<string, number> = {};
    for (const { order_no } of claimed) {
      const prefix = order_no.split('-')[0];
      counts[prefix] = (counts[prefix] ?? 0) + 1;
    }
    return counts;
  };

  it('claims by merchant only when full merchants filled its window and slots are left', async () => {
    // Few due: the window holds them all.
    await due('A-0', 30, { onRow: 'mch_a' });
    await due('B-0', 20, { onRow: 'mch_b' });
    expect((await claim(10)).map((d) => d.order_no)).toEqual(['A-0', 'B-0']);
    expect(statements).toEqual(['callbacks-claim-oldest']);

    // A full window, and every free slot taken from it.
    statements = [];
    await backlog('C', 'mch_c', 20, 500);
    await backlog('D', 'mch_d', 20, 400);
    expect(merchantsOf(await claim(2))).toEqual({ C: 2 });
    expect(statements).toEqual(['callbacks-claim-oldest']);

    // A window full of a full merchant's deliveries, with slots left: the other merchant's are reached by merchant.
    statements = [];
    expect(merchantsOf(await claim(4, { mch_c: 3 }))).toEqual({ D: 3 });
    expect(statements).toEqual(['callbacks-claim-oldest', 'callbacks-claim-by-merchant']);
  });

  it('reaches the merchants behind other merchants’ long backlogs in one call, oldest due first', async () => {
    await backlog('A', 'mch_a', 50, 1_000);
    await backlog('C', 'mch_c', 50, 500);
    await due('B-0', 50, { inReadModel: 'mch_b' });
    await due('B-1', 40, { inReadModel: 'mch_b' });

    const claimed = await claim(10);

    expect(claimed.map((d) => d.order_no)).toEqual(['A-0', 'A-1', 'A-2', 'C-0', 'C-1', 'C-2', 'B-0', 'B-1']);
    expect(new Set((await db.pool.query(`select order_no from callback_deliveries where leased_by is not null`)).rows.map((r) => r.order_no))).toEqual(
      new Set(claimed.map((d) => d.order_no)),
    );
  });

  it('fills every merchant’s free slots in one call, a merchant known only from the read model among them, and stops at the free slots', async () => {
    for (const [i, prefix] of ['A', 'C', 'D', 'E', 'F'].entries()) await backlog(prefix, `mch_${prefix.toLowerCase()}`, 100, 10_000 - 1_000 * i);
    // mch_g's merchant is on no row, only in the orders read model, and its deliveries are the oldest of all.
    for (let i = 0; i < 100; i++) await due(`G-${i}`, 20_000 - i, { inReadModel: 'mch_g' });

    expect(merchantsOf(await claim(25))).toEqual({ G: 3, A: 3, C: 3, D: 3, E: 3, F: 3 });
    // With fewer free slots than the merchants' shares, the oldest due go first.
    expect(merchantsOf(await claim(7, { mch_g: 2 }))).toEqual({ G: 1, A: 3, C: 3 });
  });

  it('writes the next attempt down when it knows the merchant, with the merchant’s current URL and key', async () => {
    await provision('mch_a', 'https://a.example/cb');
    await due('A-0', 30, { onRow: 'mch_a', inReadModel: 'mch_a' });
    await due('B-0', 20, { inReadModel: 'mch_a' });
    await db.pool.query(`update callback_deliveries set attempts_made = 1, manual_requested = true where order_no = 'A-0'`);

    const claimed = await claim(5);

    const a0 = claimed.find((d) => d.order_no === 'A-0')!;
    // The delivery as it was claimed: attempt 2 is the one now written down, at a manual request.
    expect(a0).toMatchObject({ attempts_made: 1, manual_requested: true, started: true });
    expect(a0.recipient).toEqual({ api_key: 'ak_mch_a', app_secret_enc: Buffer.from([1, 2]), callback_url: 'https://a.example/cb' });
    expect(await attemptRows('A-0')).toEqual([{ attempt: 2, kind: 'manual', url: 'https://a.example/cb', sent_by: 'instance-a', acknowledged: null }]);
    // Counted, and due again after the timeout and the schedule's second delay if it never reports back.
    expect(await deliveryRow('A-0')).toEqual({ attempts_made: 2, manual_requested: false, leased_by: 'instance-a', due_in_s: dueIn(70) });

    expect(claimed.find((d) => d.order_no === 'B-0')).toMatchObject({ attempts_made: 0, started: true, merchant_id: 'mch_a' });
    expect(await attemptRows('B-0')).toEqual([{ attempt: 1, kind: 'scheduled', url: 'https://a.example/cb', sent_by: 'instance-a', acknowledged: null }]);
    expect(await deliveryRow('B-0')).toMatchObject({ attempts_made: 1, due_in_s: dueIn(25) });
  });

  it('starts the attempt of a known merchant that is not provisioned, with no URL and no key', async () => {
    await due('G-0', 5, { onRow: 'mch_gone', inReadModel: 'mch_gone' });

    const [claimed] = await claim(1);

    expect(claimed).toMatchObject({ order_no: 'G-0', started: true, recipient: null });
    expect(await attemptRows('G-0')).toEqual([{ attempt: 1, kind: 'scheduled', url: null, sent_by: 'instance-a', acknowledged: null }]);
  });

  it('leaves the attempt to the sender when it does not know the merchant, or the read model does not show the order final', async () => {
    await provision('mch_a', 'https://a.example/cb');
    await due('U-0', 5, {});
    await due('R-0', 5, { onRow: 'mch_a' }); // no row in the orders read model: a rebuild, say

    const claimed = await claim(2);

    expect(claimed.find((d) => d.order_no === 'U-0')).toMatchObject({ merchant_id: null, started: false, recipient: null });
    expect(claimed.find((d) => d.order_no === 'R-0')).toMatchObject({ merchant_id: 'mch_a', started: false, recipient: null, order: null });
    for (const orderNo of ['U-0', 'R-0']) {
      expect(await attemptRows(orderNo)).toEqual([]);
      expect(await deliveryRow(orderNo)).toMatchObject({ attempts_made: 0, leased_by: 'instance-a', due_in_s: dueIn(-5) });
    }
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

/**
 * A backlog forms whenever merchants' callbacks come slower than their
 * orders end. If claiming cost more as it grew, the senders would fall
 * further behind the longer it got.
 */
describe('a claim behind a long backlog', () => {
  let planned: PlanTestDatabase;

  beforeAll(async () => {
    planned = await planTestDatabase(allMigrations({ eventStore: 'postgres', upstreamSimulator: false }), ['callback_deliveries', 'rm_orders']);
  });

  afterAll(async () => planned.close());

  it('reads what the merchants and the free slots need, not the deliveries of the merchants whose slots are full', async () => {
    const { db, connection } = planned;
    // 30,000 due deliveries of three merchants, each with all its slots in flight, and the newest two of a fourth.
    await db.pool.query(
      `insert into callback_deliveries (order_no, merchant_id, due_at, created_at)
       select 'FULL-' || i, 'mch_full_' || (i % 3), now() - make_interval(secs => 100000 - i), now() from generate_series(1, 30000) i;
       insert into callback_deliveries (order_no, merchant_id, due_at, created_at)
       values ('FREE-0', 'mch_free', now() - interval '2 seconds', now()), ('FREE-1', null, now() - interval '1 second', now());
       insert into rm_orders (order_no, merchant_id, out_trade_no, attempt, stage, sku_id, account_id, account_fields, amount, currency, created_at, completed_at, updated_at)
       select 'FULL-' || i, 'mch_full_' || (i % 3), 'FULL-' || i, 1, 'succeeded', 'sku', 'acc', '{}', 100, 'USD', now(), now(), now() from generate_series(1, 30000) i;
       insert into rm_orders (order_no, merchant_id, out_trade_no, attempt, stage, sku_id, account_id, account_fields, amount, currency, created_at, completed_at, updated_at)
       values ('FREE-1', 'mch_free', 'FREE-1', 1, 'succeeded', 'sku', 'acc', '{}', 100, 'USD', now(), now(), now());
       analyze callback_deliveries; analyze rm_orders`,
    );
    const before = await planned.scans();

    const claimed = await claimDeliveries(connection, {
      slots: 10,
      perMerchant: 8,
      inFlight: new Map([
        ['mch_full_0', 8],
        ['mch_full_1', 8],
        ['mch_full_2', 8],
      ]),
      leaseMs: 60_000,
      instanceId: 'instance-a',
      timeoutMs: 10_000,
      retryDelaysMs: [15_000],
    });

    expect(claimed.map((d) => [d.order_no, d.merchant_id])).toEqual([
      ['FREE-0', 'mch_free'],
      ['FREE-1', 'mch_free'],
    ]);
    const read = scansBetween(before, await planned.scans());
    // A walk of the due deliveries in due order passed over all 30,000 (a block access each, and the order's row for those with no merchant).
    expect(read.callback_deliveries.blocks + read.rm_orders.blocks).toBeLessThan(200);
  });
});
