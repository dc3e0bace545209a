import { startUpstreamSimulator, UpstreamSimulator } from '../../src/fulfilment/simulator/upstream-simulator';
import { isoTimestamp } from '../../src/shared/clock';
import { checkEventInvariants } from '../support/invariants';
import { FULFILMENT_ENV } from '../support/fulfilment';
import { provisionMerchant, signedFetch, TestMerchant } from '../support/merchant-fixture';
import { awaitStage, stagesOf, submitOrder } from '../support/reconciliation-orders';
import { RunningService, startService } from '../support/service';
import { createTestDatabase, TestDatabase } from '../support/test-database';
import { until } from '../support/until';
import { adminClient } from './admin-client';

const ORDERS = 500;
/** Each order is 1.20; the wallet starts with 1000.00. Half are delivered (deducted), half refused (released). */
const HALF = ((ORDERS / 2) * 1.2).toFixed(2);
const AFTER = (1000 - (ORDERS / 2) * 1.2).toFixed(2);
/**
 * The upstream delivers or refuses, but only after the service stopped waiting
 * (UPSTREAM_TIMEOUT_MS): every order's result is unknown to it. Its status
 * answers come at once, so the re-query's 500 keep 1 s to spare for a busy
 * machine's stalls (300 ms was too little for console-bulk's 152).
 */
const UPSTREAM_TIMEOUT_MS = 1_000;
const UPSTREAM_DELAY_MS = 1_500;

/**
 * An upstream outage as a clerk meets it: a few hundred orders whose result
 * the service does not know, which the upstream did in fact deliver or
 * refuse. They are cleared with one bulk re-query and one apply, and again
 * with one fetched report and one apply. APPROVAL_THRESHOLD is 100.00, so
 * each apply waits for a second person's approval, and nothing moves until
 * then; the money then moves to the cent as the proposals say, and the
 * ledger's invariants hold.
 */
