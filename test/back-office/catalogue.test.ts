import { serviceOnFreshDatabase } from '../support/service';
import { adminClient, failure } from './admin-client';

const sku = (overrides: Record<string, unknown> = {}) => ({
  product_id: 'mlbb',
  name: '86 Diamonds',
  required_account_fields: ['server_id'],
  supports_account_check: true,
  on_shelf: true,
  ...overrides,
});

describe('back office: catalogue and prices', () => {
  let env: Awaited<ReturnType<typeof serviceOnFreshDatabase>>;
  let admin: ReturnType<typeof adminClient>;
  beforeAll(async () => {
    env = await serviceOnFreshDatabase();
    admin = adminClient(env.service.url);
  });
  afterAll(() => env?.teardown());

  const audit = async (target: string) =>
    (await env.db.pool.query('select staff_id, action, details from back_office_audit where target = $1 order by id', [target])).rows;

  it('PUT /products creates a product and replaces it', async () => {
    const created = await admin('PUT', '/admin/v1/products/mlbb', { name: 'Mobile Legends' });
    expect(created.status).toBe(200);
    expect(created.body).toEqual({ success: true, code: 'OK', data: { product_id: 'mlbb', name: 'Mobile Legends' } });
    const staff = await admin.createStaff('admin');
    const renamed = await admin('PUT', '/admin/v1/products/mlbb', { name: 'Mobile Legends: Bang Bang' }, { token: staff.token });
    expect(renamed.body.data).toEqual({ product_id: 'mlbb', name: 'Mobile Legends: Bang Bang' });
    const { rows } = await env.db.pool.query('select name, updated_by from products where product_id = $1', ['mlbb']);
    expect(rows).toEqual([{ name: 'Mobile Legends: Bang Bang', updated_by: staff.staff_id }]);
    expect(await audit('product:mlbb')).toEqual([
      { staff_id: 'admin', action: 'product.created', details: { name: 'Mobile Legends', previous: null } },
      {
        staff_id: staff.staff_id,
        action: 'product.updated',
        details: { name: 'Mobile Legends: Bang Bang', previous: { product_id: 'mlbb', name: 'Mobile Legends' } },
      },
    ]);
  });

  it('PUT /skus creates a SKU with the default route, and replaces it whole', async () => {
    await admin('PUT', '/admin/v1/products/mlbb', { name: 'Mobile Legends' });
    const created = await admin('PUT', '/admin/v1/skus/mlbb-86', sku());
    expect(created.status).toBe(200);
    expect(created.body).toEqual({
      success: true,
      code: 'OK',
      data: {
        sku_id: 'mlbb-86',
        product_id: 'mlbb',
        name: '86 Diamonds',
        required_account_fields: ['server_id'],
        supports_account_check: true,
        on_shelf: true,
        route: 'default',
      },
    });
    const replaced = await admin(
      'PUT',
      '/admin/v1/skus/mlbb-86',
      sku({ required_account_fields: ['server_id', 'zone_id'], on_shelf: false, route: 'provider-b' }),
    );
    expect(replaced.body.data).toMatchObject({ required_account_fields: ['server_id', 'zone_id'], on_shelf: false, route: 'provider-b' });
    const { rows } = await env.db.pool.query('select required_account_fields, on_shelf, route, updated_by from skus where sku_id = $1', ['mlbb-86']);
    expect(rows).toEqual([{ required_account_fields: ['server_id', 'zone_id'], on_shelf: false, route: 'provider-b', updated_by: 'admin' }]);
    const trail = await audit('sku:mlbb-86');
    expect(trail.map((r) => r.action)).toEqual(['sku.created', 'sku.updated']);
    expect(trail[1].details).toMatchObject({ route: 'provider-b', previous: { route: 'default', on_shelf: true } });
  });

  it('PUT /skus with route null stores "no upstream route"; omitting route restores the default', async () => {
    await admin('PUT', '/admin/v1/products/pubg', { name: 'PUBG Mobile' });
    const reply = await admin('PUT', '/admin/v1/skus/pubg-60', sku({ product_id: 'pubg', required_account_fields: [], route: null }));
    expect(reply.status).toBe(200);
    expect(reply.body.data).toMatchObject({ sku_id: 'pubg-60', required_account_fields: [], route: null });
    const { rows } = await env.db.pool.query('select route from skus where sku_id = $1', ['pubg-60']);
    expect(rows).toEqual([{ route: null }]);
    expect((await admin('PUT', '/admin/v1/skus/pubg-60', sku({ product_id: 'pubg' }))).body.data.route).toBe('default');
  });

  it('PUT /skus answers 404 PRODUCT_NOT_FOUND for an unknown product, and writes nothing', async () => {
    const reply = await admin('PUT', '/admin/v1/skus/ghost-1', sku({ product_id: 'no-such-product' }));
    expect(reply.status).toBe(404);
    expect(reply.body).toEqual(failure('PRODUCT_NOT_FOUND', 'product_id'));
    expect(await audit('sku:ghost-1')).toEqual([]);
  });

  it('PUT /merchants/:id/prices/:sku sets and replaces a merchant price', async () => {
    await admin('PUT', '/admin/v1/products/mlbb', { name: 'Mobile Legends' });
    await admin('PUT', '/admin/v1/skus/mlbb-172', sku({ name: '172 Diamonds' }));
    const merchant = await admin.createMerchant();
    const set = await admin('PUT', `/admin/v1/merchants/${merchant.merchant_id}/prices/mlbb-172`, { price: '1.2' });
    expect(set.status).toBe(200);
    expect(set.body).toEqual({ success: true, code: 'OK', data: { merchant_id: merchant.merchant_id, sku_id: 'mlbb-172', price: '1.20' } });
    const changed = await admin('PUT', `/admin/v1/merchants/${merchant.merchant_id}/prices/mlbb-172`, { price: '2.35' });
    expect(changed.body.data.price).toBe('2.35');
    const { rows } = await env.db.pool.query('select price::text, updated_by from merchant_prices where merchant_id = $1', [merchant.merchant_id]);
    expect(rows).toEqual([{ price: '235', updated_by: 'admin' }]);
    const trail = (await audit(`merchant:${merchant.merchant_id}`)).filter((r) => r.action === 'price.set');
    expect(trail).toEqual([
      { staff_id: 'admin', action: 'price.set', details: { sku_id: 'mlbb-172', price: '1.20', previous_price: null } },
      { staff_id: 'admin', action: 'price.set', details: { sku_id: 'mlbb-172', price: '2.35', previous_price: '1.20' } },
    ]);
  });

  it('PUT prices answers 404 for an unknown merchant or SKU', async () => {
    await admin('PUT', '/admin/v1/products/mlbb', { name: 'Mobile Legends' });
    await admin('PUT', '/admin/v1/skus/mlbb-86', sku());
    const merchant = await admin.createMerchant();
    const noMerchant = await admin('PUT', '/admin/v1/merchants/mch_0000000000000000/prices/mlbb-86', { price: '1.00' });
    expect(noMerchant.status).toBe(404);
    expect(noMerchant.body).toEqual(failure('MERCHANT_NOT_FOUND', 'merchant_id'));
    const noSku = await admin('PUT', `/admin/v1/merchants/${merchant.merchant_id}/prices/nope`, { price: '1.00' });
    expect(noSku.status).toBe(404);
    expect(noSku.body).toEqual(failure('SKU_NOT_FOUND', 'sku_id'));
  });
});
