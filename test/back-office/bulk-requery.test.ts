import { PostgresSimulatorStore } from '../../src/fulfilment/simulator/simulator-store';
import { simulatorMigrations } from '../../src/fulfilment/simulator/simulator-store.migrations';
import { startUpstreamSimulator, UpstreamSimulator } from '../../src/fulfilment/simulator/upstream-simulator';
import { migrate } from '../../src/infrastructure/postgres/migrations';
import { isoTimestamp } from '../../src/shared/clock';
import { checkEventInvariants } from '../support/invariants';
import { awaitFinal, FULFILMENT_ENV } from '../support/fulfilment';
import { provisionMerchant, signedFetch, TestMerchant } from '../support/merchant-fixture';
import { stagesOf, unknownNeverReceived, unknownOrders } from '../support/reconciliation-orders';
import { RunningService, startService } from '../support/service';
import { createTestDatabase, TestDatabase } from '../support/test-database';
import { until } from '../support/until';
import { adminClient, failure } from './admin-client';

/**
 * Upstream answers that take longer than the service waits: a delivery and a
 * refusal both end as unknown results, which the upstream later reports as
 * delivered and refused; accounts ending 999 stay pending for good. A status
 * query answers well within the wait (60 against 1,000 ms): a busy CI
 * machine's stalls, hundreds of milliseconds long beside the browser suites,
 * turned answers given with 100 ms to spare into "unknown".
 */
const SLOW_UPSTREAM = { deliveryDelayMs: 1500, failureDelayMs: 1500, statusDelayMs: 60 };
const SHORT_TIMEOUT = { ...FULFILMENT_ENV, UPSTREAM_TIMEOUT_MS: '1000' };

