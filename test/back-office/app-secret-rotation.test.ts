import { AppSecretCipher } from '../../src/merchant-directory/app-secret.cipher';
import { resealSecrets, surveySecrets } from '../../src/merchant-directory/stored-secrets';
import { signedFetch, TestMerchant } from '../support/merchant-fixture';
import { serviceOnFreshDatabase, TEST_ENV } from '../support/service';
import { adminClient, failure } from './admin-client';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('back office: rotating a merchant app secret with an overlap window', () => {
  let env: Awaited<ReturnType<typeof serviceOnFreshDatabase>>;
  let admin: ReturnType<typeof adminClient>;
  beforeAll(async () => {
    env = await serviceOnFreshDatabase();
    admin = adminClient(env.service.url);
  });
  afterAll(() => env?.teardown());

  const newMerchant = async (): Promise<TestMerchant> => {
    const created = await admin.createMerchant();
    return { merchantId: created.merchant_id, apiKey: created.api_key, appSecret: created.app_secret };
  };
  const rotate = async (merchant: TestMerchant, overlapSeconds: number) => {
    const reply = await admin('POST', `/admin/v1/merchants/${merchant.merchantId}/app-secret`, { overlap_seconds: overlapSeconds });
    expect(reply.status).toBe(200);
    return reply.body.data as Record<string, any>;
  };
  /** The outcome of a balance request signed with `secret`. */
  const signedWith = async (merchant: TestMerchant, secret: string) => {
    const reply = await signedFetch(env.service, { ...merchant, appSecret: secret }, { path: '/api/v2/balance' });
    return `${reply.status} ${reply.body.code}`;
  };
  const selfCheck = async (merchant: TestMerchant, secret: string) =>
    (await signedFetch(env.service, { ...merchant, appSecret: secret }, { path: '/api/v2/tools/verify-signature' })).body.data.signature_matches;

  it('without an overlap the new secret alone verifies, from the very next request', async () => {
    const merchant = await newMerchant();
    const data = await rotate(merchant, 0);
    expect(data.app_secret).toMatch(/^[0-9a-f]{64}$/);
    expect(data.app_secret).not.toBe(merchant.appSecret);
    expect(data.previous_secret_valid_until).toBeNull();
    expect(await signedWith(merchant, merchant.appSecret)).toBe('401 INVALID_SIGNATURE');
    expect(await signedWith(merchant, data.app_secret)).toBe('200 OK');
    // The secret is shown once: reads never carry it.
    const read = await admin('GET', `/admin/v1/merchants/${merchant.merchantId}`);
    expect(read.body.data).not.toHaveProperty('app_secret');
    expect(JSON.stringify(read.body)).not.toContain(data.app_secret);
  });

  it('with an overlap both secrets verify until the end the operator chose, and the merchant read shows that end', async () => {
    const merchant = await newMerchant();
    const before = Date.now();
    const data = await rotate(merchant, 3600);
    const end = Date.parse(data.previous_secret_valid_until);
    expect(end).toBeGreaterThanOrEqual(before + 3600_000 - 2000);
    expect(end).toBeLessThanOrEqual(Date.now() + 3600_000 + 2000);
    expect(await signedWith(merchant, merchant.appSecret)).toBe('200 OK');
    expect(await signedWith(merchant, data.app_secret)).toBe('200 OK');
    expect(await selfCheck(merchant, merchant.appSecret)).toBe(true);
    expect((await admin('GET', `/admin/v1/merchants/${merchant.merchantId}`)).body.data.previous_secret_valid_until).toBe(data.previous_secret_valid_until);
  });

  it('the old secret stops at the end of the overlap', async () => {
    const merchant = await newMerchant();
    const data = await rotate(merchant, 1);
    expect(await signedWith(merchant, merchant.appSecret)).toBe('200 OK');
    await sleep(Math.max(0, Date.parse(data.previous_secret_valid_until) - Date.now()) + 50);
    expect(await signedWith(merchant, merchant.appSecret)).toBe('401 INVALID_SIGNATURE');
    expect(await selfCheck(merchant, merchant.appSecret)).toBe(false);
    expect(await signedWith(merchant, data.app_secret)).toBe('200 OK');
    expect((await admin('GET', `/admin/v1/merchants/${merchant.merchantId}`)).body.data.previous_secret_valid_until).toBeNull();
  });

  it('ending the overlap early refuses the old secret on the next request', async () => {
    const merchant = await newMerchant();
    const data = await rotate(merchant, 3600);
    expect(await signedWith(merchant, merchant.appSecret)).toBe('200 OK');
    const ended = await admin('DELETE', `/admin/v1/merchants/${merchant.merchantId}/app-secret/previous`);
    expect(ended.status).toBe(200);
    expect(ended.body.data.previous_secret_valid_until).toBeNull();
    expect(await signedWith(merchant, merchant.appSecret)).toBe('401 INVALID_SIGNATURE');
    expect(await signedWith(merchant, data.app_secret)).toBe('200 OK');
  });

  it('a second rotation within the overlap retires the oldest secret: at most two ever verify', async () => {
    const merchant = await newMerchant();
    const second = await rotate(merchant, 3600);
    const third = await rotate(merchant, 3600);
    expect(await signedWith(merchant, merchant.appSecret)).toBe('401 INVALID_SIGNATURE');
    expect(await signedWith(merchant, second.app_secret)).toBe('200 OK');
    expect(await signedWith(merchant, third.app_secret)).toBe('200 OK');
  });

  it('is audited without the secret', async () => {
    const merchant = await newMerchant();
    const data = await rotate(merchant, 60);
    await admin('DELETE', `/admin/v1/merchants/${merchant.merchantId}/app-secret/previous`);
    const { rows } = await env.db.pool.query(
      `select staff_id, action, details from back_office_audit where target = $1 and action <> 'merchant.created' order by id`,
      [`merchant:${merchant.merchantId}`],
    );
    expect(rows).toEqual([
      { staff_id: 'admin', action: 'merchant.app_secret_rotated', details: { overlap_seconds: 60, previous_secret_valid_until: expect.any(String) } },
      { staff_id: 'admin', action: 'merchant.previous_app_secret_revoked', details: { was_valid_until: expect.any(String) } },
    ]);
    expect(JSON.stringify(rows)).not.toContain(data.app_secret);
    expect(JSON.stringify(rows)).not.toContain(merchant.appSecret);
  });

  it.each([
    [{}, 400, 'MISSING_REQUIRED_FIELD', 'overlap_seconds'],
    [{ overlap_seconds: -1 }, 422, 'VALIDATION_FAILED', 'overlap_seconds'],
    [{ overlap_seconds: 30 * 86_400 + 1 }, 422, 'VALIDATION_FAILED', 'overlap_seconds'],
    [{ overlap_seconds: '60' }, 422, 'VALIDATION_FAILED', 'overlap_seconds'],
    [{ overlap_seconds: 1.5 }, 422, 'VALIDATION_FAILED', 'overlap_seconds'],
    [{ overlap_seconds: 60, app_secret: 'mine' }, 422, 'VALIDATION_FAILED', 'app_secret'],
  ])('refuses %j with %i %s naming the field, and keeps the secret', async (body, status, code, field) => {
    const merchant = await newMerchant();
    const reply = await admin('POST', `/admin/v1/merchants/${merchant.merchantId}/app-secret`, body);
    expect({ status: reply.status, body: reply.body }).toEqual({ status, body: failure(code, field) });
    expect(await signedWith(merchant, merchant.appSecret)).toBe('200 OK');
  });

  it('an unknown merchant gets 404, and only admins may rotate', async () => {
    expect((await admin('POST', '/admin/v1/merchants/mch_0000000000000000/app-secret', { overlap_seconds: 0 })).body).toEqual(failure('MERCHANT_NOT_FOUND'));
    expect((await admin('DELETE', '/admin/v1/merchants/mch_0000000000000000/app-secret/previous')).status).toBe(404);
    const merchant = await newMerchant();
    for (const role of ['reconciler', 'auditor']) {
      const { token } = await admin.createStaff(role);
      const reply = await admin('POST', `/admin/v1/merchants/${merchant.merchantId}/app-secret`, { overlap_seconds: 0 }, { token });
      expect(reply.status).toBe(403);
    }
    expect(await signedWith(merchant, merchant.appSecret)).toBe('200 OK');
  });

  it('a SECRETS_KEY rotation reseals the replaced secret too while its overlap runs', async () => {
    const merchant = await newMerchant();
    const data = await rotate(merchant, 3600);
    const oldKey = Buffer.from(TEST_ENV.SECRETS_KEY, 'hex');
    const newKey = Buffer.alloc(32, 7);
    const both = new AppSecretCipher(newKey, [oldKey]);
    const survey = await surveySecrets(env.db.pool, both);
    // Every merchant of this suite is under the old key; this one has two secrets.
    expect(survey.underPrevious).toBe(survey.total);
    expect(survey.unopenable).toEqual([]);
    await resealSecrets(env.db.pool, both);
    const { rows } = await env.db.pool.query(`select app_secret_enc, previous_app_secret_enc from merchants where merchant_id = $1`, [merchant.merchantId]);
    const onlyNew = new AppSecretCipher(newKey);
    expect(onlyNew.decrypt(rows[0].app_secret_enc)).toBe(data.app_secret);
    expect(onlyNew.decrypt(rows[0].previous_app_secret_enc)).toBe(merchant.appSecret);
    // Put the suite's merchants back under the key the service holds.
    await resealSecrets(env.db.pool, new AppSecretCipher(oldKey, [newKey]));
  });
});
