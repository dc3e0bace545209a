import { startUpstreamSimulator, UpstreamSimulator } from '../../src/fulfilment/simulator/upstream-simulator';
import { ResolveOrder } from '../../src/ledger/commands/resolve-order/resolve-order.command';
import { checkEventInvariants } from '../support/invariants';
import { awaitFinal, FULFILMENT_ENV_SOME_UNKNOWN } from '../support/fulfilment';
import { provisionMerchant, signedFetch, TestMerchant } from '../support/merchant-fixture';
import { RunningService, startService } from '../support/service';
import { createTestDatabase, TestDatabase } from '../support/test-database';

describe('fulfilment through the merchant API, against the simulator over HTTP', () => {
  let db: TestDatabase;
  let simulator: UpstreamSimulator;
  let service: RunningService;
  let merchant: TestMerchant;
  let seq = 0;

  beforeAll(async () => {
    db = await createTestDatabase();
    simulator = await startUpstreamSimulator({ deliveryDelayMs: 20 });
    service = await startService(db, { ...FULFILMENT_ENV_SOME_UNKNOWN, UPSTREAM_URL: simulator.url });
    merchant = await provisionMerchant(service);
  });
  afterAll(async () => {
    await service.stop();
    await simulator.stop();
    await db.drop();
  });

  const submit = async (accountId: string) => {
    const reply = await signedFetch(service, merchant, {
      path: '/api/v2/topup/submit',
      body: JSON.stringify({ out_trade_no: `F-${++seq}`, sku_id: 'mlbb-86', account_id: accountId, account_fields: { server_id: '1' } }),
    });
    expect(reply.status).toBe(202);
    return reply.body.data.order_no as string;
  };
  const balance = async () => (await signedFetch(service, merchant, { path: '/api/v2/balance' })).body.data;
  const stageOf = async (orderNo: string) => (await service.pool.query('select stage from rm_orders where order_no = $1', [orderNo])).rows[0]?.stage;

  it('an ordinary account: success, the amount deducted, nothing left frozen', async () => {
    const before = await balance();
    const orderNo = await submit('12345678');
    const order = await awaitFinal(service, merchant, orderNo);
    expect(order).toMatchObject({ status: 'success', fail_code: null, fail_reason: null, completed_at: expect.stringMatching(/\+00:00$/) });
    const after = await balance();
    expect(Number(before.balance) - Number(after.balance)).toBeCloseTo(1.2, 5);
    expect(after.frozen_balance).toBe(before.frozen_balance);
    expect(simulator.deliveries.get(orderNo)).toBe(1);
  });

  it("reads the order's events once in its whole life: the worker's read before the attempt decides the outcome too", async () => {
    const reads = jest.spyOn(service.store, 'readStream');
    try {
      const orderNo = await submit('12345678');
      for (let i = 0; i < 200 && (await stageOf(orderNo)) !== 'succeeded'; i++) await new Promise((r) => setTimeout(r, 25));
      expect(await stageOf(orderNo)).toBe('succeeded');
      await service.catchUp();
      expect(reads.mock.calls.filter(([stream]) => stream === `order-${orderNo}`)).toHaveLength(1);
    } finally {
      reads.mockRestore();
    }
  });

  it.each([
    ['000', 'INVALID_ACCOUNT'],
    ['001', 'UPSTREAM_REJECTED'],
  ])('account ending %s: failed with %s, the money released', async (suffix, failCode) => {
    const before = await balance();
    const orderNo = await submit(`4242${suffix}`);
    const order = await awaitFinal(service, merchant, orderNo);
    expect(order).toMatchObject({ status: 'failed', fail_code: failCode, fail_reason: expect.any(String) });
    expect(await balance()).toEqual(before);
    expect(simulator.deliveries.get(orderNo)).toBeUndefined();
  });

  it('account ending 503: success after retries with the same key', async () => {
    const orderNo = await submit('4242503');
    expect(await awaitFinal(service, merchant, orderNo)).toMatchObject({ status: 'success' });
    expect(simulator.requests.get(orderNo)).toBe(3);
    expect(simulator.deliveries.get(orderNo)).toBe(1);
    const attempts = (await service.store.readStream(`order-${orderNo}`)).filter((e) => e.type === 'OrderSentUpstream');
    expect(attempts).toHaveLength(3);
  });

  it('account ending 999: stays processing with the money frozen, in the reconciliation queue; resolutions settle it once', async () => {
    const before = await balance();
    const toSucceed = await submit('4242999');
    const toFail = await submit('5252999');
    for (const orderNo of [toSucceed, toFail]) {
      for (let i = 0; i < 100 && (await stageOf(orderNo)) !== 'unknown'; i++) await new Promise((r) => setTimeout(r, 50));
      expect(await stageOf(orderNo)).toBe('unknown');
    }
    expect(await awaitFinal(service, merchant, toSucceed, 0)).toMatchObject({ status: 'processing' });
    const held = await balance();
    expect(Number(held.frozen_balance) - Number(before.frozen_balance)).toBeCloseTo(2.4, 5);
    const evidence = await service.pool.query('select unknown_reason, unknown_evidence from rm_orders where order_no = $1', [toSucceed]);
    expect(evidence.rows[0].unknown_reason).toMatch(/no reply within 1000 ms/);

    await service.commands.execute(new ResolveOrder(toSucceed, 'success', 'staff-1', 'provider report shows delivery'));
    await service.commands.execute(new ResolveOrder(toFail, 'failed', 'staff-1', 'provider confirms nothing was delivered'));
    expect(await awaitFinal(service, merchant, toSucceed)).toMatchObject({ status: 'success' });
    expect(await awaitFinal(service, merchant, toFail)).toMatchObject({ status: 'failed', fail_code: 'RESOLVED_FAILED' });
    const after = await balance();
    expect(Number(before.balance) - Number(after.balance)).toBeCloseTo(1.2, 5);
    expect(after.frozen_balance).toBe(before.frozen_balance);
  });

  it("deletes every job once the order's upstream part is over (delivered, refused, unknown, resolved): the queue is empty", async () => {
    await service.catchUp();
    const { rows: orders } = await service.pool.query<{ stage: string }>('select stage from rm_orders');
    // One order per submit above, each ended, and no job left for any of them.
    expect(orders).toHaveLength(seq);
    expect(new Set(orders.map((r) => r.stage))).toEqual(new Set(['succeeded', 'failed']));
    expect((await service.pool.query('select order_no from fulfilment_jobs')).rows).toEqual([]);
  });

  it('leaves the ledger consistent: every movement once', async () => {
    const facts = await checkEventInvariants(service.store);
    expect(facts.violations).toEqual([]);
    for (const [orderNo, count] of simulator.deliveries) expect([orderNo, count]).toEqual([orderNo, 1]);
  });
});
