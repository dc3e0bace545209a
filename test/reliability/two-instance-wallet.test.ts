import { Metrics, METRICS } from '../../src/infrastructure/metrics/metrics';
import { adminClient } from '../back-office/admin-client';
import { FULFILMENT_ENV_EVERY_ORDER_ENDS } from '../support/fulfilment';
import { checkEventInvariants } from '../support/invariants';
import { signedFetch, TestMerchant } from '../support/merchant-fixture';
import { RunningService, startService } from '../support/service';
import { describeEachStore } from '../support/event-stores';
import { TestDatabase } from '../support/test-database';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Each instance keeps the wallets it writes in memory. A refusal must still
 * be decided on the wallet as it is in the log, whichever instance wrote last.
 */
describeEachStore('two instances on one database decide on the same wallet', (store) => {
  let db: TestDatabase;
  let a: RunningService;
  let b: RunningService;

  beforeAll(async () => {
    db = await store.createDatabase();
    [a, b] = await Promise.all([startService(db, FULFILMENT_ENV_EVERY_ORDER_ENDS), startService(db, FULFILMENT_ENV_EVERY_ORDER_ENDS)]);
    const admin = adminClient(a.url);
    expect((await admin('PUT', '/admin/v1/products/gift', { name: 'Gift cards' })).status).toBe(200);
    const sku = { product_id: 'gift', name: 'Voucher', required_account_fields: [], supports_account_check: false, on_shelf: true };
    expect((await admin('PUT', '/admin/v1/skus/voucher', sku)).status).toBe(200);
  });
  afterAll(async () => {
    await Promise.all([a.stop(), b.stop()]);
    await db.drop();
  });

  /** A merchant created through A, priced 1.00 for the voucher, with an empty wallet. */
  async function merchantThroughA(): Promise<TestMerchant> {
    const admin = adminClient(a.url);
    const created = await admin.createMerchant({ name: 'Two-instance merchant', rate_limit_per_second: 10_000 });
    expect((await admin('PUT', `/admin/v1/merchants/${created.merchant_id}/prices/voucher`, { price: '1.00' })).status).toBe(200);
    return { merchantId: created.merchant_id, apiKey: created.api_key, appSecret: created.app_secret };
  }
  const deposit = (through: RunningService, merchant: TestMerchant, reference: string) =>
    adminClient(through.url)('POST', `/admin/v1/merchants/${merchant.merchantId}/deposits`, { amount: '1.00', reference });
  const submit = (through: RunningService, merchant: TestMerchant, outTradeNo: string) =>
    signedFetch(through, merchant, {
      path: '/api/v2/topup/submit',
      body: JSON.stringify({ out_trade_no: outTradeNo, sku_id: 'voucher', account_id: `acct-${outTradeNo}`, account_fields: {} }),
    });

  it('created through A, funded through B, submitted through A: accepted', async () => {
    const merchant = await merchantThroughA();
    expect((await submit(a, merchant, 'AB-0')).body.code).toBe('INSUFFICIENT_BALANCE');
    expect((await deposit(b, merchant, 'wire-1')).status).toBe(201);
    const reply = await submit(a, merchant, 'AB-1');
    expect([reply.status, reply.body.code]).toEqual([202, 'ACCEPTED']);
    // The refused out_trade_no may be submitted again, through either instance.
    expect((await deposit(b, merchant, 'wire-2')).status).toBe(201);
    expect((await submit(a, merchant, 'AB-0')).status).toBe(202);
  });

  it('a mixed load across both: no spurious 402, every order delivered promptly, the ledger adds up', async () => {
    const merchants = await Promise.all(Array.from({ length: 6 }, () => merchantThroughA()));
    const replies = new Map<string, number>();
    const orders: string[] = [];
    // Per merchant, in turn: 1.00 deposited through one instance, then a 1.00
    // order through the other. Each order is covered by the deposit before it,
    // so any 402 would come from a wallet seen out of date.
    await Promise.all(
      merchants.map(async (merchant, m) => {
        for (let i = 0; i < 15; i++) {
          const [depositThrough, submitThrough] = (m + i) % 2 ? [a, b] : [b, a];
          expect((await deposit(depositThrough, merchant, `load-${i}`)).status).toBe(201);
          const reply = await submit(submitThrough, merchant, `MIX-${i}`);
          replies.set(reply.body.code, (replies.get(reply.body.code) ?? 0) + 1);
          if (reply.status === 202) orders.push(reply.body.data.order_no);
        }
      }),
    );
    expect(Object.fromEntries(replies)).toEqual({ ACCEPTED: merchants.length * 15 });
    // Each instance decided on wallets the other had moved since: its appends lost, and it decided again on the other's events.
    const conflicts = async (service: RunningService) => (await service.app.get<Metrics>(METRICS).walletConflicts.get()).values[0]?.value ?? 0;
    expect((await conflicts(a)) + (await conflicts(b))).toBeGreaterThan(0);

    // Both instances fulfil and settle; a settlement refused on a stale wallet would leave orders processing.
    const deadline = Date.now() + 15_000;
    let open = orders;
    while (open.length > 0 && Date.now() < deadline) {
      await sleep(200);
      const { rows } = await a.pool.query<{ order_no: string }>(`select order_no from rm_orders where order_no = any($1) and stage <> 'succeeded'`, [open]);
      open = rows.map((r) => r.order_no);
    }
    expect(open).toEqual([]);
    const facts = await checkEventInvariants(a.store);
    expect(facts.violations).toEqual([]);
    for (const merchant of merchants) expect(facts.wallets.get(merchant.merchantId)).toMatchObject({ balance: 0n, frozen: 0n });
  });
});
