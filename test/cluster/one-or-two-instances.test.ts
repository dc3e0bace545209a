import { verifyCallback } from '../../src/merchant-client/signing';
import { adminClient } from '../back-office/admin-client';
import { CALLBACK_ENV, callbackEndpoint } from '../support/callback-endpoint';
import { Cluster, startCluster } from '../support/cluster';
import { awaitFinal, FULFILMENT_ENV_EVERY_ORDER_ENDS } from '../support/fulfilment';
import { scrapeMetrics, total } from '../support/prometheus-text';
import { signedFetch, TestMerchant } from '../support/merchant-fixture';
import { describeEachStore } from '../support/event-stores';
import { TestDatabase } from '../support/test-database';
import { intoSecond } from '../support/until';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * The same end-to-end checks through one instance and through two behind a
 * round-robin proxy. Requests alternate, so with two instances a change made
 * through one is always followed by a request through the other: every answer
 * must be the one a single instance gives.
 */
describeEachStore('one database behind a round-robin proxy', (store) =>
  describe.each([1, 2])('%i instance(s)', (size) => {
    let db: TestDatabase;
    let cluster: Cluster;
    let admin: ReturnType<typeof adminClient>;

    beforeAll(async () => {
      db = await store.createDatabase();
      cluster = await startCluster(db, size, {
        ...FULFILMENT_ENV_EVERY_ORDER_ENDS,
        ...CALLBACK_ENV,
        // Few slots per instance and a short upstream delay: every instance gets a share of the work.
        FULFILMENT_CONCURRENCY: '2',
        CALLBACK_CONCURRENCY: '2',
        UPSTREAM_SIM_DELAY_MS: '20',
      });
      admin = adminClient(cluster.url);
      expect((await admin('PUT', '/admin/v1/products/gift', { name: 'Gift cards' })).status).toBe(200);
      expect((await admin('PUT', '/admin/v1/skus/voucher', VOUCHER)).status).toBe(200);
    }, 60_000);
    afterAll(async () => {
      await cluster?.stop();
      await db?.drop();
    });

    const VOUCHER = { product_id: 'gift', name: 'Voucher', required_account_fields: [], supports_account_check: false, on_shelf: true };

    /** A merchant with the voucher priced at `price` and `deposit` in its wallet. */
    async function newMerchant({ price = '1.00', deposit = '100.00', ...fields }: Record<string, unknown> = {}): Promise<TestMerchant> {
      const created = await admin.createMerchant({ name: 'Cluster merchant', rate_limit_per_second: 10_000, ...fields });
      expect((await admin('PUT', `/admin/v1/merchants/${created.merchant_id}/prices/voucher`, { price })).status).toBe(200);
      if (deposit !== '0.00') expect((await depositTo(created.merchant_id, deposit as string, 'opening float')).status).toBe(201);
      return { merchantId: created.merchant_id, apiKey: created.api_key, appSecret: created.app_secret };
    }
    const depositTo = (merchantId: string, amount: string, reference: string) =>
      admin('POST', `/admin/v1/merchants/${merchantId}/deposits`, { amount, reference });
    const patch = async (merchant: TestMerchant, body: Record<string, unknown>) =>
      expect((await admin('PATCH', `/admin/v1/merchants/${merchant.merchantId}`, body)).status).toBe(200);

    const call = (merchant: TestMerchant, path: string, body?: object) =>
      signedFetch(cluster, merchant, { path, body: body === undefined ? undefined : JSON.stringify(body) });
    const balance = async (merchant: TestMerchant) => {
      const reply = await call(merchant, '/api/v2/balance');
      return `${reply.status} ${reply.body.code}`;
    };
    const submitBody = (outTradeNo: string, accountId = '12345678') => ({
      out_trade_no: outTradeNo,
      sku_id: 'voucher',
      account_id: accountId,
      account_fields: {},
    });
    /** The amount of an accepted order, else the error code. */
    const submit = async (merchant: TestMerchant, outTradeNo: string, accountId?: string) => {
      const reply = await call(merchant, '/api/v2/topup/submit', submitBody(outTradeNo, accountId));
      return reply.status === 202 ? reply.body.data.amount : reply.body.code;
    };

    it('a merchant created through one instance is served through the next at once', async () => {
      const merchant = await newMerchant({ deposit: '0.00' });
      expect(await balance(merchant)).toBe('200 OK');
    });

    it('suspension and reactivation govern the very next request', async () => {
      const merchant = await newMerchant();
      for (let round = 0; round < 3; round++) {
        expect(await balance(merchant)).toBe('200 OK');
        await patch(merchant, { status: 'suspended' });
        expect(await balance(merchant)).toBe('403 MERCHANT_SUSPENDED');
        expect(await submit(merchant, `S-${round}`)).toBe('MERCHANT_SUSPENDED');
        await patch(merchant, { status: 'active' });
        expect(await balance(merchant)).toBe('200 OK');
      }
    });

    it('a whitelist change governs the very next request', async () => {
      const merchant = await newMerchant();
      expect(await balance(merchant)).toBe('200 OK');
      await patch(merchant, { ip_whitelist: ['203.0.113.7'] });
      expect(await balance(merchant)).toBe('403 IP_NOT_ALLOWED');
      expect(await balance(merchant)).toBe('403 IP_NOT_ALLOWED');
      await patch(merchant, { ip_whitelist: ['127.0.0.1', '::1'] });
      expect(await balance(merchant)).toBe('200 OK');
      await patch(merchant, { ip_whitelist: [] });
      expect(await balance(merchant)).toBe('200 OK');
    });

    it('a rate-limit change governs the very next request', async () => {
      const merchant = await newMerchant();
      await patch(merchant, { rate_limit_per_second: 2 });
      // Start early in a second, so the three requests share it.
      await intoSecond(0, 300);
      expect([await balance(merchant), await balance(merchant), await balance(merchant)]).toEqual(['200 OK', '200 OK', '429 RATE_LIMITED']);
      await patch(merchant, { rate_limit_per_second: 1000 });
      expect(await balance(merchant)).toBe('200 OK');
    });

    it('a price change governs the very next submit', async () => {
      const merchant = await newMerchant();
      expect(await submit(merchant, 'P-1')).toBe('1.00');
      expect((await admin('PUT', `/admin/v1/merchants/${merchant.merchantId}/prices/voucher`, { price: '2.50' })).status).toBe(200);
      expect(await submit(merchant, 'P-2')).toBe('2.50');
      expect((await admin('PUT', `/admin/v1/merchants/${merchant.merchantId}/prices/voucher`, { price: '0.75' })).status).toBe(200);
      expect(await submit(merchant, 'P-3')).toBe('0.75');
      expect(await submit(merchant, 'P-4')).toBe('0.75');
    });

    it('a shelf change governs the very next submit', async () => {
      const merchant = await newMerchant();
      expect((await admin('PUT', '/admin/v1/skus/voucher', { ...VOUCHER, on_shelf: false })).status).toBe(200);
      expect(await submit(merchant, 'F-1')).toBe('SKU_OFF_SHELF');
      expect(await submit(merchant, 'F-1')).toBe('SKU_OFF_SHELF');
      expect((await admin('PUT', '/admin/v1/skus/voucher', VOUCHER)).status).toBe(200);
      expect(await submit(merchant, 'F-1')).toBe('1.00');
    });

    it('a rotated app secret governs the very next request, with and without an overlap', async () => {
      const merchant = await newMerchant();
      const withSecret = (appSecret: string) => balance({ ...merchant, appSecret });
      // Every instance has verified (and remembered) the first secret.
      for (let i = 0; i < size; i++) expect(await withSecret(merchant.appSecret)).toBe('200 OK');

      const rotate = async (overlapSeconds: number) =>
        (await admin('POST', `/admin/v1/merchants/${merchant.merchantId}/app-secret`, { overlap_seconds: overlapSeconds })).body.data.app_secret as string;
      const second = await rotate(0);
      for (let i = 0; i < size; i++) expect(await withSecret(merchant.appSecret)).toBe('401 INVALID_SIGNATURE');
      for (let i = 0; i < size; i++) expect(await withSecret(second)).toBe('200 OK');

      const third = await rotate(3600);
      for (let i = 0; i < size; i++) expect([await withSecret(second), await withSecret(third)]).toEqual(['200 OK', '200 OK']);
      expect((await admin('DELETE', `/admin/v1/merchants/${merchant.merchantId}/app-secret/previous`)).status).toBe(200);
      for (let i = 0; i < size; i++) expect([await withSecret(second), await withSecret(third)]).toEqual(['401 INVALID_SIGNATURE', '200 OK']);
    });

    it('a submit refused for want of balance is accepted after a deposit, on the very next request', async () => {
      const merchant = await newMerchant({ price: '5.00', deposit: '0.00' });
      for (let round = 0; round < 3; round++) {
        expect(await submit(merchant, `R-${round}`)).toBe('INSUFFICIENT_BALANCE');
        expect((await depositTo(merchant.merchantId, '5.00', `top-up ${round}`)).status).toBe(201);
        expect(await submit(merchant, `R-${round}`)).toBe('5.00');
      }
    });

    it('duplicate submits landing on every instance make one order and freeze once', async () => {
      const merchant = await newMerchant({ price: '3.00', deposit: '10.00' });
      const first = await call(merchant, '/api/v2/topup/submit', submitBody('D-1'));
      const again = await call(merchant, '/api/v2/topup/submit', submitBody('D-1'));
      expect([first.body.code, again.body.code]).toEqual(['ACCEPTED', 'DUPLICATE']);
      expect(again.body.data.order_no).toBe(first.body.data.order_no);
      expect((await call(merchant, '/api/v2/topup/submit', submitBody('D-1', '87654321'))).body.code).toBe('OUT_TRADE_NO_CONFLICT');

      const replies = await Promise.all(Array.from({ length: 12 }, () => call(merchant, '/api/v2/topup/submit', submitBody('D-2'))));
      expect(replies.map((r) => r.body.code).sort()).toEqual(['ACCEPTED', ...Array(11).fill('DUPLICATE')]);
      expect(new Set(replies.map((r) => r.body.data.order_no)).size).toBe(1);
      // Two orders of 3.00, frozen or already deducted: never more.
      expect((await call(merchant, '/api/v2/balance')).body.data.available_balance).toBe('4.00');
    });

    it('a read-model rebuild is reported by every instance, and one runs at a time across them', async () => {
      const started = await admin('POST', '/admin/v1/projections/rebuild', { projection: 'wallets' });
      expect(started.status).toBe(202);
      const id = started.body.data.rebuild_id;
      const statusOf = async () => (await admin('GET', `/admin/v1/projections/rebuild/${id}`)).body.data?.status;
      for (let waited = 0; (await statusOf()) !== 'done'; waited += 50) {
        if (waited > 20_000)
          throw new Error(`rebuild ${id} did not finish: ${JSON.stringify((await admin('GET', `/admin/v1/projections/rebuild/${id}`)).body)}`);
        await sleep(50);
      }
      for (let i = 0; i < size; i++) expect(await statusOf()).toBe('done');

      // Another instance's rebuild, still running (its heartbeat is fresh): refused through every instance.
      await db.pool.query(
        `insert into projection_rebuilds (rebuild_id, status, requested_by, projections, run_by) values ('rb_elsewhere', 'running', 'admin', '[]', 'other-host/1/abc')`,
      );
      for (let i = 0; i < size; i++) {
        const refused = await admin('POST', '/admin/v1/projections/rebuild', {});
        expect([refused.status, refused.body.code, refused.body.message]).toEqual([409, 'REBUILD_RUNNING', 'Rebuild rb_elsewhere is still running']);
      }
      // Its instance died: the heartbeat goes stale, the rebuild reads as failed, and the next may start.
      await db.pool.query(`update projection_rebuilds set heartbeat_at = now() - interval '1 minute' where rebuild_id = 'rb_elsewhere'`);
      const abandoned = (await admin('GET', '/admin/v1/projections/rebuild/rb_elsewhere')).body.data;
      expect([abandoned.status, abandoned.error]).toEqual(['failed', expect.stringMatching(/^abandoned: the instance running it stopped/)]);
      const next = await admin('POST', '/admin/v1/projections/rebuild', { projection: 'orders' });
      expect(next.status).toBe(202);
      for (let waited = 0; (await admin('GET', `/admin/v1/projections/rebuild/${next.body.data.rebuild_id}`)).body.data.status !== 'done'; waited += 50) {
        if (waited > 20_000) throw new Error('the rebuild after an abandoned one did not finish');
        await sleep(50);
      }
    });

    it('fulfilment and callbacks are shared by every instance; each order ends once, called back signed with the current secret at the current URL', async () => {
      const endpoint = await callbackEndpoint(() => ({ status: 200, body: 'success', delayMs: 20 }));
      try {
        const first = await newMerchant({ price: '2.00', deposit: '100.00', callback_url: endpoint.url });
        const rotated = await admin('POST', `/admin/v1/merchants/${first.merchantId}/app-secret`, { overlap_seconds: 3600 });
        const merchant = { ...first, appSecret: rotated.body.data.app_secret as string };

        // Endings: delivered, refused (000, 001), and 503 twice before delivery.
        const endings = ['5678', '0000', '0001', '0503'];
        const orders = await Promise.all(
          Array.from({ length: 24 }, async (_, i) => {
            const accountId = `1234${endings[i % endings.length]}`;
            const reply = await call(merchant, '/api/v2/topup/submit', submitBody(`C-${i}`, accountId));
            expect(reply.status).toBe(202);
            return { orderNo: reply.body.data.order_no as string, accountId };
          }),
        );
        const finals = await Promise.all(orders.map(({ orderNo }) => awaitFinal(cluster, merchant, orderNo, 30_000)));
        for (const [i, final] of finals.entries()) {
          const refused = /000$|001$/.test(orders[i].accountId);
          expect([orders[i].accountId, final.status]).toEqual([orders[i].accountId, refused ? 'failed' : 'success']);
        }
        const delivered = finals.filter((f) => f.status === 'success').length;
        const wallet = (await call(merchant, '/api/v2/balance')).body.data;
        expect([wallet.balance, wallet.frozen_balance]).toEqual([(100 - 2 * delivered).toFixed(2), '0.00']);

        for (let waited = 0; new Set(endpoint.received.map((r) => JSON.parse(r.body).order_no)).size < orders.length; waited += 50) {
          if (waited > 20_000) throw new Error(`callbacks arrived for ${endpoint.received.length} of ${orders.length} orders`);
          await sleep(50);
        }
        for (const [i, { orderNo }] of orders.entries()) {
          const callbacks = endpoint.forOrder(orderNo);
          expect(callbacks.map((c) => JSON.parse(c.body).status)).toEqual([finals[i].status]);
          const signedWith = (appSecret: string) =>
            verifyCallback({ appSecret, path: '/hooks/topup', headers: callbacks[0].headers, rawBody: callbacks[0].body }).ok;
          expect([signedWith(merchant.appSecret), signedWith(first.appSecret)]).toEqual([true, false]);
        }

        // Every instance took a share of both kinds of work.
        const sentUpstream = await Promise.all(
          cluster.instances.map(async (instance) => total(await scrapeMetrics(instance.url), 'topup_upstream_requests_total')),
        );
        const calledBackBy = await db.pool.query(`select count(distinct sent_by)::int as n from callback_attempts`);
        expect([sentUpstream.filter((n) => n > 0).length, calledBackBy.rows[0].n]).toEqual([size, size]);
        expect(cluster.hits().every((n) => n > 0)).toBe(true);

        // A new callback URL set through one instance is where the next callback goes, whichever instance sends it.
        const moved = await callbackEndpoint(() => ({ status: 200, body: 'success' }));
        try {
          await patch(merchant, { callback_url: moved.url });
          const after = await Promise.all(
            Array.from({ length: 4 }, async (_, i) => (await call(merchant, '/api/v2/topup/submit', submitBody(`M-${i}`))).body.data.order_no as string),
          );
          for (let waited = 0; after.some((orderNo) => moved.forOrder(orderNo).length === 0); waited += 50) {
            if (waited > 20_000) throw new Error(`callbacks at the new URL: ${moved.received.length} of ${after.length}`);
            await sleep(50);
          }
          expect(after.every((orderNo) => endpoint.forOrder(orderNo).length === 0)).toBe(true);
        } finally {
          await moved.stop();
        }
      } finally {
        await endpoint.stop();
      }
    }, 60_000);
  }),
);
