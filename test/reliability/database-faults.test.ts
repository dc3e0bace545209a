import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import { startUpstreamSimulator, UpstreamSimulator } from '../../src/fulfilment/simulator/upstream-simulator';
import { PostgresEventStore } from '../../src/infrastructure/event-store/postgres-event-store';
import { adminClient } from '../back-office/admin-client';
import { ChildService, spawnService } from '../support/child-service';
import { checkEventInvariants, checkReadModels } from '../support/invariants';
import { signedFetch, TestMerchant } from '../support/merchant-fixture';
import { RunningService } from '../support/service';
import { createTestDatabase, TestDatabase } from '../support/test-database';

const INSTANCE_ENV = {
  FULFILMENT_CONCURRENCY: '8',
  CALLBACK_CONCURRENCY: '0',
  ORDER_RECOVERY_INTERVAL_MS: '500',
  ORDER_RECOVERY_GRACE_MS: '500',
  // The default: idle pooled connections are kept, and the faults end them under the pools' feet.
  DATABASE_POOL_IDLE_MS: '600000',
};
const CLIENTS = 8;
const FINAL = new Set(['succeeded', 'failed']);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Two instances on one database under a submit load, while every backend of
 * the database is terminated again and again and the database then refuses
 * connections for a few seconds. The first instance waits for the database
 * (DATABASE_WAIT_MS, its default): it answers no 500 at all. The second does
 * not wait (DATABASE_WAIT_MS=0): its 500s are retried unchanged by the
 * clients. Nothing may exit, every submit must complete, and the ledger must
 * add up.
 */
