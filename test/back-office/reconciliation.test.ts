import { startUpstreamSimulator, UpstreamSimulator } from '../../src/fulfilment/simulator/upstream-simulator';
import { checkEventInvariants } from '../support/invariants';
import { awaitFinal, FULFILMENT_ENV_SOME_UNKNOWN } from '../support/fulfilment';
import { provisionMerchant, signedFetch, TestMerchant } from '../support/merchant-fixture';
import { RunningService, startService } from '../support/service';
import { createTestDatabase, TestDatabase } from '../support/test-database';
import { adminClient, failure } from './admin-client';

describe('reconciliation: unknown upstream results wait for staff', () => {
  let db: TestDatabase;
  let simulator: UpstreamSimulator;
  let service: RunningService;
  let merchant: TestMerchant;
  let admin: ReturnType<typeof adminClient>;
  let reconciler: { staff_id: string; token: string };
  let auditor: { staff_id: string; token: string };
  let seq = 0;

  beforeAll(async () => {
    db = await createTestDatabase();
    simulator = await startUpstreamSimulator({ deliveryDelayMs: 10 });
    service = await startService(db, { ...FULFILMENT_ENV_SOME_UNKNOWN, UPSTREAM_URL: simulator.url });
    merchant = await provisionMerchant(service);
    admin = adminClient(service.url);
    reconciler = await admin.createStaff('reconciler', 'Rita');
    auditor = await admin.createStaff('auditor', 'Aldo');
  });
  afterAll(async () => {
    expect((await checkEventInvariants(service.store)).violations).toEqual([]);
    await service.stop();
    await simulator.stop();
    await db.drop();
  });

  const as = (staff: { token: string }) => ({ token: staff.token });
  const balance = async () => (await signedFetch(service, merchant, { path: '/api/v2/balance' })).body.data;
  async function orderWithUnknownResult(): Promise<string> {
    const reply = await signedFetch(service, merchant, {
      path: '/api/v2/topup/submit',
      body: JSON.stringify({ out_trade_no: `R-${++seq}`, sku_id: 'mlbb-86', account_id: `31${seq}999`, account_fields: { server_id: '9' } }),
    });
    const orderNo = reply.body.data.order_no as string;
    for (let i = 0; i < 100; i++) {
      const { rows } = await service.pool.query('select stage from rm_orders where order_no = $1', [orderNo]);
      if (rows[0]?.stage === 'unknown') return orderNo;
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error(`${orderNo} never reached the reconciliation queue`);
  }

  it('lists the queue with age, reason, evidence and attempts, oldest first', async () => {
    const first = await orderWithUnknownResult();
    const second = await orderWithUnknownResult();
    const reply = await admin('GET', '/admin/v1/reconciliation/orders', undefined, as(reconciler));
    expect(reply.status).toBe(200);
    const orders = reply.body.data.orders as Record<string, unknown>[];
    expect(orders.map((o) => o.order_no)).toEqual(expect.arrayContaining([first, second]));
    expect(orders.findIndex((o) => o.order_no === first)).toBeLessThan(orders.findIndex((o) => o.order_no === second));
    expect(orders.find((o) => o.order_no === first)).toMatchObject({
      merchant_id: merchant.merchantId,
      amount: '1.20',
      upstream_attempts: 1,
      reason: expect.stringContaining('no reply within 1000 ms'),
      evidence: expect.any(String),
      age_seconds: expect.any(Number),
      result_unknown_at: expect.stringMatching(/\+00:00$/),
    });
    expect(reply.body.data.total).toBeGreaterThanOrEqual(2);
    const page = await admin('GET', '/admin/v1/reconciliation/orders?limit=1&offset=1', undefined, as(reconciler));
    expect(page.body.data.orders).toHaveLength(1);
  });

  it('allows reconcilers and admins; auditors may read orders but not the queue', async () => {
    expect((await admin('GET', '/admin/v1/reconciliation/orders')).status).toBe(200);
    expect((await admin('GET', '/admin/v1/reconciliation/orders', undefined, as(auditor))).body).toEqual(failure('FORBIDDEN'));
    expect((await admin('GET', '/admin/v1/reconciliation/orders', undefined, { token: null })).status).toBe(401);
    const orderNo = await orderWithUnknownResult();
    const detail = await admin('GET', `/admin/v1/orders/${orderNo}`, undefined, as(auditor));
    expect(detail.status).toBe(200);
    expect(detail.body.data).toMatchObject({ stage: 'unknown', status: 'processing' });
    expect(detail.body.data.history.map((e: { type: string }) => e.type)).toEqual(['OrderPlaced', 'OrderAccepted', 'OrderSentUpstream', 'OrderResultUnknown']);
    expect((await admin('POST', `/admin/v1/reconciliation/orders/${orderNo}/resolve`, { outcome: 'success', note: 'x' }, as(auditor))).status).toBe(403);
  });

  it('re-queries the upstream without settling anything', async () => {
    const orderNo = await orderWithUnknownResult();
    const reply = await admin('POST', `/admin/v1/reconciliation/orders/${orderNo}/requery`, {}, as(reconciler));
    expect(reply.status).toBe(200);
    // The simulator took the order and never answers it: pending, which argues for neither outcome.
    expect(reply.body.data).toMatchObject({ order_no: orderNo, stage: 'unknown', upstream: { status: 'pending' } });
  });

  it('a resolution to success deducts once and records who, when and why', async () => {
    const orderNo = await orderWithUnknownResult();
    const before = await balance();
    const reply = await admin(
      'POST',
      `/admin/v1/reconciliation/orders/${orderNo}/resolve`,
      { outcome: 'success', note: 'provider statement line 42' },
      as(reconciler),
    );
    expect(reply.status).toBe(200);
    expect(reply.body.data).toMatchObject({ stage: 'succeeded', status: 'success' });
    const resolved = reply.body.data.history.find((e: { type: string }) => e.type === 'OrderResolved');
    expect(resolved.data).toMatchObject({ outcome: 'success', resolved_by: reconciler.staff_id, note: 'provider statement line 42', at: expect.any(String) });
    expect(reply.body.data.resolution).toEqual({
      outcome: 'success',
      resolved_by: reconciler.staff_id,
      resolved_by_name: 'Rita',
      resolved_at: resolved.data.at,
      note: 'provider statement line 42',
    });
    expect(await awaitFinal(service, merchant, orderNo)).toMatchObject({ status: 'success' });
    const after = await balance();
    expect(Number(before.balance) - Number(after.balance)).toBeCloseTo(1.2, 5);
    expect(Number(before.frozen_balance) - Number(after.frozen_balance)).toBeCloseTo(1.2, 5);
    // The wallet's deduction says it was a staff decision, and so does the auditors' statement.
    const deductions = (await service.store.readStream(`wallet-${merchant.merchantId}`)).filter(
      (e) => e.type === 'FrozenFundsDeducted' && e.data.orderNo === orderNo,
    );
    expect(deductions.map((e) => e.data.reason)).toEqual(['RESOLVED_SUCCESS']);
    const statement = await admin('GET', `/admin/v1/wallets/${merchant.merchantId}/statement?limit=100000`);
    const line = statement.body.data.lines.find((l: { type: string; order_no: string }) => l.type === 'FrozenFundsDeducted' && l.order_no === orderNo);
    expect(line).toMatchObject({ reason: 'RESOLVED_SUCCESS', amount: '1.20' });
    const audit = await service.pool.query(`select staff_id, action from back_office_audit where target = $1`, [`order:${orderNo}`]);
    expect(audit.rows).toEqual([{ staff_id: reconciler.staff_id, action: 'order.resolved' }]);
    const queue = await admin('GET', '/admin/v1/reconciliation/orders?limit=500', undefined, as(reconciler));
    expect(queue.body.data.orders.map((o: { order_no: string }) => o.order_no)).not.toContain(orderNo);
  });

  it('a resolution to failed releases once, with fail_code RESOLVED_FAILED', async () => {
    const orderNo = await orderWithUnknownResult();
    const before = await balance();
    const reply = await admin('POST', `/admin/v1/reconciliation/orders/${orderNo}/resolve`, { outcome: 'failed', note: 'not delivered' });
    expect(reply.body.data).toMatchObject({ stage: 'failed', fail_code: 'RESOLVED_FAILED' });
    expect(await awaitFinal(service, merchant, orderNo)).toMatchObject({ status: 'failed', fail_code: 'RESOLVED_FAILED' });
    const after = await balance();
    expect(after.balance).toBe(before.balance);
    expect(Number(before.frozen_balance) - Number(after.frozen_balance)).toBeCloseTo(1.2, 5);
  });

  it('refuses to resolve a final order, an order not in the queue, or no order, with clear codes', async () => {
    const orderNo = await orderWithUnknownResult();
    await admin('POST', `/admin/v1/reconciliation/orders/${orderNo}/resolve`, { outcome: 'failed', note: 'no' }, as(reconciler));
    const again = await admin('POST', `/admin/v1/reconciliation/orders/${orderNo}/resolve`, { outcome: 'success', note: 'changed my mind' }, as(reconciler));
    expect(again.status).toBe(409);
    expect(again.body).toEqual(failure('ORDER_ALREADY_FINAL'));

    const delivered = await signedFetch(service, merchant, {
      path: '/api/v2/topup/submit',
      body: JSON.stringify({ out_trade_no: `R-${++seq}`, sku_id: 'mlbb-86', account_id: '4567', account_fields: { server_id: '9' } }),
    });
    const deliveredNo = delivered.body.data.order_no;
    await awaitFinal(service, merchant, deliveredNo);
    expect((await admin('POST', `/admin/v1/reconciliation/orders/${deliveredNo}/resolve`, { outcome: 'failed', note: 'x' })).body).toEqual(
      failure('ORDER_ALREADY_FINAL'),
    );

    const missing = await admin('POST', '/admin/v1/reconciliation/orders/TNOSUCHORDER0000000000000000/resolve', { outcome: 'failed', note: 'x' });
    expect(missing.status).toBe(404);
    expect(missing.body).toEqual(failure('ORDER_NOT_FOUND'));
  });

  it('validates the resolution', async () => {
    const path = `/admin/v1/reconciliation/orders/${await orderWithUnknownResult()}/resolve`;
    expect((await admin('POST', path, { outcome: 'maybe', note: 'x' })).body).toEqual(failure('VALIDATION_FAILED', 'outcome'));
    expect((await admin('POST', path, { outcome: 'success' })).body).toEqual(failure('MISSING_REQUIRED_FIELD', 'note'));
    expect((await admin('POST', path, { outcome: 'success', note: '' })).body).toEqual(failure('VALIDATION_FAILED', 'note'));
    expect((await admin('GET', '/admin/v1/reconciliation/orders?limit=9999')).body).toEqual(failure('VALIDATION_FAILED', 'limit'));
  });
});
