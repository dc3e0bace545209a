import { writeSync } from 'node:fs';
import { startUpstreamSimulator, UpstreamSimulator } from '../../src/fulfilment/simulator/upstream-simulator';
import { PostgresEventStore } from '../../src/infrastructure/event-store/postgres-event-store';
import { decodeEvent } from '../../src/ledger/event-codec';
import { WALLET_STREAM_PREFIX } from '../../src/ledger/streams';
import { WalletEvent } from '../../src/ledger/wallet/wallet.decider';
import { formatAmount } from '../../src/shared/money';
import { adminClient } from '../back-office/admin-client';
import { ChildService, spawnService } from '../support/child-service';
import { checkEventInvariants } from '../support/invariants';
import { signedFetch, TestMerchant } from '../support/merchant-fixture';
import { readSettledLog } from '../support/settled-log';
import { createTestDatabase, TestDatabase } from '../support/test-database';
import { until } from '../support/until';
import { HaCluster, startHaCluster } from './cluster';
import { Acknowledged, figuresTable, Load, roundFigures, RoundFigures, startLoad } from './load';

/** How long a request needing the database waits for it during a failover (the service's DATABASE_WAIT_MS, default). */
const DATABASE_WAIT_MS = 10_000;
const SERVICE_ENV = {
  DATABASE_WAIT_MS: String(DATABASE_WAIT_MS),
  // The default: pooled connections stay open through a lull, so the failover finds them on the old primary.
  DATABASE_POOL_IDLE_MS: '600000',
  FULFILMENT_CONCURRENCY: '4',
  CALLBACK_CONCURRENCY: '0',
  ORDER_RECOVERY_INTERVAL_MS: '500',
  ORDER_RECOVERY_GRACE_MS: '500',
};
const MERCHANTS = 4;
const FLOAT = 100_000_00n;
/** Every order buys the voucher at 1.00. */
const PRICE = 100n;
/** Load before the fault, and after the service is ready again. */
const STEADY_MS = 5_000;
const FINAL = new Set(['succeeded', 'failed']);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Straight to the runner's stdout, past the quiet environment that holds what tests write: CI's log shows the figures whether the suite passes or not. */
const report = (text: string) => writeSync(1, `\n${text}\n`);

/**
 * The service on a three-member Patroni cluster behind HAProxy, under a
 * mixed load of signed submits and back-office deposits, through a crash
 * of the primary (kill -9 of its postmaster) and a controlled switchover.
 * Every acknowledged order and deposit must be in the ledger, the money must
 * add up to the cent, the service must never exit, and the failures it
 * answers must be only those the database's absence forced: none in a
 * switchover, and in a crash only after waiting DATABASE_WAIT_MS.
 * Needs root and Debian's patroni, etcd-server and haproxy (npm run test:ha).
 */
