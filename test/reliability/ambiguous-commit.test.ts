import { Pool } from 'pg';
import { StreamAppend } from '../../src/ledger/ports/event-store.port';
import { orderStream, walletStream } from '../../src/ledger/streams';
import { ReplayGuard } from '../../src/merchant-api/gateway/replay-guard';
import { MerchantDirectory } from '../../src/merchant-directory';
import { StaffAuthenticator } from '../../src/back-office';
import { ADMIN } from '../back-office/admin-client';
import { provisionMerchant, signedFetch, TestMerchant } from '../support/merchant-fixture';
import { RunningService, startService } from '../support/service';
import { createTestDatabase, TestDatabase } from '../support/test-database';

/** What node-postgres throws when the server goes away mid-statement: nothing says whether it committed. */
const connectionLost = () => new Error('Connection terminated unexpectedly');

/**
 * A failover's worst moment: the commit reached the database, its answer
 * did not. The request is run again (DATABASE_WAIT_MS), and the ledger's own
 * keys make the second run apply nothing twice: the order's stream exists,
 * so the submit answers the order the first run placed; the admission's
 * token tells its own nonce from a replay.
 */
describe('a commit whose answer was lost', () => {
  let db: TestDatabase;
  let service: RunningService;
  let merchant: TestMerchant;

  beforeAll(async () => {
    db = await createTestDatabase();
    service = await startService(db);
    merchant = await provisionMerchant(service, { deposit: 10_000n });
  });
  afterAll(async () => {
    await service.stop();
    await db.drop();
  });

  const submit = (outTradeNo: string, nonce?: string) =>
    signedFetch(service, merchant, {
      path: '/api/v2/topup/submit',
      nonce,
      body: JSON.stringify({ out_trade_no: outTradeNo, sku_id: 'plain-10', account_id: `acct-${outTradeNo}`, account_fields: {} }),
    });

  const eventTypes = async (streamId: string) => (await service.store.readStream(streamId)).map((e) => e.type);
  const requestWaits = async () => {
    const text = await (await fetch(`${service.url}/metrics`)).text();
    return Number(/^database_outage_waits_total\{kind="request"\} (\d+)/m.exec(text)?.[1] ?? 0);
  };

  it('a submit whose order was placed runs again and answers that order: frozen once, never twice', async () => {
    const store = service.store as Required<typeof service.store>;
    const real = store.appendAtomically.bind(store);
    let lost = 0;
    store.appendAtomically = async (appends: readonly StreamAppend[], options) => {
      const results = await real(appends, options);
      if (lost === 0 && appends.some((a) => a.streamId.startsWith('order-'))) {
        lost++;
        throw connectionLost();
      }
      return results;
    };
    const waitsBefore = await requestWaits();
    try {
      const reply = await submit('LOST-1');
      expect(lost).toBe(1);
      // The first run placed the order and froze its money; the second found it.
      expect([reply.status, reply.body.code]).toEqual([200, 'DUPLICATE']);
      const orderNo: string = reply.body.data.order_no;
      expect(await eventTypes(orderStream(orderNo))).toEqual(['OrderPlaced', 'OrderAccepted']);
      const wallet = (await service.store.readStream(walletStream(merchant.merchantId))).filter((e) => JSON.stringify(e.data).includes(orderNo));
      expect(wallet.map((e) => e.type)).toEqual(['FundsFrozen']);
      expect(await requestWaits()).toBe(waitsBefore + 1);
    } finally {
      store.appendAtomically = real;
    }
    const balance = await signedFetch(service, merchant, { path: '/api/v2/balance' });
    expect([balance.body.data.balance, balance.body.data.frozen_balance]).toEqual(['100.00', '10.00']);
  });

  it('an admission whose commit was lost is admitted again under its own token, and the same nonce from anyone else is still a replay', async () => {
    const pool = (service.app.get(ReplayGuard) as unknown as { pool: Pool }).pool;
    const real = pool.query.bind(pool) as (...args: unknown[]) => Promise<unknown>;
    let lost = 0;
    (pool as unknown as { query: unknown }).query = async (...args: unknown[]) => {
      const result = await real(...args);
      const name = (args[0] as { name?: string }).name;
      if (lost === 0 && name === 'merchant-admit') {
        lost++;
        throw connectionLost();
      }
      return result;
    };
    try {
      const reply = await submit('LOST-2', 'nonce-of-a-lost-admission');
      expect(lost).toBe(1);
      expect([reply.status, reply.body.code]).toEqual([202, 'ACCEPTED']);
    } finally {
      (pool as unknown as { query: unknown }).query = real;
    }
    const replay = await submit('LOST-3', 'nonce-of-a-lost-admission');
    expect([replay.status, replay.body.code]).toEqual([401, 'NONCE_REUSED']);
  });

  it('a deposit whose event was appended runs again, its body read once: 201, deposited once', async () => {
    const store = service.store;
    const real = store.append.bind(store);
    let lost = 0;
    store.append = async (streamId, events, expected) => {
      const result = await real(streamId, events, expected);
      if (lost === 0 && streamId === walletStream(merchant.merchantId)) {
        lost++;
        throw connectionLost();
      }
      return result;
    };
    try {
      const reply = await fetch(`${service.url}/admin/v1/merchants/${merchant.merchantId}/deposits`, {
        method: 'POST',
        headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' },
        body: JSON.stringify({ amount: '5.00', reference: 'lost-answer' }),
        signal: AbortSignal.timeout(15_000),
      });
      expect(lost).toBe(1);
      expect(reply.status).toBe(201);
      expect(((await reply.json()) as { data: { balance: string } }).data.balance).toBe('105.00');
    } finally {
      store.append = real;
    }
    const deposits = (await service.store.readStream(walletStream(merchant.merchantId))).filter((e) => e.type === 'FundsDeposited');
    expect(deposits.map((e) => (e.data as { reference: string }).reference)).toEqual(['fixture', 'lost-answer']);
  });

  it("authentication's reads wait out a lost connection too: the merchant's key, and a staff token", async () => {
    const directory = service.app.get(MerchantDirectory);
    const staff = service.app.get(StaffAuthenticator);
    const byApiKey = directory.byApiKey.bind(directory);
    const authenticate = staff.authenticate.bind(staff);
    let lost = 0;
    directory.byApiKey = async (apiKey) => (lost++ === 0 ? Promise.reject(connectionLost()) : byApiKey(apiKey));
    staff.authenticate = async (authorization) => (lost++ === 1 ? Promise.reject(connectionLost()) : authenticate(authorization));
    try {
      const balance = await signedFetch(service, merchant, { path: '/api/v2/balance' });
      expect([balance.status, balance.body.code]).toEqual([200, 'OK']);
      const wallet = await fetch(`${service.url}/admin/v1/wallets/${merchant.merchantId}/balance`, { headers: { authorization: `Bearer ${ADMIN}` } });
      expect(wallet.status).toBe(200);
      expect(lost).toBeGreaterThanOrEqual(3);
    } finally {
      directory.byApiKey = byApiKey;
      staff.authenticate = authenticate;
    }
  });
});