describe('bulk re-query: many unknown orders asked about at once, in the background', () => {
  let db: TestDatabase;
  let simulator: UpstreamSimulator;
  let service: RunningService;
  let admin: ReturnType<typeof adminClient>;
  let reconciler: { staff_id: string; token: string };
  let auditor: { staff_id: string; token: string };
  let m1: TestMerchant;
  let orders: { delivered: string[]; refused: string[]; pending: string[]; neverReceived: string };
  let jobId: string;

  beforeAll(async () => {
    db = await createTestDatabase();
    // Kept in Postgres, the simulator knows what it never received: "not received", not "unknown".
    await migrate(db.pool, simulatorMigrations);
    simulator = await startUpstreamSimulator({ ...SLOW_UPSTREAM, store: new PostgresSimulatorStore(db.pool) });
    service = await startService(db, { ...SHORT_TIMEOUT, UPSTREAM_URL: simulator.url, REQUERY_CONCURRENCY: '3' });
    admin = adminClient(service.url);
    reconciler = await admin.createStaff('reconciler', 'Rita');
    auditor = await admin.createStaff('auditor', 'Aldo');
    m1 = await provisionMerchant(service);
    const made = await unknownOrders(service, m1, ['1011', '1012', '1013', '1014', '2000', '2001', '3000', '4999', '5999']);
    orders = { delivered: made.slice(0, 4), refused: made.slice(4, 7), pending: made.slice(7), neverReceived: await unknownNeverReceived(service, m1) };
    // The upstream finishes the slow ones after the service gave up on them.
    await new Promise((r) => setTimeout(r, 1600));
  });
  afterAll(async () => {
    expect((await checkEventInvariants(service.store)).violations).toEqual([]);
    await service.stop();
    await simulator.stop();
    await db.drop();
  });

  const as = (staff: { token: string }) => ({ token: staff.token });
  const balance = async (m: TestMerchant) => (await signedFetch(service, m, { path: '/api/v2/balance' })).body.data;
  const all = () => [...orders.delivered, ...orders.refused, ...orders.pending, orders.neverReceived];
  const job = (id: string, query = '') => admin('GET', `/admin/v1/reconciliation/requery/${id}${query}`, undefined, as(reconciler));

  it('asks the upstream about every order the filter selects, at most REQUERY_CONCURRENCY at once, and shows progress, answers and proposals', async () => {
    const other = await provisionMerchant(service);
    const [elsewhere] = await unknownOrders(service, other, ['9999']);
    simulator.statusInFlight.peak = 0;

    const started = await admin('POST', '/admin/v1/reconciliation/requery', { merchant_id: m1.merchantId }, as(reconciler));
    expect(started.status).toBe(202);
    expect(started.body.code).toBe('ACCEPTED');
    expect(started.body.data).toMatchObject({
      job_id: expect.stringMatching(/^rq_[0-9a-f]{16}$/),
      requested_by: reconciler.staff_id,
      requested_by_name: 'Rita',
      created_at: expect.stringMatching(/\+00:00$/),
      filter: { merchant_id: m1.merchantId, merchant_name: 'Test merchant', created_from: null, created_to: null, order_nos: null },
      total: 10,
      not_in_queue: [],
      page: { proposal: null, total: 10, limit: 100, offset: 0 },
    });
    jobId = started.body.data.job_id;
    expect(started.body.data.results.map((r: { order_no: string }) => r.order_no).sort()).toEqual(all().sort());

    const seen: number[] = [];
    const done = await until(
      async () => {
        const reply = await job(jobId);
        seen.push(reply.body.data.done);
        return reply;
      },
      (reply) => reply.body.data.status === 'done',
      30_000,
      20,
    );
    const view = done.body.data;
    expect(view).toMatchObject({ status: 'done', total: 10, done: 10, finished_at: expect.stringMatching(/\+00:00$/) });
    // Progress was visible on the way, and the upstream never had more than three of these at once.
    expect(seen.some((n) => n > 0 && n < 10)).toBe(true);
    expect(simulator.statusInFlight.peak).toBeLessThanOrEqual(3);
    expect(simulator.statusInFlight.peak).toBeGreaterThanOrEqual(2);
    // Each order asked about once; the other merchant's not at all.
    expect(all().map((n) => simulator.statusQueries.get(n))).toEqual(all().map(() => 1));
    expect(simulator.statusQueries.get(elsewhere)).toBeUndefined();

    // An unknown answer first, with its reason: the counts alone would not say why.
    expect(view.results.filter((r: { upstream: { status: string } }) => r.upstream.status === 'unknown')).toEqual([]);
    expect(view.upstream).toEqual({ delivered: 4, refused: 3, pending: 2, not_received: 1, unknown: 0 });
    expect(view.proposals).toEqual({ success: 4, failed: 3, leave: 2, decide: 1 });
    expect(view.applied).toEqual({ applied: 0, already_applied: 0, skipped: 0, refused: 0 });
    const result = (orderNo: string) => view.results.find((r: { order_no: string }) => r.order_no === orderNo);
    expect(result(orders.delivered[0])).toEqual({
      item: expect.any(Number),
      order_no: orders.delivered[0],
      merchant_id: m1.merchantId,
      merchant_name: 'Test merchant',
      amount: '1.20',
      currency: 'USD',
      upstream: { status: 'delivered', reference: `SIM-${orders.delivered[0]}` },
      proposal: 'success',
      answered_at: expect.stringMatching(/\+00:00$/),
      applied: null,
    });
    expect(result(orders.refused[0])).toMatchObject({
      upstream: { status: 'refused', fail_code: 'INVALID_ACCOUNT', fail_reason: 'The account does not exist' },
      proposal: 'failed',
    });
    expect(result(orders.pending[0])).toMatchObject({ upstream: { status: 'pending' }, proposal: 'leave' });
    expect(result(orders.neverReceived)).toMatchObject({ upstream: { status: 'not_received' }, proposal: 'decide' });
    // In the queue's order: oldest unknown result first.
    expect(view.results.map((r: { item: number }) => r.item)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);

    // A page of one proposal.
    const page = await job(jobId, '?proposal=success&limit=2&offset=1');
    expect(page.body.data.page).toEqual({ proposal: 'success', total: 4, limit: 2, offset: 1 });
    expect(page.body.data.results.map((r: { proposal: string }) => r.proposal)).toEqual(['success', 'success']);
    // Proposals are never applied by themselves.
    expect([...(await stagesOf(service, all())).values()]).toEqual(all().map(() => 'unknown'));
    expect((await admin('GET', `/admin/v1/reconciliation/requery/${jobId}`, undefined, as(auditor))).status).toBe(200);
  });

  it('selects by order_nos, listing those not in the queue, and by creation time', async () => {
    const byList = await admin(
      'POST',
      '/admin/v1/reconciliation/requery',
      { order_nos: [orders.pending[0], 'TNOSUCHORDER', orders.refused[1]] },
      as(reconciler),
    );
    expect(byList.status).toBe(202);
    expect(byList.body.data).toMatchObject({ total: 2, not_in_queue: ['TNOSUCHORDER'], filter: { order_nos: 3, merchant_id: null } });
    const future = isoTimestamp(new Date(Date.now() + 3_600_000));
    const none = await admin('POST', '/admin/v1/reconciliation/requery', { created_from: future, merchant_id: m1.merchantId }, as(reconciler));
    expect(none.body.data).toMatchObject({ status: 'done', total: 0, done: 0, filter: { created_from: future, merchant_id: m1.merchantId } });
    const window = await admin(
      'POST',
      '/admin/v1/reconciliation/requery',
      { created_from: isoTimestamp(new Date(Date.now() - 3_600_000)), created_to: future, merchant_id: m1.merchantId },
      as(reconciler),
    );
    expect(window.body.data.total).toBe(10);

    const list = await admin('GET', '/admin/v1/reconciliation/requery?limit=2', undefined, as(auditor));
    expect(list.status).toBe(200);
    expect(list.body.data.jobs).toHaveLength(2);
    expect(list.body.data.jobs[0]).toMatchObject({ job_id: window.body.data.job_id, requested_by_name: 'Rita', total: 10 });
    expect(list.body.data.jobs[0]).not.toHaveProperty('results');
    const rest = await admin('GET', `/admin/v1/reconciliation/requery?cursor=${list.body.data.next_cursor}`, undefined, as(auditor));
    expect(rest.body.data.jobs.map((j: { job_id: string }) => j.job_id)).toEqual(expect.arrayContaining([byList.body.data.job_id, jobId]));
  });

  it('refuses a job without a filter or with a bad one, and reads only existing jobs', async () => {
    const start = (body: unknown, staff = reconciler) => admin('POST', '/admin/v1/reconciliation/requery', body, as(staff));
    expect((await start({})).body).toEqual(failure('VALIDATION_FAILED'));
    expect((await start({ merchant_id: 'bad id' })).body).toEqual(failure('VALIDATION_FAILED', 'merchant_id'));
    expect((await start({ created_from: 'yesterday' })).body).toEqual(failure('VALIDATION_FAILED', 'created_from'));
    expect((await start({ created_from: '2026-01-02T00:00:00Z', created_to: '2026-01-01T00:00:00Z' })).body).toEqual(
      failure('VALIDATION_FAILED', 'created_to'),
    );
    expect((await start({ order_nos: [] })).body).toEqual(failure('VALIDATION_FAILED', 'order_nos'));
    expect((await start({ order_nos: ['T1', 'T1'] })).body).toEqual(failure('VALIDATION_FAILED', 'order_nos'));
    // 10,000 order numbers fit the bulk routes' 1 MiB body; one more is refused by the rule, not the size.
    const numbers = (n: number) => Array.from({ length: n }, (_, i) => `T01JD2X6Q3V8M4R7N5K${String(i).padStart(8, '0')}`);
    expect((await start({ order_nos: numbers(10_000) })).body.data).toMatchObject({ total: 0, not_in_queue: expect.arrayContaining([numbers(1)[0]]) });
    expect((await start({ order_nos: numbers(10_001) })).body).toEqual(failure('VALIDATION_FAILED', 'order_nos'));
    expect((await start({ order_nos: numbers(10_001), padding: 'x'.repeat(1024 * 1024) })).body).toEqual(failure('PAYLOAD_TOO_LARGE'));
    expect((await start({ merchant_id: m1.merchantId, status: 'unknown' })).body).toEqual(failure('VALIDATION_FAILED', 'status'));
    expect((await start({ merchant_id: m1.merchantId }, auditor)).status).toBe(403);
    expect((await job('rq_0000000000000000')).body).toEqual(failure('REQUERY_JOB_NOT_FOUND'));
    expect((await job(jobId, '?proposal=maybe')).body).toEqual(failure('VALIDATION_FAILED', 'proposal'));
    expect((await job(jobId, '?limit=5000')).body).toEqual(failure('VALIDATION_FAILED', 'limit'));
    expect((await job(jobId, '?cursor=x')).body).toEqual(failure('VALIDATION_FAILED', 'cursor'));
  });

  it('applies the definitive proposals in one call, to the cent; a repeat changes nothing; one resolved meanwhile is skipped', async () => {
    const before = await balance(m1);
    expect(before).toMatchObject({ balance: '100.00', frozen_balance: '12.00' });
    // A colleague settles one of the delivered orders by hand first.
    expect((await admin('POST', `/admin/v1/reconciliation/orders/${orders.delivered[3]}/resolve`, { outcome: 'success', note: 'phoned them' })).status).toBe(
      200,
    );

    const applied = await admin('POST', `/admin/v1/reconciliation/requery/${jobId}/apply`, { note: 'bulk re-query after the outage' }, as(reconciler));
    expect(applied.status).toBe(200);
    expect(applied.body.data).toMatchObject({
      source: 'requery',
      job_id: jobId,
      report_id: null,
      applied_by_name: 'Rita',
      counts: { applied: 6, already_applied: 0, skipped: 1, refused: 0 },
      amounts: [{ currency: 'USD', deducted: '3.60', released: '3.60' }],
    });
    const skipped = applied.body.data.orders.find((o: { order_no: string }) => o.order_no === orders.delivered[3]);
    expect(skipped).toMatchObject({ result: 'skipped', code: 'RESOLVED_MEANWHILE', resolved_by: 'admin', resolved_by_name: 'Administrator (ADMIN_TOKEN)' });
    await Promise.all([...orders.delivered, ...orders.refused].map((n) => awaitFinal(service, m1, n)));
    // Four deducted (one by hand), three released; the two pending and the one never received stay frozen.
    expect(await balance(m1)).toMatchObject({ balance: '95.20', frozen_balance: '3.60', available_balance: '91.60' });
    const resolved = (await service.store.readStream(`order-${orders.refused[0]}`)).find((e) => e.type === 'OrderResolved');
    expect(resolved?.data).toEqual({
      outcome: 'failed',
      resolvedBy: reconciler.staff_id,
      note: 'bulk re-query after the outage',
      evidence: { source: 'requery', jobId, upstream: { status: 'refused', fail_code: 'INVALID_ACCOUNT', fail_reason: 'The account does not exist' } },
      at: expect.any(String),
    });

    const again = await admin('POST', `/admin/v1/reconciliation/requery/${jobId}/apply`, { note: 'again' }, as(reconciler));
    expect(again.body.data.counts).toEqual({ applied: 0, already_applied: 6, skipped: 1, refused: 0 });
    expect(await balance(m1)).toMatchObject({ balance: '95.20', frozen_balance: '3.60' });

    // The clerk decides the one the upstream never received; the pending ones have nothing to apply.
    const chosen = await admin(
      'POST',
      `/admin/v1/reconciliation/requery/${jobId}/apply`,
      {
        note: 'never arrived: released',
        orders: [{ order_no: orders.neverReceived }, { order_no: orders.pending[0] }, { order_no: orders.refused[0] }, { order_no: 'TNOTINJOB' }],
      },
      as(reconciler),
    );
    expect(chosen.body.data.orders.map((o: any) => [o.result, o.code])).toEqual([
      ['refused', 'OUTCOME_REQUIRED'],
      ['refused', 'NO_PROPOSAL'],
      ['already_applied', null],
      ['refused', 'NOT_IN_JOB'],
    ]);
    const decided = await admin(
      'POST',
      `/admin/v1/reconciliation/requery/${jobId}/apply`,
      { note: 'never arrived: released', orders: [{ order_no: orders.neverReceived, outcome: 'failed' }] },
      as(reconciler),
    );
    expect(decided.body.data).toMatchObject({ counts: { applied: 1 }, amounts: [{ currency: 'USD', deducted: '0.00', released: '1.20' }] });
    expect(await awaitFinal(service, m1, orders.neverReceived)).toMatchObject({ status: 'failed', fail_code: 'RESOLVED_FAILED' });
    expect(await balance(m1)).toMatchObject({ balance: '95.20', frozen_balance: '2.40' });

    const view = (await job(jobId)).body.data;
    expect(view.applied).toEqual({ applied: 7, already_applied: 0, skipped: 1, refused: 1 });
    const audit = await service.pool.query(`select count(*)::int as n from back_office_audit where target = $1 and action = 'reconciliation.bulk_applied'`, [
      `requery:${jobId}`,
    ]);
    expect(audit.rows[0].n).toBe(4);
    expect((await admin('POST', '/admin/v1/reconciliation/requery/rq_0000000000000000/apply', { note: 'x' }, as(reconciler))).body).toEqual(
      failure('REQUERY_JOB_NOT_FOUND'),
    );
    expect((await admin('POST', `/admin/v1/reconciliation/requery/${jobId}/apply`, { note: 'x' }, as(auditor))).status).toBe(403);
  });
});

