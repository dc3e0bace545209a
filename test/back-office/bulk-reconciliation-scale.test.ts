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

const ORDERS = 200;
/** The upstream delivers or refuses, but only after the service stopped waiting: every order's result is unknown to it. */
const UPSTREAM_DELAY_MS = 700;

/**
 * An upstream outage as a clerk meets it: a few hundred orders whose result
 * the service does not know, which the upstream did in fact deliver or
 * refuse. They are cleared with one bulk re-query and one apply, and again
 * with one fetched report and one apply; the money moves to the cent as the
 * proposals say, and the ledger's invariants hold.
 */
describe(`reconciliation at scale: ${ORDERS} unknown-result orders cleared in two calls`, () => {
  let db: TestDatabase;
  let simulator: UpstreamSimulator;
  let service: RunningService;
  let admin: ReturnType<typeof adminClient>;

  beforeAll(async () => {
    db = await createTestDatabase();
    simulator = await startUpstreamSimulator({ deliveryDelayMs: UPSTREAM_DELAY_MS, failureDelayMs: UPSTREAM_DELAY_MS });
    service = await startService(db, {
      ...FULFILMENT_ENV,
      FULFILMENT_CONCURRENCY: '64',
      UPSTREAM_TIMEOUT_MS: '300',
      UPSTREAM_URL: simulator.url,
      REQUERY_CONCURRENCY: '16',
    });
    admin = adminClient(service.url);
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

  async function expectCleared(merchant: TestMerchant, orders: { delivered: string[]; refused: string[] }) {
    await awaitStage(service, orders.delivered, 'succeeded', 60_000);
    await awaitStage(service, orders.refused, 'failed', 60_000);
    // 100 deducted and 100 released at 1.20 each, from a wallet of 1000.00 that had 240.00 frozen.
    expect(await balance(merchant)).toEqual({ currency: 'USD', balance: '880.00', frozen_balance: '0.00', available_balance: '880.00' });
    expect(
      (await admin('GET', '/admin/v1/reconciliation/orders?limit=500')).body.data.orders.filter(
        (o: { merchant_id: string }) => o.merchant_id === merchant.merchantId,
      ),
    ).toEqual([]);
  }

  it('with one bulk re-query and one apply', async () => {
    const merchant = await provisionMerchant(service, { deposit: 100_000n });
    const orders = await outage(merchant);
    expect(await balance(merchant)).toMatchObject({ balance: '1000.00', frozen_balance: '240.00' });

    const started = await admin('POST', '/admin/v1/reconciliation/requery', { merchant_id: merchant.merchantId });
    expect(started.body.data.total).toBe(ORDERS);
    const done = await until(
      () => admin('GET', `/admin/v1/reconciliation/requery/${started.body.data.job_id}?limit=1`),
      (reply) => reply.body.data?.status === 'done',
      60_000,
      200,
    );
    expect(done.body.data).toMatchObject({ upstream: { delivered: ORDERS / 2, refused: ORDERS / 2 }, proposals: { success: ORDERS / 2, failed: ORDERS / 2 } });
    expect(simulator.statusInFlight.peak).toBeLessThanOrEqual(16);

    const applied = await admin('POST', `/admin/v1/reconciliation/requery/${started.body.data.job_id}/apply`, { note: 'outage of the 22nd: re-queried' });
    expect(applied.status).toBe(200);
    expect(applied.body.data.counts).toEqual({ applied: ORDERS, already_applied: 0, skipped: 0, refused: 0 });
    expect(applied.body.data.amounts).toEqual([{ currency: 'USD', deducted: '120.00', released: '120.00' }]);
    // Each order went as the upstream said.
    const proposals = new Map<string, string>(applied.body.data.orders.map((o: { order_no: string; outcome: string }) => [o.order_no, o.outcome]));
    expect(orders.delivered.every((n) => proposals.get(n) === 'success') && orders.refused.every((n) => proposals.get(n) === 'failed')).toBe(true);
    await expectCleared(merchant, orders);
  });

  it('with one fetched report and one apply', async () => {
    const merchant = await provisionMerchant(service, { deposit: 100_000n });
    const from = new Date();
    const orders = await outage(merchant);
    const to = new Date();

    const fetched = await admin('POST', '/admin/v1/reconciliation/reports/fetch', { from: isoTimestamp(from), to: isoTimestamp(to) });
    expect(fetched.status).toBe(201);
    expect(fetched.body.data).toMatchObject({
      lines: ORDERS,
      valid: true,
      counts: { resolvable: ORDERS, matched: 0, exceptions: 0, missing: 0 },
      proposals: { success: ORDERS / 2, failed: ORDERS / 2 },
    });

    const applied = await admin('POST', `/admin/v1/reconciliation/reports/${fetched.body.data.report_id}/apply`, {
      note: 'outage of the 22nd: provider report',
    });
    expect(applied.body.data.counts).toEqual({ applied: ORDERS, already_applied: 0, skipped: 0, refused: 0 });
    expect(applied.body.data.amounts).toEqual([{ currency: 'USD', deducted: '120.00', released: '120.00' }]);
    await expectCleared(merchant, orders);

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