describe('high availability: the service through a failover and a switchover of its Patroni cluster', () => {
  let cluster: HaCluster;
  let db: TestDatabase;
  let upstream: UpstreamSimulator;
  let service: ChildService;
  let pid: number | undefined;
  let merchants: TestMerchant[];
  const acknowledged: Acknowledged = { orders: new Map(), deposits: new Map() };
  const rounds: RoundFigures[] = [];
  /** What Patroni did in each round, and how long it took. */
  const events: string[] = [];

  beforeAll(async () => {
    cluster = await startHaCluster();
    // Created through HAProxy, so on the leader.
    db = await createTestDatabase('topup_ha', cluster.url('postgres'));
    upstream = await startUpstreamSimulator({ deliveryDelayMs: 20 });
    service = await spawnService(db, { ...SERVICE_ENV, UPSTREAM_URL: upstream.url });
    pid = service.process.pid;
    merchants = await provisionMerchants();
  }, 240_000);

  afterAll(async () => {
    if (rounds.length > 0) report(`Failover figures (DATABASE_WAIT_MS=${DATABASE_WAIT_MS}):\n${figuresTable(rounds)}\n${events.join('\n')}`);
    await service?.kill('SIGKILL');
    await upstream?.stop();
    await db?.pool.end().catch(() => undefined);
    await cluster?.stop();
  }, 60_000);

  async function provisionMerchants(): Promise<TestMerchant[]> {
    const admin = adminClient(service.url);
    expect((await admin('PUT', '/admin/v1/products/gift', { name: 'Gift cards' })).status).toBe(200);
    const sku = { product_id: 'gift', name: 'Voucher', required_account_fields: [], supports_account_check: false, on_shelf: true };
    expect((await admin('PUT', '/admin/v1/skus/voucher', sku)).status).toBe(200);
    const provisioned: TestMerchant[] = [];
    for (let i = 0; i < MERCHANTS; i++) {
      const created = await admin.createMerchant({ name: `HA ${i}`, rate_limit_per_second: 100_000 });
      expect((await admin('PUT', `/admin/v1/merchants/${created.merchant_id}/prices/voucher`, { price: formatAmount(PRICE) })).status).toBe(200);
      const reference = `float-${i}`;
      expect((await admin('POST', `/admin/v1/merchants/${created.merchant_id}/deposits`, { amount: formatAmount(FLOAT), reference })).status).toBe(201);
      acknowledged.deposits.set(reference, { merchantId: created.merchant_id, amount: FLOAT });
      provisioned.push({ merchantId: created.merchant_id, apiKey: created.api_key, appSecret: created.app_secret });
    }
    return provisioned;
  }

  /** Load, the fault, readiness again, more load; the figures of every reply in the round. */
  async function round(name: string, tag: string, fault: () => Promise<void>): Promise<RoundFigures> {
    let load: Load | undefined = startLoad({
      url: service.url,
      merchants,
      tag,
      submitClients: 3,
      depositClients: 1,
      depositAmount: 5_00n,
      acknowledged,
    });
    try {
      await sleep(STEADY_MS);
      await fault();
      const ready = await until(
        () =>
          fetch(`${service.url}/health/ready`).then(
            (r) => r.status,
            () => 0,
          ),
        (status) => status === 200,
        60_000,
        250,
      );
      expect([name, 'ready', ready]).toEqual([name, 'ready', 200]);
      await sleep(STEADY_MS);
      await load.stop();
      const figures = roundFigures(name, load.samples, load.stoppedAt!, DATABASE_WAIT_MS);
      rounds.push(figures);
      for (const s of load.samples.filter((s) => s.status === 0 || s.status >= 500)) {
        events.push(`${name}: ${s.kind} ${s.what} sent at ${new Date(s.start).toISOString()}: ${s.status || 'no reply'} after ${s.end - s.start} ms`);
      }
      expect(load.abandoned).toEqual([]);
      load = undefined;
      return figures;
    } finally {
      await load?.stop();
      // Same process throughout.
      expect([service.process.pid, service.process.exitCode, service.process.signalCode]).toEqual([pid, null, null]);
    }
  }

  it('the primary crashes (kill -9 of its postmaster): failures only after waiting DATABASE_WAIT_MS', async () => {
    const figures = await round('kill -9', 'kill', async () => {
      const at = Date.now();
      const killed = await cluster.killPrimaryPostmaster();
      const next = await cluster.waitForLeaderChange(killed);
      events.push(`kill -9: ${killed}'s postmaster killed; ${next} leads ${((Date.now() - at) / 1000).toFixed(1)} s later`);
    });
    expect(figures.noReply).toBe(0);
    expect(figures.ok).toBeGreaterThan(0);
    expect([figures.fastFailures, 'failures sooner than DATABASE_WAIT_MS']).toEqual([0, 'failures sooner than DATABASE_WAIT_MS']);
    // The old primary back as a standby, so that the switchover has somewhere to go.
    await cluster.waitForHealthy();
  }, 180_000);

  it('a controlled switchover: no failure at all', async () => {
    const figures = await round('switchover', 'switchover', async () => {
      const at = Date.now();
      const { from, to } = await cluster.switchover();
      await cluster.waitForLeaderChange(from);
      events.push(`switchover: ${from} -> ${to}, ${to} leading ${((Date.now() - at) / 1000).toFixed(1)} s after the request`);
    });
    expect(figures.noReply).toBe(0);
    expect(figures.ok).toBeGreaterThan(0);
    expect([figures.serverErrors, '5xx']).toEqual([0, '5xx']);
  }, 180_000);

  it('every acknowledged order and deposit is in the ledger, the money adds up to the cent, and the service verifies itself clean', async () => {
    expect(acknowledged.orders.size).toBeGreaterThan(0);
    const store = new PostgresEventStore(db.pool, { connection: db.config });
    try {
      // Orders accepted during a round are delivered by the fulfilment worker, perhaps after a recovery pass.
      let facts = await checkEventInvariants(store, { settled: false });
      for (const deadline = Date.now() + 60_000; Date.now() < deadline; await sleep(500)) {
        if ([...acknowledged.orders.keys()].every((o) => FINAL.has(facts.orders.get(o)?.stage ?? ''))) break;
        facts = await checkEventInvariants(store, { settled: false });
      }
      facts = await checkEventInvariants(store);
      expect(facts.violations).toEqual([]);

      // The log holds exactly the acknowledged orders (a retried submit never made a second one) and deposits.
      const placed = [...facts.orders.entries()].filter(([, order]) => order.stage !== 'refused').map(([orderNo]) => orderNo);
      expect(placed.sort()).toEqual([...acknowledged.orders.keys()].sort());
      const unfinished = [...acknowledged.orders.keys()].filter((o) => facts.orders.get(o)?.stage !== 'succeeded');
      expect(unfinished.map((o) => [o, facts.orders.get(o)?.stage])).toEqual([]);
      // Listed, not keyed: a deposit made twice under one reference would show twice.
      const deposited: [string, { merchantId: string; amount: bigint }][] = [];
      for (const recorded of (await readSettledLog(store)).events) {
        if (!recorded.streamId.startsWith(WALLET_STREAM_PREFIX)) continue;
        const event = decodeEvent<WalletEvent>(recorded);
        if (event.type === 'FundsDeposited') {
          deposited.push([event.data.reference, { merchantId: recorded.streamId.slice(WALLET_STREAM_PREFIX.length), amount: event.data.amount }]);
        }
      }
      const byReference = ([a]: [string, unknown], [b]: [string, unknown]) => a.localeCompare(b);
      expect(deposited.sort(byReference)).toEqual([...acknowledged.deposits].sort(byReference));

      // Each wallet: its deposits less 1.00 an order, nothing frozen; the service answers the same.
      for (const merchant of merchants) {
        const deposits = [...acknowledged.deposits.values()].filter((d) => d.merchantId === merchant.merchantId).reduce((sum, d) => sum + d.amount, 0n);
        const orders = BigInt([...acknowledged.orders.values()].filter((m) => m === merchant.merchantId).length);
        const expected = deposits - PRICE * orders;
        const wallet = facts.wallets.get(merchant.merchantId)!;
        expect([merchant.merchantId, wallet.balance, wallet.frozen]).toEqual([merchant.merchantId, expected, 0n]);
        const balance = await signedFetch(service, merchant, { path: '/api/v2/balance' });
        expect([balance.status, balance.body.data]).toEqual([
          200,
          expect.objectContaining({ balance: formatAmount(expected), frozen_balance: '0.00', available_balance: formatAmount(expected) }),
        ]);
      }
    } finally {
      await store.close();
    }

    // The service's own checks: the read models replayed from the log, and each wallet's hash chain.
    const admin = adminClient(service.url);
    const verified = await until(
      () => admin('POST', '/admin/v1/audit/verify', {}),
      (reply) => reply.status === 200 && reply.body.data.clean === true,
      60_000,
      1_000,
    );
    expect([verified.status, verified.body.data?.clean, verified.body.data?.differences]).toEqual([200, true, []]);
    for (const merchant of merchants) {
      const chain = await admin('GET', `/admin/v1/wallets/${merchant.merchantId}/chain`);
      expect([chain.status, chain.body.data.intact, chain.body.data.first_break]).toEqual([200, true, null]);
    }
    expect([service.process.pid, service.process.exitCode]).toEqual([pid, null]);
  }, 180_000);
});
