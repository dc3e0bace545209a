/**
 * `npm run bench:reconciliation`: what clearing an upstream outage costs a
 * reconciliation clerk. For each size, a fresh database and three merchants,
 * each with that many orders whose result the service never learnt (the
 * simulator answers after the service stopped waiting: half delivered, half
 * refused). Each merchant's orders are then cleared one way:
 *   one by one   a re-query and a resolution per order, as a clerk does with
 *                the single-order routes (no approval: each is 1.20, under
 *                the threshold)
 *   re-query     one bulk re-query job, polled until done, one apply, and
 *                the one approval the four-eyes rule asks of the apply
 *   report       one report fetched from the upstream, one apply, one approval
 * and the table gives the requests and the seconds each took, from the first
 * request to the last order out of the reconciliation queue. It measures; it
 * asserts only that the money came out right (each wallet: the deposit less
 * the delivered orders, nothing frozen), since figures from a wrong ledger
 * would mean nothing.
 *
 * Settings, as --name=value:
 *   --orders     500,5000   the sizes, orders per merchant
 *   --threshold  100.00     APPROVAL_THRESHOLD
 *   --requery    16         REQUERY_CONCURRENCY
 * The database server comes from DATABASE_URL or PG*, as for the tests.
 */
import { startUpstreamSimulator } from '../../../src/fulfilment/simulator/upstream-simulator';
import { isoTimestamp } from '../../../src/shared/clock';
import { adminClient } from '../../back-office/admin-client';
import { provisionMerchant, signedFetch, TestMerchant } from '../../support/merchant-fixture';
import { awaitStage, submitOrder } from '../../support/reconciliation-orders';
import { RunningService, startService } from '../../support/service';
import { createTestDatabase } from '../../support/test-database';
import { markdownTable } from '../markdown-table';

/** The upstream finishes each order this long after it arrives; the service waits only UPSTREAM_TIMEOUT_MS. */
const UPSTREAM_DELAY_MS = 1500;
const UPSTREAM_TIMEOUT_MS = 300;
const PRICE_MINOR = 120n;

interface Settings {
  orders: number[];
  threshold: string;
  requery: number;
}

type Way = 'one by one' | 're-query' | 'report';

interface Cleared {
  size: number;
  way: Way;
  requests: number;
  seconds: number;
}

type Admin = ReturnType<typeof adminClient>;

function settings(argv: string[]): Settings {
  const given = new Map(argv.map((a) => a.replace(/^--/, '').split('=') as [string, string]));
  return {
    orders: (given.get('orders') ?? '500,5000').split(',').map(Number),
    threshold: given.get('threshold') ?? '100.00',
    requery: Number(given.get('requery') ?? 16),
  };
}

/** A client that counts the requests it makes. */
function counting(admin: Admin) {
  let requests = 0;
  const call: Admin = Object.assign((...args: Parameters<Admin>) => {
    requests++;
    return admin(...args);
  }, admin);
  return { call, requests: () => requests };
}

async function outage(service: RunningService, merchant: TestMerchant, size: number, tag: number): Promise<{ delivered: string[]; refused: string[] }> {
  const delivered: string[] = [];
  const refused: string[] = [];
  // Eight merchants' clients at a time: the outage comes from traffic, not from one careful caller.
  for (let i = 0; i < size; i += 8) {
    const batch = Array.from({ length: Math.min(8, size - i) }, (_, j) => i + j);
    const made = await Promise.all(batch.map((k) => submitOrder(service, merchant, `${tag}${100000 + k}${k % 2 === 0 ? '123' : '000'}`)));
    made.forEach((orderNo, j) => (batch[j] % 2 === 0 ? delivered : refused).push(orderNo));
  }
  await awaitStage(service, [...delivered, ...refused], 'unknown', 600_000);
  await new Promise((r) => setTimeout(r, UPSTREAM_DELAY_MS));
  return { delivered, refused };
}

async function oneByOne(admin: Admin, orderNos: readonly string[]): Promise<void> {
  for (const orderNo of orderNos) {
    const said = await admin('POST', `/admin/v1/reconciliation/orders/${orderNo}/requery`, {});
    const status = said.body.data?.upstream?.status;
    if (status !== 'delivered' && status !== 'refused') throw new Error(`${orderNo}: the upstream said ${JSON.stringify(said.body)}`);
    const outcome = status === 'delivered' ? 'success' : 'failed';
    const resolved = await admin('POST', `/admin/v1/reconciliation/orders/${orderNo}/resolve`, { outcome, note: `upstream re-query: ${status}` });
    if (resolved.status !== 200) throw new Error(`${orderNo}: resolve answered ${resolved.status} ${JSON.stringify(resolved.body)}`);
  }
}

/** Applies, and has the second person approve when the four-eyes rule turns the apply into a request. */
async function applyAndApprove(admin: Admin, approver: string, path: string): Promise<void> {
  const applied = await admin('POST', path, { note: 'outage of the upstream, cleared from its own answers' });
  if (applied.status === 202) {
    const approved = await admin('POST', `/admin/v1/approvals/${applied.body.data.approval_id}/approve`, { note: 'checked the totals' }, { token: approver });
    if (approved.status !== 200 || approved.body.data.status !== 'approved') throw new Error(`approve: ${approved.status} ${JSON.stringify(approved.body)}`);
  } else if (applied.status !== 200) {
    throw new Error(`apply: ${applied.status} ${JSON.stringify(applied.body)}`);
  }
}

