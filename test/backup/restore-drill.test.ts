import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { writeSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { openCliContext } from '../../src/cli/cli-context';
import { decodeEvent } from '../../src/ledger/event-codec';
import { orderStream, walletStream } from '../../src/ledger/streams';
import { OrderEvent } from '../../src/ledger/order/order.decider';
import { WalletEvent } from '../../src/ledger/wallet/wallet.decider';
import { startUpstreamSimulator, UpstreamSimulator } from '../../src/fulfilment/simulator/upstream-simulator';
import { adminClient } from '../back-office/admin-client';
import { CALLBACK_ENV, callbackEndpoint } from '../support/callback-endpoint';
import { ChildService, spawnService } from '../support/child-service';
import { FULFILMENT_ENV } from '../support/fulfilment';
import { checkEventInvariants, LedgerFacts } from '../support/invariants';
import { SignedCall, signedFetch, TestMerchant } from '../support/merchant-fixture';
import { until } from '../support/until';
import { ArchivedCluster, BackupInfo } from './pgbackrest';
import { TYPESCRIPT_LOADER } from '../support/service-node-flags';

/**
 * The restore drill (issue 51): a ledger on a cluster of its own, archived
 * continuously with pgBackRest, restored to an instant T between two
 * acknowledged writes, and the service started on the copy. Not part of
 * `npm test`: `npm run test:restore` (docs/operations.md, "Backups and
 * point-in-time restore").
 *
 * The upstream and the merchant's callback endpoint live in this process,
 * outside the database: a restore rewinds the ledger, never the world
 * around it, and the drill checks what the service makes of that.
 */

const PRIMARY_PORT = 5450;
const RESTORED_PORT = 5451;
const NAMED_PORT = 5452;
const PRICE = 120n; // mlbb-86, 1.20
const DELIVERED = '12345678';
const REFUSED = '12340000'; // INVALID_ACCOUNT
const NO_ANSWER = '12349999'; // the upstream never answers: result unknown

const ROOT = resolve(__dirname, '../..');

interface Placed {
  merchant: TestMerchant;
  orderNo: string;
  account: string;
  /** The signed request exactly as sent, to replay. */
  call: SignedCall;
}

interface Balance {
  balance: string;
  frozen_balance: string;
  available_balance: string;
}

/** Two-decimal strings in minor units. */
const minor = (amount: string) => BigInt(amount.replace('.', ''));

describe('restore drill: pgBackRest point-in-time restore of a running ledger', () => {
  let cluster: ArchivedCluster;
  let simulator: UpstreamSimulator;
  let endpoint: Awaited<ReturnType<typeof callbackEndpoint>>;
  let service: ChildService | undefined;
  const env = () => ({
    ...FULFILMENT_ENV,
    ...CALLBACK_ENV,
    UPSTREAM_URL: simulator.url,
    // An upstream that never answers is given up after 5 s: the result is unknown.
    UPSTREAM_TIMEOUT_MS: '5000',
    // As in production, the process manager sweeps for orders a stop left between two appends.
    ORDER_RECOVERY_INTERVAL_MS: '1000',
  });
  let merchantA: TestMerchant;
  let merchantB: TestMerchant;

  /** Final before T, each with its status then. */
  const settledBeforeT = new Map<Placed, 'success' | 'failed'>();
  let unknownBeforeT: Placed;
  /** With the upstream at T (sent, no answer yet), and how each ended before the restore. */
  const inFlightAtT = new Map<Placed, string>();
  const afterT: Placed[] = [];
  let balancesAtT: Map<string, Balance>;
  let restoreTarget: string;
  let balanceCallAfterT: SignedCall;
  const figures: Record<string, string | number> = {};
  let fullBackup: BackupInfo;
  let incrementalBackup: BackupInfo;
  let restoredEvents: number;

  const admin = () => adminClient(service!.url);

  async function submit(merchant: TestMerchant, account: string, outTradeNo = `R-${randomBytes(5).toString('hex')}`): Promise<Placed> {
    const call: SignedCall = {
      path: '/api/v2/topup/submit',
      body: JSON.stringify({ out_trade_no: outTradeNo, sku_id: 'mlbb-86', account_id: account, account_fields: { server_id: '1' } }),
      timestamp: String(Math.floor(Date.now() / 1000)),
      nonce: randomBytes(12).toString('hex'),
    };
    const reply = await signedFetch(service!, merchant, call);
    expect([reply.status, reply.body.code]).toEqual([202, 'ACCEPTED']);
    return { merchant, orderNo: reply.body.data.order_no, account, call };
  }

  async function stage(orderNo: string): Promise<string> {
    const reply = await admin()('GET', `/admin/v1/orders/${orderNo}`);
    return reply.status === 200 ? reply.body.data.stage : `${reply.status} ${reply.body.code}`;
  }

  async function awaitStage(orderNo: string, stages: string[], timeoutMs = 30_000): Promise<string> {
    return until(
      () => stage(orderNo),
      (s) => stages.includes(s),
      timeoutMs,
      100,
    );
  }

  async function balance(merchant: TestMerchant): Promise<Balance> {
    const reply = await signedFetch(service!, merchant, { path: '/api/v2/balance' });
    expect(reply.status).toBe(200);
    return reply.body.data;
  }

  async function deposit(merchant: TestMerchant, amount: string, reference: string): Promise<void> {
    const reply = await admin()('POST', `/admin/v1/merchants/${merchant.merchantId}/deposits`, { amount, reference });
    expect(reply.status).toBe(201);
  }

  async function provision(): Promise<TestMerchant> {
    const created = await admin().createMerchant({ callback_url: endpoint.url });
    const steps: [string, string, unknown][] = [
      ['PUT', '/admin/v1/products/mlbb', { name: 'Mobile Legends' }],
      [
        'PUT',
        '/admin/v1/skus/mlbb-86',
        { product_id: 'mlbb', name: '86 Diamonds', required_account_fields: ['server_id'], supports_account_check: true, on_shelf: true },
      ],
      ['PUT', `/admin/v1/merchants/${created.merchant_id}/prices/mlbb-86`, { price: '1.20' }],
      ['POST', `/admin/v1/merchants/${created.merchant_id}/deposits`, { amount: '100.00', reference: 'opening' }],
    ];
    for (const [method, path, body] of steps) {
      const reply = await admin()(method, path, body);
      expect([method, path, reply.status < 300]).toEqual([method, path, true]);
    }
    return { merchantId: created.merchant_id, apiKey: created.api_key, appSecret: created.app_secret };
  }

  /** Each order final, and its callback received (and acknowledged). */
  async function settle(placed: Placed[], outcome: (p: Placed) => string): Promise<void> {
    for (const p of placed) expect([p.orderNo, await awaitStage(p.orderNo, ['succeeded', 'failed'])]).toEqual([p.orderNo, outcome(p)]);
    for (const p of placed)
      await until(
        async () => endpoint.forOrder(p.orderNo).length,
        (n) => n > 0,
      );
  }
  const outcomeOf = (p: Placed) => (p.account === REFUSED ? 'failed' : 'succeeded');

  beforeAll(async () => {
    const started = Date.now();
    cluster = await ArchivedCluster.create(PRIMARY_PORT);
    await cluster.query('create database ledger');
    simulator = await startUpstreamSimulator({ deliveryDelayMs: 3000, failureDelayMs: 3000 });
    endpoint = await callbackEndpoint(() => ({ status: 200, body: 'success' }));
    service = await spawnService({ env: { DATABASE_URL: cluster.url('ledger') } }, env());

    // Before the backups: two merchants, a few orders, all final.
    merchantA = await provision();
    merchantB = await provision();
    const first = await Promise.all([submit(merchantA, DELIVERED), submit(merchantA, REFUSED), submit(merchantB, DELIVERED)]);
    await settle(first, outcomeOf);
    first.forEach((p) => settledBeforeT.set(p, outcomeOf(p) === 'succeeded' ? 'success' : 'failed'));

    // The full backup, taken online while the service runs.
    let t = Date.now();
    fullBackup = await cluster.backup('full');
    figures.full_backup_s = ((Date.now() - t) / 1000).toFixed(1);

    // Between the backups: a deposit, orders that end, one whose result stays unknown.
    await deposit(merchantA, '50.00', 'before-T');
    unknownBeforeT = await submit(merchantA, NO_ANSWER);
    const second = await Promise.all([
      submit(merchantA, DELIVERED),
      submit(merchantA, DELIVERED),
      submit(merchantA, REFUSED),
      submit(merchantB, DELIVERED),
      submit(merchantB, REFUSED),
    ]);
    await settle(second, outcomeOf);
    second.forEach((p) => settledBeforeT.set(p, outcomeOf(p) === 'succeeded' ? 'success' : 'failed'));
    expect(await awaitStage(unknownBeforeT.orderNo, ['unknown'])).toBe('unknown');

    t = Date.now();
    incrementalBackup = await cluster.backup('incr');
    figures.incremental_backup_s = ((Date.now() - t) / 1000).toFixed(1);

    // Orders at the upstream at T: sent, their answers 3 s away (5 s for the one never answered).
    const inFlight = await Promise.all([
      submit(merchantA, DELIVERED),
      submit(merchantA, DELIVERED),
      submit(merchantA, REFUSED),
      submit(merchantA, NO_ANSWER),
      submit(merchantB, DELIVERED),
    ]);
    await until(
      async () => inFlight.every((p) => simulator.requests.has(p.orderNo)),
      (all) => all,
    );
    balancesAtT = new Map([
      [merchantA.merchantId, await balance(merchantA)],
      [merchantB.merchantId, await balance(merchantB)],
    ]);
    // T: after every write above was acknowledged, before any below. A named restore point at the same place.
    [{ t: restoreTarget }] = await cluster.query<{ t: string }>('select clock_timestamp()::text as t');
    await cluster.query("select pg_create_restore_point('restore-drill')");
    for (const p of inFlight) expect([p.orderNo, await stage(p.orderNo)]).toEqual([p.orderNo, 'sent']);

    // After T: a request whose nonce the restore will forget, deposits, orders, the in-flight ones ending, a staff resolution.
    balanceCallAfterT = { path: '/api/v2/balance', timestamp: String(Math.floor(Date.now() / 1000)), nonce: randomBytes(12).toString('hex') };
    expect((await signedFetch(service, merchantA, balanceCallAfterT)).status).toBe(200);
    await deposit(merchantA, '25.00', 'after-T');
    await deposit(merchantB, '25.00', 'after-T');
    afterT.push(...(await Promise.all([submit(merchantA, DELIVERED), submit(merchantA, REFUSED), submit(merchantB, DELIVERED)])));
    const resolved = await admin()('POST', `/admin/v1/reconciliation/orders/${unknownBeforeT.orderNo}/resolve`, {
      outcome: 'success',
      note: 'delivered per upstream',
    });
    expect(resolved.status).toBe(200);
    await settle([...afterT, ...inFlight.filter((p) => p.account !== NO_ANSWER)], outcomeOf);
    for (const p of inFlight) inFlightAtT.set(p, await awaitStage(p.orderNo, ['succeeded', 'failed', 'unknown']));
    await settle([unknownBeforeT], () => 'succeeded');

    // Everything written is archived (check switches the WAL segment and waits for it), then all stops.
    await cluster.pgbackrest(['check']);
    const [archiver] = await cluster.query<{ archived_count: string }>('select archived_count::text from pg_stat_archiver');
    figures.wal_segments_archived = Number(archiver.archived_count);
    await service.kill('SIGTERM');
    service = undefined;
    await cluster.stop(cluster.primary);

    // The restore, to the instant T, into a fresh data directory.
    t = Date.now();
    await cluster.restore(join(cluster.dir, 'restored'), ['--type=time', `--target=${restoreTarget}`]);
    figures.restore_files_s = ((Date.now() - t) / 1000).toFixed(1);
    await cluster.start(join(cluster.dir, 'restored'), RESTORED_PORT);
    figures.restore_to_promoted_s = ((Date.now() - t) / 1000).toFixed(1);
    figures.drill_to_restored_s = ((Date.now() - started) / 1000).toFixed(1);
  }, 300_000);

  afterAll(async () => {
    await service?.kill('SIGKILL');
    await simulator?.stop();
    await endpoint?.stop();
    await cluster?.remove();
    if (fullBackup) {
      const kib = (bytes: number) => `${Math.round(bytes / 1024)} KiB`;
      figures.full_backup = `${kib(fullBackup.databaseBytes)} database, ${kib(fullBackup.repositoryBytes)} in the repository`;
      if (incrementalBackup)
        figures.incremental_backup = `${kib(incrementalBackup.databaseBytes)} database, ${kib(incrementalBackup.repositoryBytes)} in the repository`;
      // Straight to the terminal: the test environment holds back what passing tests write.
      writeSync(2, `\nrestore drill figures: ${JSON.stringify(figures, null, 2)}\n`);
    }
  });

  const restoredUrl = () => cluster.url('ledger', RESTORED_PORT);

  async function restoredLedger(url = restoredUrl()): Promise<LedgerFacts> {
    const context = await openCliContext({ ...process.env, DATABASE_URL: url });
    try {
      return await checkEventInvariants(context.store, { settled: false });
    } finally {
      await context.close();
    }
  }

  async function depositReferences(merchant: TestMerchant): Promise<string[]> {
    const context = await openCliContext({ ...process.env, DATABASE_URL: restoredUrl() });
    try {
      const events = await context.store.readStream(walletStream(merchant.merchantId));
      return events.map((e) => decodeEvent<WalletEvent>(e)).flatMap((e) => (e.type === 'FundsDeposited' ? [e.data.reference] : []));
    } finally {
      await context.close();
    }
  }

  async function orderEvents(orderNo: string): Promise<string[]> {
    const context = await openCliContext({ ...process.env, DATABASE_URL: restoredUrl() });
    try {
      return (await context.store.readStream(orderStream(orderNo))).map((e) => decodeEvent<OrderEvent>(e).type);
    } finally {
      await context.close();
    }
  }

  it('the restored database holds exactly what was acknowledged before T, and verifies clean', async () => {
    const facts = await restoredLedger();
    restoredEvents = facts.events;
    expect(facts.violations).toEqual([]);
    // Balances to the cent, as the merchants were told just before T.
    for (const merchant of [merchantA, merchantB]) {
      const wallet = facts.wallets.get(merchant.merchantId)!;
      const told = balancesAtT.get(merchant.merchantId)!;
      expect([wallet.balance, wallet.frozen]).toEqual([minor(told.balance), minor(told.frozen_balance)]);
    }
    expect(await depositReferences(merchantA)).toEqual(['opening', 'before-T']);
    expect(await depositReferences(merchantB)).toEqual(['opening']);
    // Orders as they stood at T: final ones final, the unknown one unresolved, the in-flight ones sent; none from after T.
    for (const [p, status] of settledBeforeT)
      expect([p.orderNo, facts.orders.get(p.orderNo)?.stage]).toEqual([p.orderNo, status === 'success' ? 'succeeded' : 'failed']);
    expect(facts.orders.get(unknownBeforeT.orderNo)?.stage).toBe('unknown');
    for (const p of inFlightAtT.keys()) expect([p.orderNo, facts.orders.get(p.orderNo)?.stage]).toEqual([p.orderNo, 'sent']);
    for (const p of afterT) expect([p.orderNo, facts.orders.has(p.orderNo)]).toEqual([p.orderNo, false]);

    // The operator's check: read models against the log, on the copy before anything runs on it.
    const verify = await cli(['verify'], { DATABASE_URL: restoredUrl() });
    expect([verify.code, verify.stderr]).toEqual([0, expect.stringContaining('clean')]);
    figures.events_verified_after_restore = JSON.parse(verify.stdout).events_checked;
  });

  it('a restore to the named point lands at the same place', async () => {
    const named = join(cluster.dir, 'restored-by-name');
    const t = Date.now();
    await cluster.restore(named, ['--type=name', '--target=restore-drill']);
    await cluster.start(named, NAMED_PORT);
    figures.restore_by_name_s = ((Date.now() - t) / 1000).toFixed(1);
    try {
      const facts = await restoredLedger(cluster.url('ledger', NAMED_PORT));
      expect(facts.events).toBe(restoredEvents);
    } finally {
      await cluster.stop(named);
    }
  });

  it('the service starts on the restored database, reports ready and takes a new order', async () => {
    service = await spawnService({ env: { DATABASE_URL: restoredUrl() } }, env());
    const ready = await until(
      async () => (await fetch(`${service!.url}/health/ready`)).status,
      (status) => status === 200,
      30_000,
      200,
    );
    expect(ready).toBe(200);
    const fresh = await submit(merchantB, DELIVERED);
    await settle([fresh], () => 'succeeded');
  });

  it('orders with the upstream at T are sent again under the same key: each settles once, as the upstream decided', async () => {
    for (const [p, before] of inFlightAtT) {
      const after = await awaitStage(p.orderNo, ['succeeded', 'failed', 'unknown']);
      // The order the upstream never answered is back in the reconciliation queue; the others end as they did.
      expect([p.orderNo, after]).toEqual([p.orderNo, before]);
      // Asked again, answered from the upstream's record: never delivered twice.
      expect([p.orderNo, simulator.requests.get(p.orderNo)! >= 2, simulator.deliveries.get(p.orderNo) ?? 0]).toEqual([
        p.orderNo,
        true,
        p.account === DELIVERED ? 1 : 0,
      ]);
      const types = await orderEvents(p.orderNo);
      expect([p.orderNo, types.filter((type) => type === 'OrderSucceeded' || type === 'OrderFailed').length]).toEqual([
        p.orderNo,
        before === 'unknown' ? 0 : 1,
      ]);
    }
    const queue = await admin()('GET', '/admin/v1/reconciliation/orders');
    const queued = (queue.body.data.orders as { order_no: string }[]).map((o) => o.order_no);
    const noAnswer = [...inFlightAtT.keys()].find((p) => p.account === NO_ANSWER)!;
    expect(queued).toEqual(expect.arrayContaining([noAnswer.orderNo, unknownBeforeT.orderNo]));
  });

  it('callbacks sent after T are sent again, with the same order_no and status; those acknowledged before T are not', async () => {
    for (const p of inFlightAtT.keys()) {
      if (p.account === NO_ANSWER) continue;
      const received = await until(
        async () => endpoint.forOrder(p.orderNo),
        (r) => r.length >= 2,
      );
      const bodies = received.map((r) => JSON.parse(r.body) as { order_no: string; status: string; completed_at: string });
      expect(bodies.map((b) => [b.order_no, b.status])).toEqual([
        [p.orderNo, p.account === DELIVERED ? 'success' : 'failed'],
        [p.orderNo, p.account === DELIVERED ? 'success' : 'failed'],
      ]);
      // The second settlement happened later, and says so.
      expect(bodies[1].completed_at > bodies[0].completed_at).toBe(true);
    }
    for (const p of settledBeforeT.keys()) expect([p.orderNo, endpoint.forOrder(p.orderNo).length]).toEqual([p.orderNo, 1]);
  });

  it('a staff resolution after T is undone by the restore: the order waits for staff again, and resolving it moves the money once', async () => {
    expect(await stage(unknownBeforeT.orderNo)).toBe('unknown');
    const requery = await admin()('POST', `/admin/v1/reconciliation/orders/${unknownBeforeT.orderNo}/requery`, {});
    expect(requery.body.data.upstream.status).toBe('pending');
    const resolved = await admin()('POST', `/admin/v1/reconciliation/orders/${unknownBeforeT.orderNo}/resolve`, {
      outcome: 'success',
      note: 'again, after the restore',
    });
    expect(resolved.status).toBe(200);
    expect(await awaitStage(unknownBeforeT.orderNo, ['succeeded'])).toBe('succeeded');
    const types = await orderEvents(unknownBeforeT.orderNo);
    expect(types.filter((type) => type === 'OrderResolved' || type === 'OrderSucceeded')).toEqual(['OrderResolved', 'OrderSucceeded']);
  });

  it('orders submitted after T are gone; their nonces are forgotten, so the same signed request replayed within 300 s places the order again, once', async () => {
    for (const p of afterT) {
      const query = await signedFetch(service!, p.merchant, { path: '/api/v2/topup/query', body: JSON.stringify({ order_no: p.orderNo }) });
      expect([p.orderNo, query.status, query.body.code]).toEqual([p.orderNo, 404, 'ORDER_NOT_FOUND']);
    }
    // A read admitted after T: its nonce is not in the restored table.
    expect((await signedFetch(service!, merchantA, balanceCallAfterT)).status).toBe(200);
    expect((await signedFetch(service!, merchantA, balanceCallAfterT)).body.code).toBe('NONCE_REUSED');

    // The delivered order submitted after T, replayed byte for byte: the same order_no (it derives from out_trade_no), delivered once upstream.
    const lost = afterT.find((p) => p.account === DELIVERED && p.merchant === merchantA)!;
    expect(simulator.deliveries.get(lost.orderNo)).toBe(1);
    const replay = await signedFetch(service!, merchantA, lost.call);
    expect([replay.status, replay.body.data?.order_no]).toEqual([202, lost.orderNo]);
    expect((await signedFetch(service!, merchantA, lost.call)).body.code).toBe('NONCE_REUSED');
    expect(await awaitStage(lost.orderNo, ['succeeded', 'failed'])).toBe('succeeded');
    expect(simulator.deliveries.get(lost.orderNo)).toBe(1);
  });

  it('at the end the ledger verifies clean, hash chains included, and every wallet adds up to the cent', async () => {
    const facts = await restoredLedger();
    expect(facts.violations).toEqual([]);
    for (const merchant of [merchantA, merchantB]) {
      const chain = await admin()('GET', `/admin/v1/wallets/${merchant.merchantId}/chain`);
      expect([merchant.merchantId, chain.body.data.intact]).toEqual([merchant.merchantId, true]);
    }
    // From T on: A's in-flight orders (2 delivered, 1 refused, 1 unknown), the resolved one and the replayed one; B's in-flight one and the new one.
    const at = (m: TestMerchant) => balancesAtT.get(m.merchantId)!;
    const a = await balance(merchantA);
    expect([minor(a.balance), minor(a.frozen_balance)]).toEqual([minor(at(merchantA).balance) - 4n * PRICE, PRICE]);
    const b = await balance(merchantB);
    expect([minor(b.balance), minor(b.frozen_balance)]).toEqual([minor(at(merchantB).balance) - 2n * PRICE, 0n]);

    const verify = await cli(['verify'], { DATABASE_URL: restoredUrl() });
    expect([verify.code, verify.stderr]).toEqual([0, expect.stringContaining('clean')]);
    figures.events_verified_at_end = JSON.parse(verify.stdout).events_checked;
  });
});

/** The operators' CLI as they run it, with the database settings given and no other. */
function cli(args: string[], databaseEnv: Record<string, string>): Promise<{ code: number; stdout: string; stderr: string }> {
  const base = Object.fromEntries(Object.entries(process.env).filter(([k]) => k !== 'DATABASE_URL' && !k.startsWith('PG')));
  return new Promise((done) => {
    execFile(
      process.execPath,
      [...TYPESCRIPT_LOADER, 'src/cli/main.ts', ...args],
      { cwd: ROOT, env: { ...base, ...databaseEnv }, maxBuffer: 64 * 1024 * 1024 },
      (error, stdout, stderr) => done({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
    );
  });
}