describe(`reconciliation at scale: ${ORDERS} unknown-result orders cleared in two calls and one approval`, () => {
  let db: TestDatabase;
  let simulator: UpstreamSimulator;
  let service: RunningService;
  let admin: ReturnType<typeof adminClient>;
  let clerk: { token: string; staff_id: string };
  let checker: { token: string; staff_id: string };

  beforeAll(async () => {
    db = await createTestDatabase();
    simulator = await startUpstreamSimulator({ deliveryDelayMs: UPSTREAM_DELAY_MS, failureDelayMs: UPSTREAM_DELAY_MS });
    service = await startService(db, {
      ...FULFILMENT_ENV,
      // The service's default: each order holds a slot for the whole timeout, and 64 slots kept the 500 queued for 8 s.
      FULFILMENT_CONCURRENCY: '256',
      UPSTREAM_TIMEOUT_MS: String(UPSTREAM_TIMEOUT_MS),
      UPSTREAM_URL: simulator.url,
      REQUERY_CONCURRENCY: '16',
      APPROVAL_THRESHOLD: '100.00',
    });
    admin = adminClient(service.url);
    clerk = await admin.createStaff('reconciler', 'Clara Clerk');
    checker = await admin.createStaff('reconciler', 'Chen Checker');
  });
  afterAll(async () => {
    await service.stop();
    await simulator.stop();
    await db.drop();
  });

  const balance = async (m: TestMerchant) => (await signedFetch(service, m, { path: '/api/v2/balance' })).body.data;

  /** Half the orders delivered by the upstream (accounts ending 123), half refused (ending 000), all unknown to the service. */
  async function outage(merchant: TestMerchant): Promise<{ delivered: string[]; refused: string[] }> {
    const delivered: string[] = [];
    const refused: string[] = [];
    for (let i = 0; i < ORDERS; i++) {
      const accountId = `${4000 + i}${i % 2 === 0 ? '123' : '000'}`;
      (i % 2 === 0 ? delivered : refused).push(await submitOrder(service, merchant, accountId));
    }
    await awaitStage(service, [...delivered, ...refused], 'unknown', 60_000);
    // The upstream finishes them after the service gave up.
    await new Promise((r) => setTimeout(r, UPSTREAM_DELAY_MS));
    return { delivered, refused };
  }

  /**
   * The apply over the threshold is a request: nothing moves, the clerk may
   * not approve it, the checker does. Returns the approval as carried out.
   */
  async function awaitApproval(asked: { status: number; body: any }, merchant: TestMerchant) {
    expect(asked.status).toBe(202);
    expect(asked.body).toMatchObject({ code: 'APPROVAL_REQUIRED', data: { kind: 'bulk_resolution', status: 'pending', requested_by_name: 'Clara Clerk' } });
    expect(asked.body.data.amounts).toEqual([{ currency: 'USD', amount: (ORDERS * 1.2).toFixed(2) }]);
    expect(await balance(merchant)).toMatchObject({ balance: '1000.00', frozen_balance: (ORDERS * 1.2).toFixed(2) });
    const id = asked.body.data.approval_id as string;
    const own = await admin('POST', `/admin/v1/approvals/${id}/approve`, { note: 'looks right to me' }, clerk);
    expect([own.status, own.body.code]).toEqual([403, 'SELF_APPROVAL']);
    const approved = await admin('POST', `/admin/v1/approvals/${id}/approve`, { note: 'totals checked against the provider' }, checker);
    expect(approved.status).toBe(200);
    expect(approved.body.data).toMatchObject({ status: 'approved', decided_by_name: 'Chen Checker', carried_out_at: expect.any(String) });
    return approved.body.data;
  }

  async function expectCleared(merchant: TestMerchant, orders: { delivered: string[]; refused: string[] }) {
    await awaitStage(service, orders.delivered, 'succeeded', 60_000);
    await awaitStage(service, orders.refused, 'failed', 60_000);
    // Half deducted and half released at 1.20 each, from a wallet of 1000.00.
    expect(await balance(merchant)).toEqual({ currency: 'USD', balance: AFTER, frozen_balance: '0.00', available_balance: AFTER });
    expect(
      (await admin('GET', '/admin/v1/reconciliation/orders?limit=500')).body.data.orders.filter(
        (o: { merchant_id: string }) => o.merchant_id === merchant.merchantId,
      ),
    ).toEqual([]);
  }

  it('with one bulk re-query and one apply', async () => {
    const merchant = await provisionMerchant(service, { deposit: 100_000n });
    const orders = await outage(merchant);
    expect(await balance(merchant)).toMatchObject({ balance: '1000.00', frozen_balance: (ORDERS * 1.2).toFixed(2) });

    const started = await admin('POST', '/admin/v1/reconciliation/requery', { merchant_id: merchant.merchantId }, clerk);
    expect(started.body.data.total).toBe(ORDERS);
    const done = await until(
      () => admin('GET', `/admin/v1/reconciliation/requery/${started.body.data.job_id}?limit=1`),
      (reply) => reply.body.data?.status === 'done',
      60_000,
      200,
    );
    expect(done.body.data).toMatchObject({ total: ORDERS, done: ORDERS });
    expect(done.body.data).toMatchObject({ upstream: { delivered: ORDERS / 2, refused: ORDERS / 2 }, proposals: { success: ORDERS / 2, failed: ORDERS / 2 } });
    expect(simulator.statusInFlight.peak).toBeLessThanOrEqual(16);

    const asked = await admin('POST', `/admin/v1/reconciliation/requery/${started.body.data.job_id}/apply`, { note: 'outage of the 22nd: re-queried' }, clerk);
    const approval = await awaitApproval(asked, merchant);
    expect(approval.result).toMatchObject({ ok: true, detail: { counts: { applied: ORDERS, already_applied: 0, skipped: 0, refused: 0 } } });
    expect(approval.result.detail.amounts).toEqual([{ currency: 'USD', deducted: HALF, released: HALF }]);
    // Each order went as the upstream said, and its resolution names the clerk, the checker and the evidence.
    const job = await admin('GET', `/admin/v1/reconciliation/requery/${started.body.data.job_id}?limit=1000`);
    const proposals = new Map<string, string>(job.body.data.results.map((o: { order_no: string; proposal: string }) => [o.order_no, o.proposal]));
    expect(orders.delivered.every((n) => proposals.get(n) === 'success') && orders.refused.every((n) => proposals.get(n) === 'failed')).toBe(true);
    // The job's view names who applied and who approved, beside each order.
    expect(job.body.data.results[0].applied).toMatchObject({ result: 'applied', applied_by_name: 'Clara Clerk', approved_by_name: 'Chen Checker' });
    await expectCleared(merchant, orders);
    const resolved = (await service.store.readStream(`order-${orders.refused[0]}`)).find((e) => e.type === 'OrderResolved');
    expect(resolved?.data).toMatchObject({
      outcome: 'failed',
      resolvedBy: clerk.staff_id,
      approvedBy: checker.staff_id,
      evidence: { source: 'requery', jobId: started.body.data.job_id, upstream: { status: 'refused' } },
    });
  });

  it('with one fetched report and one apply', async () => {
    const merchant = await provisionMerchant(service, { deposit: 100_000n });
    const from = new Date();
    const orders = await outage(merchant);
    const to = new Date();

    const fetched = await admin('POST', '/admin/v1/reconciliation/reports/fetch', { from: isoTimestamp(from), to: isoTimestamp(to) }, clerk);
    expect(fetched.status).toBe(201);
    expect(fetched.body.data).toMatchObject({
      lines: ORDERS,
      valid: true,
      counts: { resolvable: ORDERS, matched: 0, exceptions: 0, missing: 0 },
      proposals: { success: ORDERS / 2, failed: ORDERS / 2 },
    });

    const asked = await admin(
      'POST',
      `/admin/v1/reconciliation/reports/${fetched.body.data.report_id}/apply`,
      { note: 'outage of the 22nd: provider report' },
      clerk,
    );
    const approval = await awaitApproval(asked, merchant);
    expect(approval.result.detail.counts).toEqual({ applied: ORDERS, already_applied: 0, skipped: 0, refused: 0 });
    expect(approval.result.detail.amounts).toEqual([{ currency: 'USD', deducted: HALF, released: HALF }]);
    await expectCleared(merchant, orders);
    // Applying again changes nothing: every order is already resolved by this decision.
    const again = await admin(
      'POST',
      `/admin/v1/reconciliation/reports/${fetched.body.data.report_id}/apply`,
      { note: 'outage of the 22nd: provider report' },
      clerk,
    );
    expect(again.status).toBe(200);
    expect(again.body.data.counts.applied).toBe(0);
    expect(await balance(merchant)).toMatchObject({ balance: AFTER, frozen_balance: '0.00' });

    // Every resolution carries its report line.
    const stages = await stagesOf(service, orders.delivered.slice(0, 1));
    expect([...stages.values()]).toEqual(['succeeded']);
    const resolved = (await service.store.readStream(`order-${orders.delivered[0]}`)).find((e) => e.type === 'OrderResolved');
    expect(resolved?.data.evidence).toMatchObject({
      source: 'report',
      reportId: fetched.body.data.report_id,
      status: 'delivered',
      reference: `SIM-${orders.delivered[0]}`,
    });
    expect((await checkEventInvariants(service.store)).violations).toEqual([]);
  });
});