describe('bulk re-query across instances: a job outlives the instance that ran it', () => {
  let db: TestDatabase;
  let simulator: UpstreamSimulator;
  const services: RunningService[] = [];
  afterAll(async () => {
    for (const service of services) await service.stop().catch(() => undefined);
    await simulator?.stop();
    await db?.drop();
  });

  it('is resumed by other instances when its own stops mid-way, a dead lease taken over when it runs out, and no order asked twice', async () => {
    db = await createTestDatabase();
    // Answers slower than a claim, well within the service's timeout: with 50 ms to spare, a loaded CI machine's
    // stalls turned some answers into timeouts (unknown).
    simulator = await startUpstreamSimulator({ deliveryDelayMs: 10, statusDelayMs: 150 });
    const env = { ...SHORT_TIMEOUT, UPSTREAM_URL: simulator.url, REQUERY_CONCURRENCY: '2' };
    const first = await startService(db, env);
    services.push(first);
    const merchant = await provisionMerchant(first);
    const orderNos = await unknownOrders(
      first,
      merchant,
      Array.from({ length: 12 }, (_, i) => `6${i}999`),
    );
    const started = await adminClient(first.url)('POST', '/admin/v1/reconciliation/requery', { merchant_id: merchant.merchantId });
    const jobId = started.body.data.job_id as string;
    const answered = async () =>
      (await first.pool.query(`select count(*)::int as n from requery_items where job_id = $1 and state = 'answered'`, [jobId])).rows[0].n;
    await until(answered, (n) => n >= 2, 10_000, 20);
    await first.stop();
    services.splice(services.indexOf(first), 1);

    // Stopped mid-way: what it had in flight it finished; the rest waits, and the job still runs.
    const left = await db.pool.query(`select order_no from requery_items where job_id = $1 and state = 'waiting' order by item`, [jobId]);
    expect(left.rows.length).toBeGreaterThan(2);
    expect((await db.pool.query('select finished_at from requery_jobs where job_id = $1', [jobId])).rows[0].finished_at).toBeNull();
    // Two of them as an instance that died mid-exchange would leave them: leased, for a little longer.
    const dead = left.rows.slice(0, 2).map((r) => r.order_no as string);
    await db.pool.query(
      `update requery_items set leased_by = 'dead-instance', lease_until = now() + interval '1.5 seconds', attempts = 1 where job_id = $1 and order_no = any($2)`,
      [jobId, dead],
    );

    simulator.statusInFlight.peak = 0;
    const second = await startService(db, env);
    const third = await startService(db, env);
    services.push(second, third);
    const finished = await until(
      () => adminClient(second.url)('GET', `/admin/v1/reconciliation/requery/${jobId}`),
      (reply) => reply.body.data?.status === 'done',
      30_000,
      100,
    );
    expect(finished.body.data).toMatchObject({ status: 'done', total: 12, done: 12, upstream: { pending: 12 }, proposals: { leave: 12 } });
    // Two instances on one database stay within REQUERY_CONCURRENCY together, and never ask about one order twice.
    expect(simulator.statusInFlight.peak).toBeLessThanOrEqual(2);
    expect(orderNos.map((n) => simulator.statusQueries.get(n))).toEqual(orderNos.map(() => 1));
    // The dead instance's orders were taken over once their leases ran out.
    const takenOver = await db.pool.query(`select order_no, attempts, leased_by from requery_items where job_id = $1 and order_no = any($2)`, [jobId, dead]);
    expect(takenOver.rows.map((r) => [r.attempts, r.leased_by === 'dead-instance'])).toEqual([
      [2, false],
      [2, false],
    ]);
    expect((await checkEventInvariants(second.store)).violations).toEqual([]);
  });
});