describe('database faults under load, with two instances', () => {
  let db: TestDatabase;
  let instances: ChildService[];
  let dba: Client;
  let upstream: UpstreamSimulator;

  beforeAll(async () => {
    db = await createTestDatabase();
    // The upstream keeps its own state, apart from the database the faults hit.
    upstream = await startUpstreamSimulator({ deliveryDelayMs: 20 });
    const env = { ...INSTANCE_ENV, UPSTREAM_URL: upstream.url };
    instances = await Promise.all([spawnService(db, env), spawnService(db, { ...env, DATABASE_WAIT_MS: '0' })]);
    dba = new Client({ ...db.config, database: 'postgres' });
    await dba.connect();
  });
  afterAll(async () => {
    await dba.end();
    await Promise.all(instances.map((i) => i.kill('SIGTERM')));
    await upstream.stop();
    await db.drop();
  });

  async function provision(admin: ReturnType<typeof adminClient>, i: number): Promise<TestMerchant> {
    const created = await admin.createMerchant({ name: `Fault ${i}`, rate_limit_per_second: 100_000 });
    expect((await admin('PUT', `/admin/v1/merchants/${created.merchant_id}/prices/voucher`, { price: '1.00' })).status).toBe(200);
    expect((await admin('POST', `/admin/v1/merchants/${created.merchant_id}/deposits`, { amount: '100000.00', reference: 'float' })).status).toBe(201);
    return { merchantId: created.merchant_id, apiKey: created.api_key, appSecret: created.app_secret };
  }

  const terminateAll = () =>
    dba.query('select count(pg_terminate_backend(pid))::int as n from pg_stat_activity where datname = $1 and pid <> pg_backend_pid()', [db.name]);

  it('no process exits, every submit completes when retried unchanged, and the money adds up', async () => {
    const admin = adminClient(instances[0].url);
    expect((await admin('PUT', '/admin/v1/products/gift', { name: 'Gift cards' })).status).toBe(200);
    const sku = { product_id: 'gift', name: 'Voucher', required_account_fields: [], supports_account_check: false, on_shelf: true };
    expect((await admin('PUT', '/admin/v1/skus/voucher', sku)).status).toBe(200);
    const merchants = await Promise.all([0, 1, 2, 3].map((i) => provision(admin, i)));
    const pids = instances.map((i) => i.process.pid);

    const statuses = new Map<string, number>();
    const count = (key: string) => statuses.set(key, (statuses.get(key) ?? 0) + 1);
    const failedBy = [0, 0]; // 5xx answers, per instance
    const acknowledged = new Map<string, string>(); // order_no -> merchant
    let stop = false;
    let sequence = 0;

    // Each client submits new orders; a 500 (or a nonce still held by the
    // 500 it answered) is retried with the very same request.
    const client = async (c: number) => {
      while (!stop) {
        const merchant = merchants[c % merchants.length];
        const n = sequence++;
        const call = {
          path: '/api/v2/topup/submit',
          body: JSON.stringify({ out_trade_no: `FLT-${n}`, sku_id: 'voucher', account_id: `acct-${n}`, account_fields: {} }),
          timestamp: String(Math.floor(Date.now() / 1000)),
          nonce: randomBytes(12).toString('hex'),
        };
        for (let attempt = 0; ; attempt++) {
          const which = (n + attempt) % instances.length;
          const target = instances[which] as unknown as RunningService;
          const reply = await signedFetch(target, merchant, call).catch(() => ({ status: 0, body: { code: 'NO_REPLY' } }));
          count(`${reply.status} ${reply.body.code}`);
          if (reply.status >= 500) failedBy[which]++;
          if (reply.status === 202 || reply.status === 200) {
            acknowledged.set(reply.body.data.order_no, merchant.merchantId);
            break;
          }
          const retryable = reply.status === 500 || (reply.status === 401 && reply.body.code === 'NONCE_REUSED' && attempt > 0);
          if (!retryable || attempt > 300)
            throw new Error(
              `FLT-${n}: ${reply.status} ${JSON.stringify(reply.body)} after ${attempt} retries; instances exited: ${instances.map((i) => i.process.exitCode)}`,
            );
          await sleep(100);
        }
      }
    };
    const load = Promise.all(Array.from({ length: CLIENTS }, (_, c) => client(c)));

    // Repeated terminations while the load runs.
    const terminated: number[] = [];
    for (let round = 0; round < 4; round++) {
      await sleep(700);
      terminated.push((await terminateAll()).rows[0].n);
    }
    // A short outage: the database refuses every new connection for 3 s.
    await sleep(700);
    await dba.query(`alter database "${db.name}" allow_connections false`);
    terminated.push((await terminateAll()).rows[0].n);
    await sleep(3000);
    await dba.query(`alter database "${db.name}" allow_connections true`);
    await sleep(1500);
    stop = true;
    await load;
    console.log(
      `terminated per round: ${terminated.join(', ')}; replies: ${JSON.stringify(Object.fromEntries(statuses))}; 5xx from the waiting instance: ${failedBy[0]}, from the other: ${failedBy[1]}`,
    );

    // Same processes, still serving.
    for (const [i, instance] of instances.entries()) {
      expect([i, instance.process.exitCode, instance.process.pid]).toEqual([i, null, pids[i]]);
      expect((await fetch(`${instance.url}/health`)).status).toBe(200);
      const balance = await signedFetch(instance as unknown as RunningService, merchants[i], { path: '/api/v2/balance' });
      expect(balance.status).toBe(200);
    }
    expect(terminated.every((n) => n > 0)).toBe(true);
    // An outage is logged as warnings, one line each: no ERROR, no stack. (An access line's code=INTERNAL_ERROR is not an ERROR line.)
    expect(
      instances.map((i) =>
        i
          .output()
          .split('\n')
          .filter((line) => /\bERROR\b|^\s+at /.test(line)),
      ),
    ).toEqual([[], []]);
    // The waiting instance answered every request; the other failed some, which the clients repeated.
    expect(failedBy[0]).toBe(0);
    expect(failedBy[1]).toBeGreaterThan(0);
    // What the operator sees of it: the waits, counted.
    const waits = await Promise.all(
      instances.map(async (i) => {
        const text = await (await fetch(`${i.url}/metrics`)).text();
        const seen = (kind: string) => Number(new RegExp(`^database_outage_waits_total\\{kind="${kind}"\\} (\\d+)`, 'm').exec(text)?.[1] ?? 0);
        return { connection: seen('connection'), request: seen('request') };
      }),
    );
    expect(waits[0].connection + waits[0].request).toBeGreaterThan(0);
    expect(waits[1]).toEqual({ connection: 0, request: 0 });
    expect(statuses.has('0 NO_REPLY')).toBe(false);

    // Every order is delivered once, and the ledger and read models agree with the log.
    const store = new PostgresEventStore(db.pool, { connection: db.config });
    const deadline = Date.now() + 60_000;
    let facts = await checkEventInvariants(store, { settled: false });
    while ([...acknowledged.keys()].some((o) => !FINAL.has(facts.orders.get(o)?.stage ?? '')) && Date.now() < deadline) {
      await sleep(500);
      facts = await checkEventInvariants(store, { settled: false });
    }
    facts = await checkEventInvariants(store);
    expect(facts.violations).toEqual([]);
    expect([...acknowledged.keys()].filter((o) => facts.orders.get(o)?.stage !== 'succeeded')).toEqual([]);
    for (const orderNo of acknowledged.keys()) expect([orderNo, upstream.deliveries.get(orderNo)]).toEqual([orderNo, 1]);
    const accepted = [...facts.orders.values()].filter((o) => o.stage !== 'refused');
    expect(accepted.length).toBe(acknowledged.size);
    for (const merchant of merchants) {
      const delivered = [...acknowledged.values()].filter((m) => m === merchant.merchantId).length;
      expect([merchant.merchantId, facts.wallets.get(merchant.merchantId)!.balance]).toEqual([merchant.merchantId, 10_000_000n - 100n * BigInt(delivered)]);
    }
    let readModels = await checkReadModels(db.pool, facts);
    for (let i = 0; i < 60 && readModels.length > 0; i++) {
      await sleep(500);
      readModels = await checkReadModels(db.pool, facts);
    }
    expect(readModels).toEqual([]);
    await store.close();
  });
});
