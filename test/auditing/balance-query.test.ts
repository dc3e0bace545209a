import { walletStream } from '../../src/ledger/streams';
import { adminClient } from '../back-office/admin-client';
import { handFold } from '../support/expectations';
import { provisionMerchant, signedFetch, TestMerchant } from '../support/merchant-fixture';
import { RunningService, serviceOnFreshDatabase } from '../support/service';

// Times in the auditors' query strings as people paste them into curl: a `+`
// written as is reaches the service as a space.
describe('auditors: times in query strings, and the balance now', () => {
  let service: RunningService;
  let teardown: () => Promise<void>;
  let merchant: TestMerchant;
  let admin: ReturnType<typeof adminClient>;
  let auditor: { token: string };
  const get = (path: string) => admin('GET', path, undefined, auditor);

  beforeAll(async () => {
    ({ service, teardown } = await serviceOnFreshDatabase());
    merchant = await provisionMerchant(service, { deposit: 5_000n });
    for (const outTradeNo of ['Q-1', 'Q-2']) {
      const body = JSON.stringify({ out_trade_no: outTradeNo, sku_id: 'plain-10', account_id: '12345678', account_fields: {} });
      expect((await signedFetch(service, merchant, { path: '/api/v2/topup/submit', body })).status).toBe(202);
    }
    admin = adminClient(service.url);
    auditor = await admin.createStaff('auditor');
  });
  afterAll(async () => teardown());

  it('without at or position, the balance is the balance now, from every event', async () => {
    const events = await service.store.readStream(walletStream(merchant.merchantId));
    const reply = await get(`/admin/v1/wallets/${merchant.merchantId}/balance`);
    expect(reply.status).toBe(200);
    expect(reply.body.data).toMatchObject({ ...handFold(events), events_applied: events.length, as_of: { at: null, position: null } });
    const wallet = (await signedFetch(service, merchant, { path: '/api/v2/balance' })).body.data;
    expect(reply.body.data).toMatchObject({ balance: wallet.balance, frozen_balance: wallet.frozen_balance, available_balance: wallet.available_balance });
  });

  it('an unencoded + before the offset counts as the + it was, in at, from and to', async () => {
    const events = await service.store.readStream(walletStream(merchant.merchantId));
    const at = events[1].createdAt.toISOString().replace('Z', '+00:00');
    const pasted = await get(`/admin/v1/wallets/${merchant.merchantId}/balance?at=${at}`);
    const encoded = await get(`/admin/v1/wallets/${merchant.merchantId}/balance?at=${encodeURIComponent(at)}`);
    expect(pasted.status).toBe(200);
    expect(pasted.body).toEqual(encoded.body);
    expect(pasted.body.data).toMatchObject({ events_applied: 2, as_of: { at } });

    const to = events[2].createdAt.toISOString().replace('Z', '+00:00');
    const window = await get(`/admin/v1/wallets/${merchant.merchantId}/statement?from=${at}&to=${to}`);
    expect(window.status).toBe(200);
    expect(window.body.data.lines.map((l: { revision: number }) => l.revision)).toEqual([1]);

    // A negative offset needs no encoding, and a space anywhere else is still refused.
    const minus = await get(`/admin/v1/wallets/${merchant.merchantId}/balance?at=${events[1].createdAt.toISOString().replace(/\.\d+Z$/, '')}-00:00`);
    expect(minus.status).toBe(200);
    expect((await get(`/admin/v1/wallets/${merchant.merchantId}/balance?at=2026-11-22 10:00:00+00:00`)).body).toMatchObject({
      code: 'VALIDATION_FAILED',
      field: 'at',
    });
  });

  it('a refused time says what to send, and every example it gives works pasted as it is', async () => {
    const refused = await get(`/admin/v1/wallets/${merchant.merchantId}/balance?at=yesterday`);
    expect(refused.body).toMatchObject({ code: 'VALIDATION_FAILED', field: 'at' });
    const examples = refused.body.message.match(/\d{4}-\d\d-\d\dT[^\s,;)]+/g) as string[];
    expect(examples.length).toBeGreaterThanOrEqual(2);
    for (const example of examples) {
      const reply = await get(`/admin/v1/wallets/${merchant.merchantId}/balance?at=${example}`);
      expect({ example, status: reply.status }).toEqual({ example, status: 200 });
    }
  });

  it('at and position together are refused', async () => {
    const reply = await get(`/admin/v1/wallets/${merchant.merchantId}/balance?at=2026-11-22T10:00:00Z&position=1/1`);
    expect(reply.body).toMatchObject({ code: 'VALIDATION_FAILED', field: 'at' });
  });
});
