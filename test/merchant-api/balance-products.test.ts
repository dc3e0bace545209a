import { provisionMerchant, signedFetch, TestMerchant } from '../support/merchant-fixture';
import { RunningService, serviceOnFreshDatabase } from '../support/service';

/**
 * POST /api/v2/balance and POST /api/v2/products (CONTRACT §1): the shapes,
 * two-decimal money strings, the wallet arithmetic after submits, and a
 * catalogue that shows only SKUs on shelf priced for this merchant.
 */

const BALANCE = '/api/v2/balance';
const PRODUCTS = '/api/v2/products';
const SUBMIT = '/api/v2/topup/submit';
const MONEY = /^(0|[1-9]\d*)\.\d{2}$/;

describe('POST /api/v2/balance and /api/v2/products', () => {
  let service: RunningService;
  let teardown: () => Promise<void>;

  beforeAll(async () => {
    ({ service, teardown } = await serviceOnFreshDatabase());
  });
  afterAll(async () => teardown());

  const call = (m: TestMerchant, path: string, body = '{}') => signedFetch(service, m, { path, body });

  function submit(m: TestMerchant, outTradeNo: string, sku: 'mlbb-86' | 'plain-10', accountId = '55555999') {
    const account_fields = sku === 'mlbb-86' ? { server_id: '2001' } : {};
    return call(m, SUBMIT, JSON.stringify({ out_trade_no: outTradeNo, sku_id: sku, account_id: accountId, account_fields }));
  }

  async function balanceOf(m: TestMerchant) {
    const reply = await call(m, BALANCE);
    expect(reply.status).toBe(200);
    expect(reply.body.success).toBe(true);
    expect(reply.body.code).toBe('OK');
    expect(Object.keys(reply.body).sort()).toEqual(['code', 'data', 'success']);
    return reply.body.data;
  }

  function expectFailure(reply: { status: number; body: any }, status: number, code: string, field?: string) {
    expect({ status: reply.status, code: reply.body.code, field: reply.body.field }).toEqual({ status, code, field });
    expect(reply.body.success).toBe(false);
    expect(typeof reply.body.message).toBe('string');
  }

  describe('balance', () => {
    it('has exactly {currency, balance, frozen_balance, available_balance}, money as two-decimal strings', async () => {
      const m = await provisionMerchant(service, { deposit: 12_345n });
      const wallet = await balanceOf(m);
      expect(Object.keys(wallet).sort()).toEqual(['available_balance', 'balance', 'currency', 'frozen_balance']);
      expect(wallet).toEqual({ currency: 'USD', balance: '123.45', frozen_balance: '0.00', available_balance: '123.45' });
      for (const key of ['balance', 'frozen_balance', 'available_balance']) {
        expect(typeof wallet[key]).toBe('string');
        expect(wallet[key]).toMatch(MONEY);
      }
    });

    it('keeps the two decimals for whole and tiny amounts, before and after projection', async () => {
      const whole = await provisionMerchant(service, { deposit: 500n });
      const tiny = await provisionMerchant(service, { deposit: 7n });
      const empty = await provisionMerchant(service, { deposit: 0n });
      for (let round = 0; round < 2; round++) {
        expect(await balanceOf(whole)).toEqual({ currency: 'USD', balance: '5.00', frozen_balance: '0.00', available_balance: '5.00' });
        expect(await balanceOf(tiny)).toEqual({ currency: 'USD', balance: '0.07', frozen_balance: '0.00', available_balance: '0.07' });
        expect(await balanceOf(empty)).toEqual({ currency: 'USD', balance: '0.00', frozen_balance: '0.00', available_balance: '0.00' });
        await service.catchUp();
      }
    });

    it('freezes each accepted order, and nothing for duplicates, conflicts and refusals', async () => {
      const m = await provisionMerchant(service, { deposit: 10_000n });
      expect((await submit(m, 'B-1', 'mlbb-86')).status).toBe(202);
      expect((await submit(m, 'B-2', 'mlbb-86')).status).toBe(202);
      expect((await submit(m, 'B-3', 'mlbb-86')).status).toBe(202);
      expect((await submit(m, 'B-4', 'plain-10')).status).toBe(202);
      // Replays and refusals move no money.
      expect((await submit(m, 'B-1', 'mlbb-86')).status).toBe(200);
      expectFailure(await submit(m, 'B-1', 'mlbb-86', '66666999'), 409, 'OUT_TRADE_NO_CONFLICT');
      expectFailure(await submit(m, 'B-5', 'plain-10', ''), 422, 'VALIDATION_FAILED', 'account_id');
      await service.catchUp();
      // 100.00 deposited; 3 x 1.20 + 10.00 = 13.60 frozen, nothing deducted before fulfilment.
      expect(await balanceOf(m)).toEqual({ currency: 'USD', balance: '100.00', frozen_balance: '13.60', available_balance: '86.40' });
    });

    it('refuses an order beyond the available balance with 402, moving nothing', async () => {
      const m = await provisionMerchant(service, { deposit: 1_150n });
      expect((await submit(m, 'P-1', 'plain-10')).status).toBe(202);
      expectFailure(await submit(m, 'P-2', 'plain-10'), 402, 'INSUFFICIENT_BALANCE');
      expect((await submit(m, 'P-3', 'mlbb-86')).status).toBe(202);
      expectFailure(await submit(m, 'P-4', 'mlbb-86'), 402, 'INSUFFICIENT_BALANCE');
      await service.catchUp();
      expect(await balanceOf(m)).toEqual({ currency: 'USD', balance: '11.50', frozen_balance: '11.20', available_balance: '0.30' });
    });

    it("is each merchant its own: another merchant's orders do not show", async () => {
      const [a, b] = await Promise.all([provisionMerchant(service, { deposit: 2_000n }), provisionMerchant(service, { deposit: 3_000n })]);
      expect((await submit(b, 'X-1', 'plain-10')).status).toBe(202);
      await service.catchUp();
      expect(await balanceOf(a)).toEqual({ currency: 'USD', balance: '20.00', frozen_balance: '0.00', available_balance: '20.00' });
      expect(await balanceOf(b)).toEqual({ currency: 'USD', balance: '30.00', frozen_balance: '10.00', available_balance: '20.00' });
    });

    it('shows each freeze straight after its 202, without waiting for projections', async () => {
      const m = await provisionMerchant(service, { deposit: 10_000n });
      await service.catchUp();
      for (let i = 1; i <= 10; i++) {
        expect((await submit(m, `RY-${i}`, 'mlbb-86')).status).toBe(202);
        const frozen = `${Math.floor((120 * i) / 100)}.${String((120 * i) % 100).padStart(2, '0')}`;
        const available = `${Math.floor((10_000 - 120 * i) / 100)}.${String((10_000 - 120 * i) % 100).padStart(2, '0')}`;
        expect(await balanceOf(m)).toEqual({ currency: 'USD', balance: '100.00', frozen_balance: frozen, available_balance: available });
      }
    });

    it('{"x":1}: 422 VALIDATION_FAILED naming x', async () => {
      const m = await provisionMerchant(service);
      expectFailure(await call(m, BALANCE, '{"x":1}'), 422, 'VALIDATION_FAILED', 'x');
    });

    it.each([['[]'], ['null'], ['1'], ['"{}"'], [''], ['{']])('%p: 400 INVALID_JSON', async (body) => {
      const m = await provisionMerchant(service);
      expectFailure(await call(m, BALANCE, body), 400, 'INVALID_JSON');
    });
  });

  describe('products', () => {
    let mine: TestMerchant;
    let theirs: TestMerchant;

    beforeAll(async () => {
      [mine, theirs] = await Promise.all([provisionMerchant(service), provisionMerchant(service)]);
      // A second product with three SKUs priced for `mine`, and one priced for `theirs` only.
      await service.pool.query(`insert into products (product_id, name, updated_by) values ('pubg', 'PUBG Mobile', 'test')`);
      await service.pool.query(
        `insert into skus (sku_id, product_id, name, required_account_fields, supports_account_check, updated_by) values
           ('pubg-60', 'pubg', '60 UC', '{player_id,zone}', true, 'test'),
           ('pubg-325', 'pubg', '325 UC', '{}', false, 'test'),
           ('pubg-660', 'pubg', '660 UC', '{}', false, 'test'),
           ('pubg-vip', 'pubg', 'VIP pass', '{}', false, 'test')`,
      );
      await service.pool.query(
        `insert into merchant_prices (merchant_id, sku_id, price, updated_by) values
           ($1, 'pubg-60', 99, 'test'), ($1, 'pubg-325', 500, 'test'), ($1, 'pubg-660', 1000, 'test'),
           ($2, 'pubg-vip', 4200, 'test')`,
        [mine.merchantId, theirs.merchantId],
      );
      // Another merchant's own price for a shared SKU.
      await service.pool.query(`update merchant_prices set price = 777 where merchant_id = $1 and sku_id = 'mlbb-86'`, [theirs.merchantId]);
    });

    async function productsOf(m: TestMerchant) {
      const reply = await call(m, PRODUCTS);
      expect(reply.status).toBe(200);
      expect(reply.body.success).toBe(true);
      expect(reply.body.code).toBe('OK');
      expect(Object.keys(reply.body).sort()).toEqual(['code', 'data', 'success']);
      expect(Object.keys(reply.body.data)).toEqual(['products']);
      return reply.body.data.products as any[];
    }

    const skuIds = (products: any[]) => products.flatMap((p) => p.skus.map((s: any) => s.sku_id)).sort();

    it('lists each product and SKU with exactly the contract fields and types', async () => {
      const products = await productsOf(mine);
      expect(products.length).toBeGreaterThan(0);
      for (const product of products) {
        expect(Object.keys(product).sort()).toEqual(['name', 'product_id', 'skus']);
        expect(typeof product.product_id).toBe('string');
        expect(typeof product.name).toBe('string');
        expect(Array.isArray(product.skus)).toBe(true);
        expect(product.skus.length).toBeGreaterThan(0);
        for (const sku of product.skus) {
          expect(Object.keys(sku).sort()).toEqual(['currency', 'name', 'price', 'required_account_fields', 'sku_id', 'supports_account_check']);
          expect(typeof sku.sku_id).toBe('string');
          expect(typeof sku.name).toBe('string');
          expect(typeof sku.price).toBe('string');
          expect(sku.price).toMatch(MONEY);
          expect(sku.currency).toBe('USD');
          expect(Array.isArray(sku.required_account_fields)).toBe(true);
          for (const field of sku.required_account_fields) expect(typeof field).toBe('string');
          expect(typeof sku.supports_account_check).toBe('boolean');
        }
      }
    });

    it("shows this merchant's own prices and each SKU's account fields", async () => {
      const products = await productsOf(mine);
      const byId = Object.fromEntries(products.map((p) => [p.product_id, p]));
      expect(byId.mlbb).toEqual({
        product_id: 'mlbb',
        name: 'Mobile Legends',
        skus: expect.arrayContaining([
          { sku_id: 'mlbb-86', name: '86 Diamonds', price: '1.20', currency: 'USD', required_account_fields: ['server_id'], supports_account_check: true },
          { sku_id: 'plain-10', name: 'Voucher 10', price: '10.00', currency: 'USD', required_account_fields: [], supports_account_check: false },
        ]),
      });
      expect(byId.mlbb.skus).toHaveLength(2);
      expect(byId.pubg).toEqual({
        product_id: 'pubg',
        name: 'PUBG Mobile',
        skus: expect.arrayContaining([
          { sku_id: 'pubg-60', name: '60 UC', price: '0.99', currency: 'USD', required_account_fields: ['player_id', 'zone'], supports_account_check: true },
          { sku_id: 'pubg-325', name: '325 UC', price: '5.00', currency: 'USD', required_account_fields: [], supports_account_check: false },
          { sku_id: 'pubg-660', name: '660 UC', price: '10.00', currency: 'USD', required_account_fields: [], supports_account_check: false },
        ]),
      });
      expect(byId.pubg.skus).toHaveLength(3);
      expect(Object.keys(byId).sort()).toEqual(['mlbb', 'pubg']);
    });

    it("never shows another merchant's prices or SKUs", async () => {
      const products = await productsOf(mine);
      expect(skuIds(products)).not.toContain('pubg-vip');
      expect(JSON.stringify(products)).not.toContain('7.77');
      expect(JSON.stringify(products)).not.toContain('42.00');
      const theirsProducts = await productsOf(theirs);
      expect(skuIds(theirsProducts)).toEqual(['mlbb-86', 'plain-10', 'pubg-vip']);
      const theirMlbb = theirsProducts.find((p) => p.product_id === 'mlbb').skus.find((s: any) => s.sku_id === 'mlbb-86');
      expect(theirMlbb.price).toBe('7.77');
    });

    it('drops a SKU taken off shelf and a SKU whose price for this merchant was deleted', async () => {
      expect(skuIds(await productsOf(mine))).toEqual(['mlbb-86', 'plain-10', 'pubg-325', 'pubg-60', 'pubg-660']);
      await service.pool.query(`update skus set on_shelf = false where sku_id = 'pubg-325'`);
      await service.pool.query(`delete from merchant_prices where merchant_id = $1 and sku_id = 'pubg-660'`, [mine.merchantId]);
      expect(skuIds(await productsOf(mine))).toEqual(['mlbb-86', 'plain-10', 'pubg-60']);
      // The same SKUs cannot be ordered either: 422 SKU_OFF_SHELF.
      for (const sku of ['pubg-325', 'pubg-660']) {
        const reply = await call(mine, SUBMIT, JSON.stringify({ out_trade_no: `OFF-${sku}`, sku_id: sku, account_id: '55555999', account_fields: {} }));
        expectFailure(reply, 422, 'SKU_OFF_SHELF', 'sku_id');
      }
    });

    it('drops a product whose every SKU left the shelf', async () => {
      await service.pool.query(`update skus set on_shelf = false where product_id = 'pubg'`);
      const products = await productsOf(mine);
      expect(products.map((p) => p.product_id)).toEqual(['mlbb']);
      await service.pool.query(`update skus set on_shelf = true where product_id = 'pubg'`);
      expect(skuIds(await productsOf(mine))).toEqual(['mlbb-86', 'plain-10', 'pubg-325', 'pubg-60']);
    });

    it('{"x":1}: 422 VALIDATION_FAILED naming x', async () => {
      expectFailure(await call(mine, PRODUCTS, '{"x":1}'), 422, 'VALIDATION_FAILED', 'x');
    });

    it.each([['[]'], ['null'], ['true'], ['""'], [''], ['{"a":1,"a":1}']])('%p: 400 INVALID_JSON', async (body) => {
      expectFailure(await call(mine, PRODUCTS, body), 400, 'INVALID_JSON');
    });
  });
});
