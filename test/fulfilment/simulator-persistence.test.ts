import { adminClient } from '../back-office/admin-client';
import { awaitFinal, FULFILMENT_ENV } from '../support/fulfilment';
import { provisionMerchant, signedFetch, TestMerchant } from '../support/merchant-fixture';
import { RunningService, startService } from '../support/service';
import { createTestDatabase, TestDatabase } from '../support/test-database';
import { PostgresSimulatorStore } from '../../src/fulfilment/simulator/simulator-store';

/**
 * The built-in simulator (no UPSTREAM_URL) keeps what it received in the
 * service's database, so a re-query after a restart tells reconciliation
 * staff what it told them before, never "not received" for an order it took.
 */
describe('the in-process upstream simulator remembers its orders across a service restart', () => {
  let db: TestDatabase;
  let service: RunningService;
  let merchant: TestMerchant;
  let seq = 0;

  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(async () => {
    await service?.stop();
    await db.drop();
  });

  const submit = async (accountId: string) => {
    const reply = await signedFetch(service, merchant, {
      path: '/api/v2/topup/submit',
      body: JSON.stringify({ out_trade_no: `SP-${++seq}`, sku_id: 'mlbb-86', account_id: accountId, account_fields: { server_id: '1' } }),
    });
    expect(reply.status).toBe(202);
    return reply.body.data.order_no as string;
  };
  const requery = async (orderNo: string) => {
    const reply = await adminClient(service.url)('POST', `/admin/v1/reconciliation/orders/${orderNo}/requery`, {});
    expect(reply.status).toBe(200);
    return reply.body.data.upstream as { status: string };
  };

  it('a ...999 order answers pending after the restart, a delivered one delivered, and one it never saw not_received', async () => {
    // A short delivery and a long timeout: the delivered order must never time out on a slow machine, the hanging one soon does.
    service = await startService(db, { ...FULFILMENT_ENV, UPSTREAM_SIM_DELAY_MS: '20', UPSTREAM_TIMEOUT_MS: '1500' });
    merchant = await provisionMerchant(service);
    const hanging = await submit('4242999');
    const delivered = await submit('4242123');
    for (let i = 0; i < 100; i++) {
      const { rows } = await service.pool.query('select stage from rm_orders where order_no = $1', [hanging]);
      if (rows[0]?.stage === 'unknown') break;
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(await awaitFinal(service, merchant, delivered)).toMatchObject({ status: 'success' });
    expect(await requery(hanging)).toMatchObject({ status: 'pending' });

    await service.stop();
    // Fulfilment off after the restart: nothing is sent again, so the simulator can only answer from what it kept.
    service = await startService(db, { ...FULFILMENT_ENV, FULFILMENT_CONCURRENCY: '0' });

    expect(await requery(hanging)).toMatchObject({ status: 'pending' });
    expect(await requery(delivered)).toMatchObject({ status: 'delivered' });
    const neverSent = await submit('4242777');
    expect(await requery(neverSent)).toEqual({ status: 'not_received' });
  });

  it('keeps the first of top-ups recorded together, one of them twice for the same order', async () => {
    service ??= await startService(db);
    const store = new PostgresSimulatorStore(service.pool);
    const topUp = (reference: string) => ({ reply: { status: 'delivered' as const, reference }, readyAt: Date.now() });
    const existing = `SIM-existing-${Date.now()}`;
    await store.record(existing, topUp('earlier'));
    const twice = `SIM-twice-${Date.now()}`;
    const fresh = `SIM-fresh-${Date.now()}`;
    const outcomes = await Promise.all([
      store.record(existing, topUp('late')),
      store.record(twice, topUp('first')),
      store.record(twice, topUp('second')),
      store.record(fresh, topUp('only')),
    ]);
    expect(outcomes.map((o) => [o.first, (o.kept.reply as { reference: string }).reference])).toEqual([
      [false, 'earlier'],
      [true, 'first'],
      [false, 'first'],
      [true, 'only'],
    ]);
    expect((await store.find(twice))?.reply).toEqual({ status: 'delivered', reference: 'first' });
    expect(await store.find(`SIM-never-${Date.now()}`)).toBeUndefined();
  });
});
