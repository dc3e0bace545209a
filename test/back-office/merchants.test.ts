import { AppSecretCipher } from '../../src/merchant-directory/app-secret.cipher';
import { MerchantDirectory } from '../../src/merchant-directory/merchant-directory';
import { signedFetch } from '../support/merchant-fixture';
import { serviceOnFreshDatabase, TEST_ENV } from '../support/service';
import { walletAmounts } from '../support/fixtures';
import { adminClient, failure } from './admin-client';

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}\+00:00$/;

describe('back office: merchants', () => {
  let env: Awaited<ReturnType<typeof serviceOnFreshDatabase>>;
  let admin: ReturnType<typeof adminClient>;
  beforeAll(async () => {
    env = await serviceOnFreshDatabase();
    admin = adminClient(env.service.url);
  });
  afterAll(() => env?.teardown());

  describe('POST /admin/v1/merchants', () => {
    it('creates an active merchant with defaults, credentials shown once, and an open wallet', async () => {
      const reply = await admin('POST', '/admin/v1/merchants', { name: 'Acme Games' });
      expect(reply.status).toBe(201);
      expect(reply.body).toEqual({
        success: true,
        code: 'OK',
        data: {
          merchant_id: expect.stringMatching(/^mch_[0-9a-f]{16}$/),
          name: 'Acme Games',
          currency: 'USD',
          api_key: expect.stringMatching(/^ak_[0-9a-f]{32}$/),
          app_secret: expect.stringMatching(/^[0-9a-f]{64}$/),
          callback_url: null,
          ip_whitelist: [],
          status: 'active',
          rate_limit_per_second: 100,
          low_balance_threshold: null,
          created_at: expect.stringMatching(ISO),
          created_by: 'admin',
          created_by_name: 'Administrator (ADMIN_TOKEN)',
          updated_at: expect.stringMatching(ISO),
          updated_by: 'admin',
          updated_by_name: 'Administrator (ADMIN_TOKEN)',
          previous_secret_valid_until: null,
        },
      });
      const { merchant_id } = reply.body.data;
      expect(await walletAmounts(env.service.store, merchant_id)).toEqual([0n, 0n, 0n]);
      const events = await env.service.store.readStream(`wallet-${merchant_id}`);
      expect(events.map((e) => [e.type, (e.data as { currency: string }).currency])).toEqual([['WalletOpened', 'USD']]);
    });

    it('takes every optional field', async () => {
      const data = await admin.createMerchant({
        name: 'Euro Shop',
        currency: 'EUR',
        callback_url: 'https://shop.example/topup/callback?x=1',
        ip_whitelist: ['127.0.0.1', '10.0.0.0/8', '2001:db8::/32', '::1'],
        rate_limit_per_second: 5,
        low_balance_threshold: '250.5',
      });
      expect(data).toMatchObject({
        currency: 'EUR',
        callback_url: 'https://shop.example/topup/callback?x=1',
        ip_whitelist: ['127.0.0.1', '10.0.0.0/8', '2001:db8::/32', '::1'],
        rate_limit_per_second: 5,
        low_balance_threshold: '250.50',
      });
      const { rows } = await env.db.pool.query('select low_balance_threshold::text as minor from merchants where merchant_id = $1', [data.merchant_id]);
      expect(rows).toEqual([{ minor: '25050' }]);
    });

    it('stores a callback URL in its normalised (WHATWG) form: the scheme and host in lower case, an empty path as "/"', async () => {
      const cases: [string, string][] = [
        ['https://EXAMPLE.com', 'https://example.com/'],
        ['https://example.com', 'https://example.com/'],
        ['HTTPS://Shop.Example:8443?x=1', 'https://shop.example:8443/?x=1'],
        ['https://shop.example/Topup/Callback?Order=A%20B#Frag', 'https://shop.example/Topup/Callback?Order=A%20B#Frag'],
        ['http://[2001:db8::1]:8080/cb', 'http://[2001:db8::1]:8080/cb'],
      ];
      for (const [given, stored] of cases) {
        const data = await admin.createMerchant({ callback_url: given });
        expect({ given, stored: data.callback_url }).toEqual({ given, stored });
        const { rows } = await env.db.pool.query('select callback_url from merchants where merchant_id = $1', [data.merchant_id]);
        expect(rows).toEqual([{ callback_url: stored }]);
      }
      const created = await admin.createMerchant();
      const patched = await admin('PATCH', `/admin/v1/merchants/${created.merchant_id}`, { callback_url: 'https://Shop.EXAMPLE' });
      expect(patched.status).toBe(200);
      expect(patched.body.data.callback_url).toBe('https://shop.example/');
    });

    it('refuses a callback URL that normalising would change otherwise, 422 VALIDATION_FAILED naming callback_url and the normalised form', async () => {
      const hostile = 'https://example.com/cb"><script>alert(2)</script>';
      const reply = await admin('POST', '/admin/v1/merchants', { name: 'Shop', callback_url: hostile });
      expect(reply.status).toBe(422);
      expect(reply.body).toEqual({
        success: false,
        code: 'VALIDATION_FAILED',
        field: 'callback_url',
        message:
          'callback_url must be written in its normalised form (WHATWG URL serialisation), which is https://example.com/cb%22%3E%3Cscript%3Ealert(2)%3C/script%3E; ' +
          'the only differences allowed are the letter case of the scheme and host, and "/" for an empty path',
      });
      const created = await admin.createMerchant({ callback_url: 'https://shop.example/cb' });
      const patch = await admin('PATCH', `/admin/v1/merchants/${created.merchant_id}`, { callback_url: hostile });
      expect(patch.status).toBe(422);
      expect(patch.body).toMatchObject({ code: 'VALIDATION_FAILED', field: 'callback_url' });
      expect((await admin('GET', `/admin/v1/merchants/${created.merchant_id}`)).body.data.callback_url).toBe('https://shop.example/cb');
    });

    it('hands out different ids and credentials every time', async () => {
      const [a, b] = await Promise.all([admin.createMerchant(), admin.createMerchant()]);
      expect(a.merchant_id).not.toBe(b.merchant_id);
      expect(a.api_key).not.toBe(b.api_key);
      expect(a.app_secret).not.toBe(b.app_secret);
    });

    it('creates many more merchants at once than the service has pooled connections, each with its wallet', async () => {
      const created = await Promise.all(Array.from({ length: 150 }, (_, i) => admin.createMerchant({ name: `Bulk ${i}` })));
      expect(new Set(created.map((m) => m.merchant_id)).size).toBe(150);
      const wallets = await Promise.all(created.map((m) => env.service.store.readStream(`wallet-${m.merchant_id}`)));
      expect(wallets.every((events) => events.length === 1 && events[0].type === 'WalletOpened')).toBe(true);
    });

    it('stores the app secret only encrypted under SECRETS_KEY', async () => {
      const data = await admin.createMerchant();
      const { rows } = await env.db.pool.query<{ app_secret_enc: Buffer }>('select app_secret_enc from merchants where merchant_id = $1', [data.merchant_id]);
      const sealed = rows[0].app_secret_enc;
      expect(sealed.toString('latin1')).not.toContain(data.app_secret);
      expect(sealed.toString('hex')).not.toContain(data.app_secret);
      expect(sealed.includes(Buffer.from(data.app_secret, 'hex'))).toBe(false);
      expect(new AppSecretCipher(Buffer.from(TEST_ENV.SECRETS_KEY, 'hex')).decrypt(sealed)).toBe(data.app_secret);
      // The merchant API reads the same secret back.
      const found = await env.service.app.get(MerchantDirectory).byApiKey(data.api_key);
      expect(found).toMatchObject({ merchantId: data.merchant_id, appSecret: data.app_secret, status: 'active' });
    });

    it('records who created it in the row and in the audit trail, without the secret', async () => {
      const staff = await admin.createStaff('admin', 'Second Admin');
      const data = await admin.createMerchant({ name: 'Audited', ip_whitelist: ['192.168.1.0/24'] });
      const byStaff = await admin('POST', '/admin/v1/merchants', { name: 'By staff' }, { token: staff.token });
      expect(byStaff.status).toBe(201);
      expect(byStaff.body.data).toMatchObject({ created_by: staff.staff_id, updated_by: staff.staff_id });

      const { rows } = await env.db.pool.query('select staff_id, action, target, details from back_office_audit where target = $1', [
        `merchant:${data.merchant_id}`,
      ]);
      expect(rows).toEqual([
        {
          staff_id: 'admin',
          action: 'merchant.created',
          target: `merchant:${data.merchant_id}`,
          details: {
            name: 'Audited',
            currency: 'USD',
            callback_url: null,
            ip_whitelist: ['192.168.1.0/24'],
            rate_limit_per_second: 100,
            low_balance_threshold: null,
          },
        },
      ]);
      const other = await env.db.pool.query('select staff_id from back_office_audit where target = $1', [`merchant:${byStaff.body.data.merchant_id}`]);
      expect(other.rows).toEqual([{ staff_id: staff.staff_id }]);
      const all = await env.db.pool.query<{ details: unknown }>('select details from back_office_audit');
      for (const row of all.rows) expect(JSON.stringify(row.details)).not.toContain(byStaff.body.data.app_secret);
    });
  });

  describe('GET /admin/v1/merchants/:merchant_id', () => {
    it('returns the merchant without the app secret', async () => {
      const created = await admin.createMerchant({ callback_url: 'http://127.0.0.1:9/cb' });
      const reply = await admin('GET', `/admin/v1/merchants/${created.merchant_id}`);
      expect(reply.status).toBe(200);
      const { app_secret, ...expected } = created;
      expect(reply.body).toEqual({ success: true, code: 'OK', data: expected });
      expect(JSON.stringify(reply.body)).not.toContain(app_secret);
      expect(reply.body.data).not.toHaveProperty('app_secret');
      expect(reply.body.data).not.toHaveProperty('app_secret_enc');
    });

    it('answers 404 MERCHANT_NOT_FOUND for an unknown merchant', async () => {
      const reply = await admin('GET', '/admin/v1/merchants/mch_0000000000000000');
      expect(reply.status).toBe(404);
      expect(reply.body).toEqual(failure('MERCHANT_NOT_FOUND'));
    });
  });

  describe('PATCH /admin/v1/merchants/:merchant_id', () => {
    it('changes each field, stamps who and when, and audits old and new values', async () => {
      const created = await admin.createMerchant({ callback_url: 'https://a.example/cb' });
      const staff = await admin.createStaff('admin');
      const reply = await admin(
        'PATCH',
        `/admin/v1/merchants/${created.merchant_id}`,
        { callback_url: null, ip_whitelist: ['203.0.113.7', '2001:db8::/48'], status: 'suspended', rate_limit_per_second: 7 },
        { token: staff.token },
      );
      expect(reply.status).toBe(200);
      expect(reply.body.data).toEqual({
        ...Object.fromEntries(Object.entries(created).filter(([k]) => k !== 'app_secret')),
        callback_url: null,
        ip_whitelist: ['203.0.113.7', '2001:db8::/48'],
        status: 'suspended',
        rate_limit_per_second: 7,
        updated_at: expect.stringMatching(ISO),
        updated_by: staff.staff_id,
        updated_by_name: staff.name,
      });
      expect(reply.body.data.updated_at >= created.updated_at).toBe(true);
      const { rows } = await env.db.pool.query(`select staff_id, details from back_office_audit where target = $1 and action = 'merchant.updated'`, [
        `merchant:${created.merchant_id}`,
      ]);
      expect(rows).toEqual([
        {
          staff_id: staff.staff_id,
          details: {
            changes: {
              callback_url: { from: 'https://a.example/cb', to: null },
              ip_whitelist: { from: [], to: ['203.0.113.7', '2001:db8::/48'] },
              status: { from: 'active', to: 'suspended' },
              rate_limit_per_second: { from: 100, to: 7 },
            },
          },
        },
      ]);
    });

    it('sets, changes and removes the low-balance threshold, auditing each change as money', async () => {
      const created = await admin.createMerchant({ low_balance_threshold: '10' });
      expect(created.low_balance_threshold).toBe('10.00');
      const path = `/admin/v1/merchants/${created.merchant_id}`;
      const raised = await admin('PATCH', path, { low_balance_threshold: '1000.05' });
      expect(raised.status).toBe(200);
      expect(raised.body.data).toMatchObject({ low_balance_threshold: '1000.05', rate_limit_per_second: 100, status: 'active' });
      const removed = await admin('PATCH', path, { low_balance_threshold: null });
      expect(removed.body.data.low_balance_threshold).toBeNull();
      expect((await admin('GET', path)).body.data.low_balance_threshold).toBeNull();
      const { rows } = await env.db.pool.query(`select details from back_office_audit where target = $1 order by id`, [`merchant:${created.merchant_id}`]);
      expect(rows.map((row) => row.details)).toEqual([
        expect.objectContaining({ low_balance_threshold: '10.00' }),
        { changes: { low_balance_threshold: { from: '10.00', to: '1000.05' } } },
        { changes: { low_balance_threshold: { from: '1000.05', to: null } } },
      ]);
    });

    it('changes only the fields given, and a suspension reaches the merchant API at once', async () => {
      const created = await admin.createMerchant({ ip_whitelist: ['10.1.2.3'] });
      const merchant = { merchantId: created.merchant_id, apiKey: created.api_key, appSecret: created.app_secret };
      const balance = async () => (await signedFetch(env.service, merchant, { path: '/api/v2/balance' })).body.code;
      // Suspension is checked before the whitelist, which refuses this test's address.
      expect(await balance()).toBe('IP_NOT_ALLOWED');
      const reply = await admin('PATCH', `/admin/v1/merchants/${created.merchant_id}`, { status: 'suspended' });
      expect(reply.status).toBe(200);
      expect(reply.body.data).toMatchObject({ status: 'suspended', ip_whitelist: ['10.1.2.3'], rate_limit_per_second: 100 });
      expect(await balance()).toBe('MERCHANT_SUSPENDED');
      const back = await admin('PATCH', `/admin/v1/merchants/${created.merchant_id}`, { status: 'active', callback_url: 'http://cb.example:8080/x' });
      expect(back.body.data).toMatchObject({ status: 'active', callback_url: 'http://cb.example:8080/x' });
      const fetched = await admin('GET', `/admin/v1/merchants/${created.merchant_id}`);
      expect(fetched.body.data).toEqual(back.body.data);
    });

    it('answers 404 MERCHANT_NOT_FOUND for an unknown merchant and writes nothing', async () => {
      const reply = await admin('PATCH', '/admin/v1/merchants/mch_ffffffffffffffff', { status: 'suspended' });
      expect(reply.status).toBe(404);
      expect(reply.body).toEqual(failure('MERCHANT_NOT_FOUND'));
      const { rows } = await env.db.pool.query(`select 1 from back_office_audit where target = 'merchant:mch_ffffffffffffffff'`);
      expect(rows).toEqual([]);
    });
  });
});
