import { randomBytes } from 'node:crypto';
import { CallbackWorker } from '../../src/callbacks/callback-worker';
import { SendCallbackOptions } from '../../src/callbacks/delivery/callback-sender';
import { migrate } from '../../src/infrastructure/postgres/migrations';
import { EventStore } from '../../src/ledger/ports/event-store.port';
import { CallbackRecipients } from '../../src/merchant-directory';
import { AppSecretCipher } from '../../src/merchant-directory/app-secret.cipher';
import { allMigrations } from '../../src/schema';
import { signatureOf, stringToSign } from '../../src/shared/signature';
import { createTestDatabase, TestDatabase } from '../support/test-database';

/**
 * The claim writes a known merchant's attempt down, when the orders read
 * model shows the order final, and reads the merchant's URL and key with it.
 * The worker then sends that attempt, signed with the key the claim read,
 * and records its result. An order the read model does not show final is
 * left to the sender, which reads its events first: when it cannot, it
 * writes nothing down and the delivery's lease runs out, no attempt spent.
 */
describe('callback attempts started by the claim', () => {
  let db: TestDatabase;
  const cipher = new AppSecretCipher(randomBytes(32));

  beforeAll(async () => {
    db = await createTestDatabase();
    await migrate(db.pool, allMigrations({ eventStore: 'postgres', upstreamSimulator: false }));
    await db.pool.query(
      `insert into merchants (merchant_id, name, currency, api_key, app_secret_enc, callback_url, rate_limit_per_second, created_by, updated_by)
       values ('mch_1', 'One', 'USD', 'ak_one', $1, 'https://one.example/hooks/topup', 100, 'test', 'test')`,
      [cipher.encrypt('the-app-secret')],
    );
  });

  afterAll(async () => {
    await db.drop();
  });

  async function finalOrder(orderNo: string, inReadModel: boolean) {
    await db.pool.query(`insert into callback_deliveries (order_no, merchant_id, due_at, created_at) values ($1, 'mch_1', now(), now())`, [orderNo]);
    if (inReadModel)
      await db.pool.query(
        `insert into rm_orders (order_no, merchant_id, out_trade_no, attempt, stage, sku_id, account_id, account_fields, amount, currency, created_at, completed_at, updated_at)
         values ($1, 'mch_1', 'T-' || $1, 1, 'succeeded', 'sku', 'acc-9', '{}', 1250, 'USD', now(), now(), now())`,
        [orderNo],
      );
  }

  it('sends the started attempt with the key the claim read, and spends no attempt on an order it cannot read', async () => {
    await finalOrder('ORD-READ', true);
    await finalOrder('ORD-UNREADABLE', false); // not final in the read model: its events are read, and that fails
    const sent: SendCallbackOptions[] = [];
    const logged: string[] = [];
    const store = {
      readStream: () => Promise.reject(new Error('connection terminated unexpectedly')),
    } as unknown as EventStore;
    const worker = new CallbackWorker(
      db.pool,
      store,
      new CallbackRecipients(db.pool, cipher),
      { retryDelaysMs: [15_000], timeoutMs: 1_000, allowPrivateNetworks: false, concurrency: 4, perMerchant: 2, pollMs: 20, instanceId: 'instance-a' },
      async (options) => {
        sent.push(options);
        return { acknowledged: true, statusCode: 200, latencyMs: 4, replyExcerpt: '{"success":true}', error: null };
      },
      (message) => logged.push(message),
    );

    worker.start();
    const results = async () =>
      (await db.pool.query(`select order_no, attempt, url, status_code, acknowledged, error from callback_attempts order by order_no, attempt`)).rows;
    const settled = async () => (await results()).some((row) => row.acknowledged) && logged.length > 0;
    for (const deadline = Date.now() + 10_000; !(await settled()) && Date.now() < deadline;) await new Promise((r) => setTimeout(r, 20));
    await worker.stop();

    // Every attempt written down, sent or not: none for the order that could not be read.
    expect(await results()).toEqual([
      { order_no: 'ORD-READ', attempt: 1, url: 'https://one.example/hooks/topup', status_code: 200, acknowledged: true, error: null },
    ]);
    expect(logged).toContain('the callback for ORD-UNREADABLE failed; its lease will expire and it is retried');
    expect(sent).toHaveLength(1);
    const [callback] = sent;
    expect(String(callback.url)).toBe('https://one.example/hooks/topup');
    expect(JSON.parse(callback.body)).toMatchObject({
      order_no: 'ORD-READ',
      out_trade_no: 'T-ORD-READ',
      status: 'success',
      amount: '12.50',
      account_id: 'acc-9',
    });
    const headers = callback.headers;
    expect(headers['X-Api-Key']).toBe('ak_one');
    const message = stringToSign(headers['X-Timestamp'], headers['X-Nonce'], '/hooks/topup', Buffer.from(callback.body));
    expect(headers['X-Signature']).toBe(signatureOf('the-app-secret', message));

    // The acknowledged delivery left the schedule; its attempt stays.
    const { rows } = await db.pool.query(`select order_no, state, attempts_made from callback_deliveries order by order_no`);
    expect(rows).toEqual([{ order_no: 'ORD-UNREADABLE', state: 'pending', attempts_made: 0 }]);
    const attempts = await db.pool.query(`select order_no, attempt, acknowledged from callback_attempts order by order_no`);
    expect(attempts.rows).toEqual([{ order_no: 'ORD-READ', attempt: 1, acknowledged: true }]);
  });
});
