import { MarkResultUnknown } from '../../src/ledger/commands/mark-result-unknown/mark-result-unknown.command';
import { SubmitOrder } from '../../src/ledger/commands/submit-order/submit-order.command';
import { openWallet, orderInput } from '../support/fixtures';
import { serviceOnFreshDatabase } from '../support/service';
import { adminClient, call, failure } from './admin-client';

type Case = [name: string, change: Record<string, unknown>, status: number, code: string, field: string];

const VALID_SKU = { product_id: 'p-1', name: 'SKU', required_account_fields: ['server_id'], supports_account_check: false, on_shelf: true };
const LONE_HIGH = '\ud800';
const LONE_LOW = '\udfff';
const NUL = '\u0000';

/**
 * Text Postgres cannot store: a lone UTF-16 surrogate (JSON.parse makes one
 * of "\ud800") is refused in json and jsonb, and NUL in every text type. In
 * any field, key, path or query parameter it is a 422 VALIDATION_FAILED
 * naming where it is, never a 500, and nothing is created, changed or
 * resolved.
 */
describe('back office: lone surrogates and NUL', () => {
  let env: Awaited<ReturnType<typeof serviceOnFreshDatabase>>;
  let admin: ReturnType<typeof adminClient>;
  let merchantId: string;
  let unknownOrder: string;
  beforeAll(async () => {
    env = await serviceOnFreshDatabase();
    admin = adminClient(env.service.url);
    merchantId = (await admin.createMerchant()).merchant_id;
    await admin('PUT', '/admin/v1/products/p-1', { name: 'Product' });
    await admin('PUT', '/admin/v1/skus/s-1', VALID_SKU);
    // An order waiting for reconciliation, to resolve.
    const wallet = await openWallet(env.service.commands, 1_000n);
    const placed = await env.service.commands.execute(new SubmitOrder(orderInput(wallet, 'BAD-TEXT-1')));
    if (placed.outcome !== 'accepted') throw new Error(`the order was not accepted: ${JSON.stringify(placed)}`);
    unknownOrder = placed.order.order!.orderNo;
    await env.service.commands.execute(new MarkResultUnknown(unknownOrder, 'timeout'));
  });
  afterAll(() => env?.teardown());

  /** Everything a refused request could have touched: events, provisioning rows, audit rows. */
  async function snapshot() {
    const { rows } = await env.db.pool.query(`select
      (select count(*) from es_events) as events,
      (select count(*) from back_office_audit) as audit,
      (select count(*) from staff) as staff,
      (select md5(coalesce(string_agg(m::text, ',' order by merchant_id), '')) from merchants m) as merchants,
      (select md5(coalesce(string_agg(p::text, ',' order by product_id), '')) from products p) as products,
      (select md5(coalesce(string_agg(s::text, ',' order by sku_id), '')) from skus s) as skus,
      (select md5(coalesce(string_agg(x::text, ',' order by merchant_id, sku_id), '')) from merchant_prices x) as prices`);
    return rows[0];
  }

  async function expectRefused(method: string, path: string, body: unknown, status: number, code: string, field: string) {
    const before = await snapshot();
    const reply = await call(env.service.url, method, path, body);
    expect({ status: reply.status, body: reply.body }).toEqual({ status, body: failure(code, field) });
    expect(await snapshot()).toEqual(before);
  }

  const tables: Array<[route: string, method: string, path: () => string, valid: Record<string, unknown>, cases: Case[]]> = [
    [
      'POST /staff',
      'POST',
      () => '/admin/v1/staff',
      { name: 'Eve', role: 'auditor' },
      [
        ['a lone high surrogate in name', { name: `Eve ${LONE_HIGH}` }, 422, 'VALIDATION_FAILED', 'name'],
        ['a lone low surrogate in name', { name: LONE_LOW }, 422, 'VALIDATION_FAILED', 'name'],
        ['NUL in name', { name: `Eve${NUL}` }, 422, 'VALIDATION_FAILED', 'name'],
        ['a lone surrogate in role', { role: `auditor${LONE_HIGH}` }, 422, 'VALIDATION_FAILED', 'role'],
        ['a lone surrogate in a key', { [LONE_HIGH]: 'x' }, 422, 'VALIDATION_FAILED', LONE_HIGH],
        ['a missing field before a lone surrogate', { name: LONE_HIGH, role: undefined }, 400, 'MISSING_REQUIRED_FIELD', 'role'],
      ],
    ],
    [
      'POST /merchants',
      'POST',
      () => '/admin/v1/merchants',
      { name: 'Shop' },
      [
        ['a lone surrogate in name', { name: `evil ${LONE_HIGH} corp` }, 422, 'VALIDATION_FAILED', 'name'],
        ['NUL in name', { name: `evil ${NUL} corp` }, 422, 'VALIDATION_FAILED', 'name'],
        ['a lone surrogate in currency', { currency: `US${LONE_HIGH}` }, 422, 'VALIDATION_FAILED', 'currency'],
        ['a lone surrogate in callback_url', { callback_url: `https://shop.example/${LONE_HIGH}` }, 422, 'VALIDATION_FAILED', 'callback_url'],
        ['NUL in callback_url', { callback_url: `https://shop.example/a${NUL}` }, 422, 'VALIDATION_FAILED', 'callback_url'],
        ['a lone surrogate in a whitelist entry', { ip_whitelist: ['10.0.0.1', LONE_LOW] }, 422, 'VALIDATION_FAILED', 'ip_whitelist.1'],
        ['NUL in a whitelist entry', { ip_whitelist: [`10.0.0.1${NUL}`] }, 422, 'VALIDATION_FAILED', 'ip_whitelist.0'],
        ['a lone surrogate in a nested key', { ip_whitelist: [{ [LONE_HIGH]: 1 }] }, 422, 'VALIDATION_FAILED', `ip_whitelist.0.${LONE_HIGH}`],
        ['a lone surrogate in a key', { [`x${LONE_LOW}`]: 1 }, 422, 'VALIDATION_FAILED', `x${LONE_LOW}`],
        ['NUL in a key', { [NUL]: 1 }, 422, 'VALIDATION_FAILED', NUL],
      ],
    ],
    [
      'PATCH /merchants/:id',
      'PATCH',
      () => `/admin/v1/merchants/${merchantId}`,
      {},
      [
        ['a lone surrogate in callback_url', { callback_url: `https://shop.example/cb?x=${LONE_HIGH}` }, 422, 'VALIDATION_FAILED', 'callback_url'],
        ['NUL in status', { status: `suspended${NUL}` }, 422, 'VALIDATION_FAILED', 'status'],
        ['a lone surrogate in status', { status: LONE_HIGH }, 422, 'VALIDATION_FAILED', 'status'],
        ['NUL in a whitelist entry', { ip_whitelist: [NUL] }, 422, 'VALIDATION_FAILED', 'ip_whitelist.0'],
      ],
    ],
    [
      'POST /merchants/:id/deposits',
      'POST',
      () => `/admin/v1/merchants/${merchantId}/deposits`,
      { amount: '1.00', reference: 'r-1' },
      [
        ['a lone surrogate in reference', { reference: `r${LONE_HIGH}` }, 422, 'VALIDATION_FAILED', 'reference'],
        ['NUL in reference', { reference: `r${NUL}` }, 422, 'VALIDATION_FAILED', 'reference'],
        ['NUL in amount', { amount: `1.00${NUL}` }, 422, 'VALIDATION_FAILED', 'amount'],
        ['a lone surrogate in amount', { amount: `1${LONE_LOW}` }, 422, 'VALIDATION_FAILED', 'amount'],
      ],
    ],
    [
      'PUT /products/:id',
      'PUT',
      () => '/admin/v1/products/p-1',
      { name: 'Product' },
      [
        ['a lone surrogate in name', { name: `Product ${LONE_HIGH}` }, 422, 'VALIDATION_FAILED', 'name'],
        ['NUL in name', { name: `Product${NUL}` }, 422, 'VALIDATION_FAILED', 'name'],
      ],
    ],
    [
      'PUT /skus/:id',
      'PUT',
      () => '/admin/v1/skus/s-1',
      VALID_SKU,
      [
        ['a lone surrogate in product_id', { product_id: LONE_HIGH }, 422, 'VALIDATION_FAILED', 'product_id'],
        ['a lone surrogate in name', { name: `SKU ${LONE_HIGH}` }, 422, 'VALIDATION_FAILED', 'name'],
        ['NUL in name', { name: `SKU${NUL}` }, 422, 'VALIDATION_FAILED', 'name'],
        ['a lone surrogate in an account field', { required_account_fields: ['zone', LONE_HIGH] }, 422, 'VALIDATION_FAILED', 'required_account_fields.1'],
        ['NUL in route', { route: `default${NUL}` }, 422, 'VALIDATION_FAILED', 'route'],
      ],
    ],
    [
      'PUT /merchants/:id/prices/:sku',
      'PUT',
      () => `/admin/v1/merchants/${merchantId}/prices/s-1`,
      { price: '1.20' },
      [
        ['a lone surrogate in price', { price: `1.20${LONE_HIGH}` }, 422, 'VALIDATION_FAILED', 'price'],
        ['NUL in price', { price: `1.20${NUL}` }, 422, 'VALIDATION_FAILED', 'price'],
      ],
    ],
    [
      'POST /reconciliation/orders/:order_no/resolve',
      'POST',
      () => `/admin/v1/reconciliation/orders/${unknownOrder}/resolve`,
      { outcome: 'failed', note: 'checked with the upstream' },
      [
        ['NUL in note', { note: `checked ${NUL} upstream` }, 422, 'VALIDATION_FAILED', 'note'],
        ['a lone surrogate in note', { note: `checked ${LONE_HIGH} upstream` }, 422, 'VALIDATION_FAILED', 'note'],
        ['a lone surrogate in outcome', { outcome: `failed${LONE_LOW}` }, 422, 'VALIDATION_FAILED', 'outcome'],
        ['a lone surrogate in a key', { [LONE_HIGH]: 'x' }, 422, 'VALIDATION_FAILED', LONE_HIGH],
      ],
    ],
    [
      'POST /audit/verify',
      'POST',
      () => '/admin/v1/audit/verify',
      {},
      [
        ['NUL in merchant_id', { merchant_id: NUL }, 422, 'VALIDATION_FAILED', 'merchant_id'],
        ['a lone surrogate in merchant_id', { merchant_id: `mch_${LONE_HIGH}` }, 422, 'VALIDATION_FAILED', 'merchant_id'],
      ],
    ],
    [
      'POST /projections/rebuild',
      'POST',
      () => '/admin/v1/projections/rebuild',
      {},
      [
        ['NUL in projection', { projection: `orders${NUL}` }, 422, 'VALIDATION_FAILED', 'projection'],
        ['a lone surrogate in projection', { projection: LONE_HIGH }, 422, 'VALIDATION_FAILED', 'projection'],
      ],
    ],
  ];

  describe.each(tables)('%s', (_route, method, path, valid, cases) => {
    it.each(cases)('%s', async (_name, change, status, code, field) => {
      await expectRefused(method, path(), { ...valid, ...change }, status, code, field);
    });
  });

  it('the order stays in the reconciliation queue, unresolved', async () => {
    const reply = await admin('GET', `/admin/v1/orders/${unknownOrder}`);
    expect(reply.body.data.stage).toBe('unknown');
    expect(reply.body.data.history.map((e: { type: string }) => e.type)).not.toContain('OrderResolved');
  });

  describe('path parameters', () => {
    const routes = (id: string): Array<[string, string, unknown, string]> => [
      ['GET', `/admin/v1/merchants/${id}`, undefined, 'merchant_id'],
      ['PATCH', `/admin/v1/merchants/${id}`, { status: 'suspended' }, 'merchant_id'],
      ['POST', `/admin/v1/merchants/${id}/deposits`, { amount: '1.00', reference: 'r-2' }, 'merchant_id'],
      ['PUT', `/admin/v1/products/${id}`, { name: 'x' }, 'product_id'],
      ['PUT', `/admin/v1/skus/${id}`, VALID_SKU, 'sku_id'],
      ['PUT', `/admin/v1/merchants/${merchantId}/prices/${id}`, { price: '1.00' }, 'sku_id'],
      ['GET', `/admin/v1/orders/${id}`, undefined, 'order_no'],
      ['POST', `/admin/v1/reconciliation/orders/${id}/resolve`, { outcome: 'failed', note: 'n' }, 'order_no'],
      ['POST', `/admin/v1/reconciliation/orders/${id}/requery`, undefined, 'order_no'],
      ['GET', `/admin/v1/orders/${id}/callbacks`, undefined, 'order_no'],
      ['POST', `/admin/v1/orders/${id}/callbacks/redeliver`, undefined, 'order_no'],
      ['GET', `/admin/v1/wallets/${id}/statement`, undefined, 'merchant_id'],
      ['GET', `/admin/v1/wallets/${id}/balance?at=2026-01-01T00:00:00Z`, undefined, 'merchant_id'],
      ['GET', `/admin/v1/projections/rebuild/${id}`, undefined, 'rebuild_id'],
    ];

    it.each(['%00', 'a%00b', '%EF%BF%BD'])('%s is 422 VALIDATION_FAILED naming the parameter on every route', async (id) => {
      for (const [method, path, body, field] of routes(id)) await expectRefused(method, path, body, 422, 'VALIDATION_FAILED', field);
    });

    // How a lone surrogate would look in UTF-8, which is no UTF-8 at all: the
    // router cannot decode the path, so no route (and no SQL) ever sees it.
    it('%ED%A0%80 is 400 BAD_REQUEST on every route', async () => {
      for (const [method, path, body] of routes('%ED%A0%80')) {
        const before = await snapshot();
        const reply = await call(env.service.url, method, path, body);
        expect({ status: reply.status, body: reply.body }).toEqual({ status: 400, body: failure('BAD_REQUEST') });
        expect(await snapshot()).toEqual(before);
      }
    });
  });

  describe('query parameters', () => {
    it.each([
      ['/admin/v1/reconciliation/orders?limit=%00', 'limit'],
      ['/admin/v1/reconciliation/orders?offset=1%00', 'offset'],
      ['/admin/v1/reconciliation/orders?limit=%ED%A0%80', 'limit'],
      ['/admin/v1/wallets/MID/statement?from=%00', 'from'],
      ['/admin/v1/wallets/MID/statement?to=2026-01-01T00:00:00Z%00', 'to'],
      ['/admin/v1/wallets/MID/statement?after_revision=1%00', 'after_revision'],
      ['/admin/v1/wallets/MID/statement?limit=%00', 'limit'],
      ['/admin/v1/wallets/MID/statement?format=csv%00', 'format'],
      ['/admin/v1/wallets/MID/balance?at=%00', 'at'],
      ['/admin/v1/wallets/MID/balance?position=1/1%00', 'position'],
      ['/admin/v1/wallets/MID/balance?at=2026-01-01T00:00:00Z%ED%A0%80', 'at'],
    ])('%s is 422 VALIDATION_FAILED naming the parameter', async (path, field) => {
      await expectRefused('GET', path.replace('MID', merchantId), undefined, 422, 'VALIDATION_FAILED', field);
    });
  });
});