async function byRequery(admin: Admin, approver: string, merchant: TestMerchant): Promise<void> {
  const started = await admin('POST', '/admin/v1/reconciliation/requery', { merchant_id: merchant.merchantId });
  if (started.status !== 202) throw new Error(`requery: ${started.status} ${JSON.stringify(started.body)}`);
  const job = started.body.data.job_id as string;
  for (;;) {
    const progress = await admin('GET', `/admin/v1/reconciliation/requery/${job}?limit=1`);
    if (progress.body.data.status === 'done') break;
    await new Promise((r) => setTimeout(r, 250));
  }
  await applyAndApprove(admin, approver, `/admin/v1/reconciliation/requery/${job}/apply`);
}

async function byReport(admin: Admin, approver: string, window: { from: string; to: string }): Promise<void> {
  const fetched = await admin('POST', '/admin/v1/reconciliation/reports/fetch', window);
  if (fetched.status !== 201 && fetched.status !== 200) throw new Error(`fetch: ${fetched.status} ${JSON.stringify(fetched.body)}`);
  await applyAndApprove(admin, approver, `/admin/v1/reconciliation/reports/${fetched.body.data.report_id}/apply`);
}

async function measureSize(size: number, s: Settings): Promise<Cleared[]> {
  const db = await createTestDatabase('topup_bench_recon');
  const simulator = await startUpstreamSimulator({ deliveryDelayMs: UPSTREAM_DELAY_MS, failureDelayMs: UPSTREAM_DELAY_MS });
  const service = await startService(db, {
    FULFILMENT_CONCURRENCY: '64',
    UPSTREAM_TIMEOUT_MS: String(UPSTREAM_TIMEOUT_MS),
    UPSTREAM_URL: simulator.url,
    REQUERY_CONCURRENCY: String(s.requery),
    APPROVAL_THRESHOLD: s.threshold,
  });
  try {
    const admin = adminClient(service.url);
    const approver = (await admin.createStaff('reconciler', 'Second pair of eyes')).token;
    const deposit = PRICE_MINOR * BigInt(size) * 2n;
    const merchants = await Promise.all([0, 1, 2].map(() => provisionMerchant(service, { deposit })));
    const since = isoTimestamp(new Date(Date.now() - 1000));
    const outages = [];
    for (const [tag, merchant] of merchants.entries()) outages.push(await outage(service, merchant, size, tag + 1));
    const window = { from: since, to: isoTimestamp(new Date(Date.now() + 1000)) };

    const results: Cleared[] = [];
    const ways: [Way, (a: Admin, m: TestMerchant, orders: { delivered: string[]; refused: string[] }) => Promise<void>][] = [
      ['one by one', (a, _m, orders) => oneByOne(a, [...orders.delivered, ...orders.refused])],
      ['re-query', (a, m) => byRequery(a, approver, m)],
      ['report', (a) => byReport(a, approver, window)],
    ];
    for (const [i, [way, clear]] of ways.entries()) {
      const { call, requests } = counting(admin);
      const started = performance.now();
      await clear(call, merchants[i], outages[i]);
      await awaitStage(service, outages[i].delivered, 'succeeded', 600_000);
      await awaitStage(service, outages[i].refused, 'failed', 600_000);
      results.push({ size, way, requests: requests(), seconds: (performance.now() - started) / 1000 });
      await expectMoney(service, merchants[i], deposit - PRICE_MINOR * BigInt(outages[i].delivered.length));
    }
    return results;
  } finally {
    await service.stop();
    await simulator.stop();
    await db.drop();
  }
}

async function expectMoney(service: RunningService, merchant: TestMerchant, balance: bigint): Promise<void> {
  const reply = await signedFetch(service, merchant, { path: '/api/v2/balance' });
  const wanted = { balance: (Number(balance) / 100).toFixed(2), frozen_balance: '0.00' };
  const { data } = reply.body;
  if (data.balance !== wanted.balance || data.frozen_balance !== wanted.frozen_balance) {
    throw new Error(`the money is wrong for ${merchant.merchantId}: ${JSON.stringify(data)}, expected ${JSON.stringify(wanted)}`);
  }
}

/** The table and progress go to the terminal; the service's own log lines (one per request) are held back. */
const print = process.stderr.write.bind(process.stderr);
const say = (line: string) => print(`${line}\n`);

async function main() {
  process.stdout.write = () => true;
  const s = settings(process.argv.slice(2));
  const rows: Cleared[] = [];
  for (const size of s.orders) {
    say(`clearing ${size} unknown-result orders three ways ...`);
    rows.push(...(await measureSize(size, s)));
  }
  const base = new Map(rows.filter((r) => r.way === 'one by one').map((r) => [r.size, r]));
  say(
    markdownTable(
      ['orders', 'how', 'requests', 'seconds', 'orders/s', 'time vs one by one'],
      rows.map((r) => [
        String(r.size),
        r.way,
        String(r.requests),
        r.seconds.toFixed(1),
        (r.size / r.seconds).toFixed(0),
        `${((r.seconds / (base.get(r.size)?.seconds ?? r.seconds)) * 100).toFixed(0)} %`,
      ]),
    ).join('\n'),
  );
}

main().then(
  () => process.exit(0),
  (error) => {
    console.error(error);
    process.exit(1);
  },
);
