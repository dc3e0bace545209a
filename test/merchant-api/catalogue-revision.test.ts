import { Pool } from 'pg';
import { CatalogueReader } from '../../src/merchant-api/products/catalogue.reader';
import { provisionMerchant, signedFetch, TestMerchant } from '../support/merchant-fixture';
import { RunningService, serviceOnFreshDatabase } from '../support/service';

/**
 * A submit prices its SKU as the catalogue stood when the request was
 * admitted. An instance answers from memory while the catalogue's revision
 * has not moved; any change moves it, through the back office or plain SQL.
 * (Changes through one instance seen by the next request through another:
 * test/cluster/one-or-two-instances.test.ts.)
 */
describe('the catalogue revision: SKUs and prices from memory until the catalogue changes', () => {
  let service: RunningService;
  let merchant: TestMerchant;
  let teardown: () => Promise<void>;
  let seq = 0;

  beforeAll(async () => {
    ({ service, teardown } = await serviceOnFreshDatabase());
    merchant = await provisionMerchant(service);
  });
  afterAll(async () => teardown());

  /** The amount of an accepted order, else the error code. */
  const submit = async (skuId = 'plain-10') => {
    const body = { out_trade_no: `CR-${++seq}`, sku_id: skuId, account_id: '12345678', account_fields: {} };
    const reply = await signedFetch(service, merchant, { path: '/api/v2/topup/submit', body: JSON.stringify(body) });
    return reply.status === 202 ? reply.body.data.amount : reply.body.code;
  };
  const sql = (text: string, values: unknown[] = []) => service.pool.query(text, values);
  const revision = async () => (await sql('select revision::text from catalogue_revision')).rows[0].revision as string;

  it('a price, a shelf or a new SKU written with plain SQL governs the very next submit', async () => {
    expect(await submit()).toBe('10.00');
    expect(await submit()).toBe('10.00');
    await sql(`update merchant_prices set price = 1250 where merchant_id = $1 and sku_id = 'plain-10'`, [merchant.merchantId]);
    expect(await submit()).toBe('12.50');
    await sql(`update skus set on_shelf = false where sku_id = 'plain-10'`);
    expect(await submit()).toBe('SKU_OFF_SHELF');
    await sql(`update skus set on_shelf = true where sku_id = 'plain-10'`);
    expect(await submit()).toBe('12.50');

    expect(await submit('new-sku')).toBe('SKU_NOT_FOUND');
    await sql(`insert into skus (sku_id, product_id, name, updated_by) values ('new-sku', 'mlbb', 'New', 't')`);
    expect(await submit('new-sku')).toBe('SKU_OFF_SHELF');
    await sql(`insert into merchant_prices (merchant_id, sku_id, price, updated_by) values ($1, 'new-sku', 333, 't')`, [merchant.merchantId]);
    expect(await submit('new-sku')).toBe('3.33');
    await sql(`delete from merchant_prices where merchant_id = $1 and sku_id = 'new-sku'`, [merchant.merchantId]);
    expect(await submit('new-sku')).toBe('SKU_OFF_SHELF');
  });

  it('moves with every statement that changes SKUs or prices, in its transaction, and not when it rolls back', async () => {
    const before = BigInt(await revision());
    await sql(`update skus set name = name where sku_id = 'plain-10'`);
    expect(BigInt(await revision())).toBe(before + 1n);
    const client = await service.pool.connect();
    try {
      await client.query('begin');
      await client.query(`update merchant_prices set price = 1 where merchant_id = $1`, [merchant.merchantId]);
      await client.query('rollback');
    } finally {
      client.release();
    }
    expect(BigInt(await revision())).toBe(before + 1n);
  });

  it('looks a SKU up once per revision; a request admitted at any other revision reads it again and gets it as it is now', async () => {
    const statements: string[] = [];
    const counting = {
      query: (...args: Parameters<Pool['query']>) => {
        statements.push(String(args[0]));
        return (service.pool.query as (...a: unknown[]) => unknown)(...args);
      },
    } as unknown as Pool;
    const reader = new CatalogueReader(counting);
    const { merchantId } = merchant;
    const price = async (skuId: string, at: string) => (await reader.sku(merchantId, skuId, at))?.price;

    const first = await revision();
    expect(await price('plain-10', first)).toBe(1250n);
    expect(await price('plain-10', first)).toBe(1250n);
    expect(await price('nothing-here', first)).toBeUndefined();
    expect(await price('nothing-here', first)).toBeUndefined();
    expect(statements).toHaveLength(2);

    await sql(`update merchant_prices set price = 1500 where merchant_id = $1 and sku_id = 'plain-10'`, [merchantId]);
    const second = await revision();
    expect(BigInt(second)).toBeGreaterThan(BigInt(first));
    expect(await price('plain-10', second)).toBe(1500n);
    expect(await price('plain-10', second)).toBe(1500n);
    expect(statements).toHaveLength(3);
    // Admitted before the change and looked up after it: as any lookup after a change, it gets the new price.
    expect(await price('plain-10', first)).toBe(1500n);
    expect(statements).toHaveLength(4);
    expect(await price('plain-10', second)).toBe(1500n);
    expect(statements).toHaveLength(4);
  });
});
