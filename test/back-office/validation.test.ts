import { serviceOnFreshDatabase } from '../support/service';
import { ADMIN, adminClient, call, failure } from './admin-client';

type Case = [name: string, body: unknown, status: number, code: string, field?: string];

const VALID_SKU = { product_id: 'p-1', name: 'SKU', required_account_fields: ['server_id'], supports_account_check: false, on_shelf: true };
const long = (n: number, c = 'a') => c.repeat(n);

describe('back office: request validation', () => {
  let env: Awaited<ReturnType<typeof serviceOnFreshDatabase>>;
  let admin: ReturnType<typeof adminClient>;
  let merchantId: string;
  beforeAll(async () => {
    env = await serviceOnFreshDatabase();
    admin = adminClient(env.service.url);
    merchantId = (await admin.createMerchant()).merchant_id;
    await admin('PUT', '/admin/v1/products/p-1', { name: 'Product' });
    await admin('PUT', '/admin/v1/skus/s-1', VALID_SKU);
  });
  afterAll(() => env?.teardown());

  /** Every route with a JSON body, with a body that is valid for it. */
  const bodyRoutes = (): Array<[method: string, path: string, valid: Record<string, unknown>]> => [
    ['POST', '/admin/v1/staff', { name: 'Eve', role: 'auditor' }],
    ['POST', '/admin/v1/merchants', { name: 'Shop' }],
    ['PATCH', `/admin/v1/merchants/${merchantId}`, { status: 'active' }],
    ['POST', `/admin/v1/merchants/${merchantId}/deposits`, { amount: '1.00', reference: 'valid' }],
    ['PUT', '/admin/v1/products/p-2', { name: 'Product 2' }],
    ['PUT', '/admin/v1/skus/s-2', VALID_SKU],
    ['PUT', `/admin/v1/merchants/${merchantId}/prices/s-1`, { price: '1.20' }],
  ];

  async function expectReply(method: string, path: string, body: unknown, status: number, code: string, field?: string, raw?: string | Buffer) {
    const reply = await call(env.service.url, method, path, body, { raw });
    expect({ status: reply.status, body: reply.body }).toEqual({ status, body: failure(code, field) });
  }

  describe('bodies that are not a JSON object', () => {
    const raws: Array<[string, string | Buffer]> = [
      ['invalid JSON', '{"name": "x",'],
      ['an empty body', ''],
      ['a JSON array', '[{"name": "x"}]'],
      ['a JSON string', '"name"'],
      ['JSON null', 'null'],
      ['a JSON number', '42'],
      ['invalid UTF-8', Buffer.from([0x7b, 0x22, 0xff, 0x22, 0x3a, 0x31, 0x7d])],
    ];
    it.each(raws)('%s is 400 INVALID_JSON on every route', async (_name, raw) => {
      for (const [method, path] of bodyRoutes()) await expectReply(method, path, undefined, 400, 'INVALID_JSON', undefined, raw);
    });
  });

  describe('oversized bodies', () => {
    it('a body over 64 KiB is 413 PAYLOAD_TOO_LARGE on every route, and one of exactly 64 KiB is read', async () => {
      for (const [method, path] of bodyRoutes()) {
        const padded = JSON.stringify({ name: 'Shop', pad: long(70_000) });
        await expectReply(method, path, undefined, 413, 'PAYLOAD_TOO_LARGE', undefined, padded);
      }
      const exact = JSON.stringify({ name: 'Shop', pad: '' });
      const atLimit = exact.replace('"pad":""', `"pad":"${long(64 * 1024 - exact.length)}"`);
      expect(Buffer.byteLength(atLimit)).toBe(64 * 1024);
      // Read and parsed: the unknown field is what is wrong with it.
      await expectReply('POST', '/admin/v1/merchants', undefined, 422, 'VALIDATION_FAILED', 'pad', atLimit);
    });

    it('a chunked body without Content-Length is cut off at 64 KiB too', async () => {
      const chunk = new TextEncoder().encode(long(16 * 1024, ' '));
      let sent = 0;
      const stream = new ReadableStream<Uint8Array>({
        pull(controller) {
          if (sent++ < 8) controller.enqueue(chunk);
          else controller.close();
        },
      });
      const response = await fetch(`${env.service.url}/admin/v1/merchants`, {
        method: 'POST',
        headers: { authorization: `Bearer ${ADMIN}` },
        body: stream,
        duplex: 'half',
      } as RequestInit);
      expect(response.status).toBe(413);
      // The rest of the body is unread: the connection must not carry another request.
      expect(response.headers.get('connection')).toBe('close');
      expect(await response.json()).toEqual(failure('PAYLOAD_TOO_LARGE'));
      expect((await admin('GET', `/admin/v1/merchants/${merchantId}`)).status).toBe(200);
    });
  });

  it('an unknown field is 422 VALIDATION_FAILED naming it, on every route', async () => {
    for (const [method, path, valid] of bodyRoutes()) {
      await expectReply(method, path, { ...valid, surprise: 1 }, 422, 'VALIDATION_FAILED', 'surprise');
    }
    for (const key of ['__proto__', 'constructor', 'hasOwnProperty', '__defineGetter__', 'toString']) {
      await expectReply('POST', '/admin/v1/merchants', undefined, 422, 'VALIDATION_FAILED', key, `{"name": "Shop", "${key}": {"x": 1}}`);
    }
  });

  const tables: Array<[route: string, method: string, path: () => string, valid: () => Record<string, unknown>, cases: Case[]]> = [
    [
      'POST /staff',
      'POST',
      () => '/admin/v1/staff',
      () => ({ name: 'Eve', role: 'auditor' }),
      [
        ['no name', { name: undefined }, 400, 'MISSING_REQUIRED_FIELD', 'name'],
        ['no role', { role: undefined }, 400, 'MISSING_REQUIRED_FIELD', 'role'],
        ['an unknown role', { role: 'root' }, 422, 'VALIDATION_FAILED', 'role'],
        ['a role in capitals', { role: 'ADMIN' }, 422, 'VALIDATION_FAILED', 'role'],
        ['a number name', { name: 5 }, 422, 'VALIDATION_FAILED', 'name'],
        ['a null name', { name: null }, 422, 'VALIDATION_FAILED', 'name'],
        ['an empty name', { name: '' }, 422, 'VALIDATION_FAILED', 'name'],
        ['a blank name', { name: '   ' }, 422, 'VALIDATION_FAILED', 'name'],
        ['a name with a line break', { name: 'a\nb' }, 422, 'VALIDATION_FAILED', 'name'],
        ['a name of 129 characters', { name: long(129) }, 422, 'VALIDATION_FAILED', 'name'],
      ],
    ],
    [
      'POST /merchants',
      'POST',
      () => '/admin/v1/merchants',
      () => ({ name: 'Shop' }),
      [
        ['no name', { name: undefined }, 400, 'MISSING_REQUIRED_FIELD', 'name'],
        ['no name and a wrong currency: the missing field first', { name: undefined, currency: 5 }, 400, 'MISSING_REQUIRED_FIELD', 'name'],
        ['a lowercase currency', { currency: 'usd' }, 422, 'VALIDATION_FAILED', 'currency'],
        ['a two-letter currency', { currency: 'US' }, 422, 'VALIDATION_FAILED', 'currency'],
        ['a four-letter currency', { currency: 'USDT' }, 422, 'VALIDATION_FAILED', 'currency'],
        ['a number currency', { currency: 840 }, 422, 'VALIDATION_FAILED', 'currency'],
        ['a null currency', { currency: null }, 422, 'VALIDATION_FAILED', 'currency'],
        ['an ftp callback URL', { callback_url: 'ftp://shop.example/cb' }, 422, 'VALIDATION_FAILED', 'callback_url'],
        ['a relative callback URL', { callback_url: '/cb' }, 422, 'VALIDATION_FAILED', 'callback_url'],
        ['a callback URL that is no URL', { callback_url: 'not a url' }, 422, 'VALIDATION_FAILED', 'callback_url'],
        ['an empty callback URL', { callback_url: '' }, 422, 'VALIDATION_FAILED', 'callback_url'],
        ['a callback URL with credentials', { callback_url: 'https://user:pw@shop.example/cb' }, 422, 'VALIDATION_FAILED', 'callback_url'],
        ['a callback URL over 2048 characters', { callback_url: `https://shop.example/${long(2040)}` }, 422, 'VALIDATION_FAILED', 'callback_url'],
        ['a number callback URL', { callback_url: 5 }, 422, 'VALIDATION_FAILED', 'callback_url'],
        [
          'a callback URL that normalising would percent-encode',
          { callback_url: 'https://example.com/cb"><script>alert(2)</script>' },
          422,
          'VALIDATION_FAILED',
          'callback_url',
        ],
        ['a callback URL with a space', { callback_url: 'https://example.com/a b' }, 422, 'VALIDATION_FAILED', 'callback_url'],
        ['a callback URL with a dot segment', { callback_url: 'https://example.com/a/../cb' }, 422, 'VALIDATION_FAILED', 'callback_url'],
        ['a callback URL with its default port', { callback_url: 'https://example.com:443/cb' }, 422, 'VALIDATION_FAILED', 'callback_url'],
        ['a callback URL with a backslash', { callback_url: 'https://example.com\\cb' }, 422, 'VALIDATION_FAILED', 'callback_url'],
        ['a callback URL with a leading space', { callback_url: ' https://example.com/cb' }, 422, 'VALIDATION_FAILED', 'callback_url'],
        ['a whitelist that is a string', { ip_whitelist: '10.0.0.1' }, 422, 'VALIDATION_FAILED', 'ip_whitelist'],
        ['a null whitelist', { ip_whitelist: null }, 422, 'VALIDATION_FAILED', 'ip_whitelist'],
        ['an IPv4 prefix over 32', { ip_whitelist: ['10.0.0.0/33'] }, 422, 'VALIDATION_FAILED', 'ip_whitelist'],
        ['an IPv6 prefix over 128', { ip_whitelist: ['2001:db8::/129'] }, 422, 'VALIDATION_FAILED', 'ip_whitelist'],
        ['a negative prefix', { ip_whitelist: ['10.0.0.0/-1'] }, 422, 'VALIDATION_FAILED', 'ip_whitelist'],
        ['a prefix with a leading zero', { ip_whitelist: ['10.0.0.0/08'] }, 422, 'VALIDATION_FAILED', 'ip_whitelist'],
        ['an empty prefix', { ip_whitelist: ['10.0.0.0/'] }, 422, 'VALIDATION_FAILED', 'ip_whitelist'],
        ['two prefixes', { ip_whitelist: ['10.0.0.0/8/8'] }, 422, 'VALIDATION_FAILED', 'ip_whitelist'],
        ['an octet over 255', { ip_whitelist: ['300.1.1.1'] }, 422, 'VALIDATION_FAILED', 'ip_whitelist'],
        ['a host name', { ip_whitelist: ['shop.example'] }, 422, 'VALIDATION_FAILED', 'ip_whitelist'],
        ['an IPv6 zone id', { ip_whitelist: ['fe80::1%eth0'] }, 422, 'VALIDATION_FAILED', 'ip_whitelist'],
        ['an address with spaces', { ip_whitelist: [' 10.0.0.1'] }, 422, 'VALIDATION_FAILED', 'ip_whitelist'],
        ['a number entry', { ip_whitelist: [167772161] }, 422, 'VALIDATION_FAILED', 'ip_whitelist'],
        ['101 entries', { ip_whitelist: Array.from({ length: 101 }, (_, i) => `10.0.0.${i}`) }, 422, 'VALIDATION_FAILED', 'ip_whitelist'],
        ['a rate limit of 0', { rate_limit_per_second: 0 }, 422, 'VALIDATION_FAILED', 'rate_limit_per_second'],
        ['a rate limit over 100000', { rate_limit_per_second: 100_001 }, 422, 'VALIDATION_FAILED', 'rate_limit_per_second'],
        ['a fractional rate limit', { rate_limit_per_second: 1.5 }, 422, 'VALIDATION_FAILED', 'rate_limit_per_second'],
        ['a string rate limit', { rate_limit_per_second: '100' }, 422, 'VALIDATION_FAILED', 'rate_limit_per_second'],
        ['a null rate limit', { rate_limit_per_second: null }, 422, 'VALIDATION_FAILED', 'rate_limit_per_second'],
        ['a JSON number threshold', { low_balance_threshold: 100 }, 422, 'VALIDATION_FAILED', 'low_balance_threshold'],
        ['a zero threshold', { low_balance_threshold: '0.00' }, 422, 'VALIDATION_FAILED', 'low_balance_threshold'],
        ['a negative threshold', { low_balance_threshold: '-1.00' }, 422, 'VALIDATION_FAILED', 'low_balance_threshold'],
        ['a threshold with three decimals', { low_balance_threshold: '1.001' }, 422, 'VALIDATION_FAILED', 'low_balance_threshold'],
        ['a threshold over MAX_AMOUNT', { low_balance_threshold: '10000000000000.01' }, 422, 'VALIDATION_FAILED', 'low_balance_threshold'],
        ['an empty threshold', { low_balance_threshold: '' }, 422, 'VALIDATION_FAILED', 'low_balance_threshold'],
        ['a threshold with a currency', { low_balance_threshold: 'USD 100' }, 422, 'VALIDATION_FAILED', 'low_balance_threshold'],
        ['status on creation', { status: 'suspended' }, 422, 'VALIDATION_FAILED', 'status'],
        ['a chosen api key', { api_key: 'ak_mine' }, 422, 'VALIDATION_FAILED', 'api_key'],
      ],
    ],
    [
      'PATCH /merchants/:id',
      'PATCH',
      () => `/admin/v1/merchants/${merchantId}`,
      () => ({}),
      [
        ['an empty object', {}, 422, 'VALIDATION_FAILED', undefined],
        ['a name (not changeable)', { name: 'Renamed' }, 422, 'VALIDATION_FAILED', 'name'],
        ['a currency (not changeable)', { currency: 'EUR' }, 422, 'VALIDATION_FAILED', 'currency'],
        ['an unknown status', { status: 'deleted' }, 422, 'VALIDATION_FAILED', 'status'],
        ['a null status', { status: null }, 422, 'VALIDATION_FAILED', 'status'],
        ['a bad callback URL', { callback_url: 'javascript:alert(1)' }, 422, 'VALIDATION_FAILED', 'callback_url'],
        [
          'a callback URL that normalising would percent-encode',
          { callback_url: 'https://example.com/cb"><script>alert(2)</script>' },
          422,
          'VALIDATION_FAILED',
          'callback_url',
        ],
        ['a bad CIDR', { ip_whitelist: ['192.168.0.0/40'] }, 422, 'VALIDATION_FAILED', 'ip_whitelist'],
        ['a bad rate limit', { rate_limit_per_second: -5 }, 422, 'VALIDATION_FAILED', 'rate_limit_per_second'],
        ['a JSON number threshold', { low_balance_threshold: 50 }, 422, 'VALIDATION_FAILED', 'low_balance_threshold'],
        ['a zero threshold', { low_balance_threshold: '0' }, 422, 'VALIDATION_FAILED', 'low_balance_threshold'],
        ['a threshold with an exponent', { low_balance_threshold: '1e3' }, 422, 'VALIDATION_FAILED', 'low_balance_threshold'],
      ],
    ],
    [
      'POST /merchants/:id/deposits',
      'POST',
      () => `/admin/v1/merchants/${merchantId}/deposits`,
      () => ({ amount: '1.00', reference: 'valid' }),
      [
        ['no amount', { amount: undefined }, 400, 'MISSING_REQUIRED_FIELD', 'amount'],
        ['no reference', { reference: undefined }, 400, 'MISSING_REQUIRED_FIELD', 'reference'],
        ['a JSON number amount', { amount: 100 }, 422, 'VALIDATION_FAILED', 'amount'],
        ['a JSON number amount with decimals', { amount: 1.5 }, 422, 'VALIDATION_FAILED', 'amount'],
        ['a null amount', { amount: null }, 422, 'VALIDATION_FAILED', 'amount'],
        ['three decimals', { amount: '100.001' }, 422, 'VALIDATION_FAILED', 'amount'],
        ['a negative amount', { amount: '-1.00' }, 422, 'VALIDATION_FAILED', 'amount'],
        ['zero', { amount: '0.00' }, 422, 'VALIDATION_FAILED', 'amount'],
        ['an exponent', { amount: '1e3' }, 422, 'VALIDATION_FAILED', 'amount'],
        ['spaces', { amount: ' 1.00' }, 422, 'VALIDATION_FAILED', 'amount'],
        ['a comma', { amount: '1,00' }, 422, 'VALIDATION_FAILED', 'amount'],
        ['an empty amount', { amount: '' }, 422, 'VALIDATION_FAILED', 'amount'],
        ['more than MAX_AMOUNT', { amount: '10000000000000.01' }, 422, 'VALIDATION_FAILED', 'amount'],
        ['an empty reference', { reference: '' }, 422, 'VALIDATION_FAILED', 'reference'],
        ['a reference of 129 characters', { reference: long(129) }, 422, 'VALIDATION_FAILED', 'reference'],
        ['a non-ASCII reference', { reference: 'réf' }, 422, 'VALIDATION_FAILED', 'reference'],
        ['a reference with a line break', { reference: 'a\nb' }, 422, 'VALIDATION_FAILED', 'reference'],
        ['a number reference', { reference: 12345 }, 422, 'VALIDATION_FAILED', 'reference'],
      ],
    ],
    [
      'PUT /products/:id',
      'PUT',
      () => '/admin/v1/products/p-3',
      () => ({ name: 'Product' }),
      [
        ['no name', { name: undefined }, 400, 'MISSING_REQUIRED_FIELD', 'name'],
        ['a number name', { name: 1 }, 422, 'VALIDATION_FAILED', 'name'],
        ['an array name', { name: ['a'] }, 422, 'VALIDATION_FAILED', 'name'],
      ],
    ],
    [
      'PUT /skus/:id',
      'PUT',
      () => '/admin/v1/skus/s-3',
      () => ({ ...VALID_SKU }),
      [
        ['no product_id', { product_id: undefined }, 400, 'MISSING_REQUIRED_FIELD', 'product_id'],
        ['no name', { name: undefined }, 400, 'MISSING_REQUIRED_FIELD', 'name'],
        ['no required_account_fields', { required_account_fields: undefined }, 400, 'MISSING_REQUIRED_FIELD', 'required_account_fields'],
        ['no supports_account_check', { supports_account_check: undefined }, 400, 'MISSING_REQUIRED_FIELD', 'supports_account_check'],
        ['no on_shelf', { on_shelf: undefined }, 400, 'MISSING_REQUIRED_FIELD', 'on_shelf'],
        ['a product_id with a space', { product_id: 'p 1' }, 422, 'VALIDATION_FAILED', 'product_id'],
        ['a number product_id', { product_id: 1 }, 422, 'VALIDATION_FAILED', 'product_id'],
        ['account fields as a string', { required_account_fields: 'server_id' }, 422, 'VALIDATION_FAILED', 'required_account_fields'],
        ['an account field in capitals', { required_account_fields: ['Server'] }, 422, 'VALIDATION_FAILED', 'required_account_fields'],
        ['an account field starting with a digit', { required_account_fields: ['1x'] }, 422, 'VALIDATION_FAILED', 'required_account_fields'],
        ['an account field of 33 characters', { required_account_fields: [long(33)] }, 422, 'VALIDATION_FAILED', 'required_account_fields'],
        ['a repeated account field', { required_account_fields: ['zone', 'zone'] }, 422, 'VALIDATION_FAILED', 'required_account_fields'],
        ['a number account field', { required_account_fields: [1] }, 422, 'VALIDATION_FAILED', 'required_account_fields'],
        ['a string boolean', { supports_account_check: 'true' }, 422, 'VALIDATION_FAILED', 'supports_account_check'],
        ['a number boolean', { on_shelf: 1 }, 422, 'VALIDATION_FAILED', 'on_shelf'],
        ['a null on_shelf', { on_shelf: null }, 422, 'VALIDATION_FAILED', 'on_shelf'],
        ['an empty route', { route: '' }, 422, 'VALIDATION_FAILED', 'route'],
        ['a route with a slash', { route: 'a/b' }, 422, 'VALIDATION_FAILED', 'route'],
        ['a number route', { route: 7 }, 422, 'VALIDATION_FAILED', 'route'],
      ],
    ],
    [
      'PUT /merchants/:id/prices/:sku',
      'PUT',
      () => `/admin/v1/merchants/${merchantId}/prices/s-1`,
      () => ({ price: '1.20' }),
      [
        ['no price', { price: undefined }, 400, 'MISSING_REQUIRED_FIELD', 'price'],
        ['a JSON number price', { price: 1.2 }, 422, 'VALIDATION_FAILED', 'price'],
        ['a zero price', { price: '0.00' }, 422, 'VALIDATION_FAILED', 'price'],
        ['a negative price', { price: '-1.20' }, 422, 'VALIDATION_FAILED', 'price'],
        ['three decimals', { price: '1.205' }, 422, 'VALIDATION_FAILED', 'price'],
      ],
    ],
  ];

  describe.each(tables)('%s', (_route, method, path, valid, cases) => {
    it('accepts the valid body', async () => {
      if (method === 'PATCH') return; // an empty PATCH is refused; the PATCH happy paths are in merchants.test.ts
      const reply = await admin(method, path(), valid());
      expect(reply.status).toBe(method === 'POST' ? 201 : 200);
    });

    it.each(cases)('%s', async (_name, change, status, code, field) => {
      const body = { ...valid(), ...(change as object) };
      await expectReply(method, path(), body, status, code, field);
    });
  });

  it('accepts the edges of every range', async () => {
    const edges = await admin('POST', '/admin/v1/merchants', {
      name: long(128),
      rate_limit_per_second: 100_000,
      ip_whitelist: [...Array.from({ length: 98 }, (_, i) => `10.0.${i}.0/24`), '0.0.0.0/0', '::/0'],
      callback_url: null,
      low_balance_threshold: '10000000000000.00',
    });
    expect(edges.status).toBe(201);
    expect(edges.body.data).toMatchObject({ rate_limit_per_second: 100_000, callback_url: null, low_balance_threshold: '10000000000000.00' });
    expect(edges.body.data.ip_whitelist).toHaveLength(100);
    const one = await admin('PATCH', `/admin/v1/merchants/${edges.body.data.merchant_id}`, {
      rate_limit_per_second: 1,
      ip_whitelist: [],
      low_balance_threshold: '0.01',
    });
    expect(one.body.data).toMatchObject({ rate_limit_per_second: 1, ip_whitelist: [], low_balance_threshold: '0.01' });
    const none = await admin('POST', '/admin/v1/merchants', { name: 'No alert', low_balance_threshold: null });
    expect(none.body.data).toMatchObject({ low_balance_threshold: null });
    const reference = await admin('POST', `/admin/v1/merchants/${merchantId}/deposits`, { amount: '0.01', reference: ` ~${long(126, '!')}` });
    expect(reference.status).toBe(201);
    const fields = await admin('PUT', '/admin/v1/skus/s-edges', {
      ...VALID_SKU,
      required_account_fields: [long(32, 'z'), ...Array.from({ length: 19 }, (_, i) => `f_${i}`)],
    });
    expect(fields.status).toBe(200);
  });

  describe('path ids', () => {
    const badIds = ['bad%20id', long(65), '%C3%A4', 'a%2Fb', 'semi%3Bcolon'];
    const routes = (id: string): Array<[string, string, unknown, string]> => [
      ['GET', `/admin/v1/merchants/${id}`, undefined, 'merchant_id'],
      ['PATCH', `/admin/v1/merchants/${id}`, { status: 'active' }, 'merchant_id'],
      ['POST', `/admin/v1/merchants/${id}/deposits`, { amount: '1.00', reference: 'r' }, 'merchant_id'],
      ['PUT', `/admin/v1/products/${id}`, { name: 'x' }, 'product_id'],
      ['PUT', `/admin/v1/skus/${id}`, VALID_SKU, 'sku_id'],
      ['PUT', `/admin/v1/merchants/${id}/prices/s-1`, { price: '1.00' }, 'merchant_id'],
      ['PUT', `/admin/v1/merchants/${merchantId}/prices/${id}`, { price: '1.00' }, 'sku_id'],
    ];
    it.each(badIds)('%s is 422 VALIDATION_FAILED naming the parameter on every route', async (id) => {
      for (const [method, path, body, field] of routes(id)) await expectReply(method, path, body, 422, 'VALIDATION_FAILED', field);
    });

    it('names the first bad id in path order, before any problem with the body', async () => {
      await expectReply('PUT', '/admin/v1/merchants/bad%20m/prices/bad%20s', { price: 1 }, 422, 'VALIDATION_FAILED', 'merchant_id');
      await expectReply('PUT', `/admin/v1/merchants/${merchantId}/prices/bad%20s`, { price: 1 }, 422, 'VALIDATION_FAILED', 'sku_id');
      await expectReply('PATCH', '/admin/v1/merchants/bad%20m', { status: 5 }, 422, 'VALIDATION_FAILED', 'merchant_id');
      await expectReply('POST', '/admin/v1/merchants/bad%20m/deposits', {}, 422, 'VALIDATION_FAILED', 'merchant_id');
    });

    it('accepts all of A-Z a-z 0-9 - _ . : and 64 characters', async () => {
      const id = `Az09-_.:${long(56)}`;
      expect((await admin('PUT', `/admin/v1/products/${id}`, { name: 'Edge' })).body.data.product_id).toBe(id);
    });
  });
});
