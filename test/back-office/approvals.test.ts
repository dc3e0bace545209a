import { Client } from 'pg';
import { ResolveOrder } from '../../src/ledger/commands/resolve-order/resolve-order.command';
import { encodeEvent } from '../../src/ledger/event-codec';
import { approvalStream } from '../../src/ledger/streams';
import { ApprovalInbox } from '../../src/back-office/approvals/approval-inbox';
import { runCli } from '../../src/cli/main';
import { startUpstreamSimulator, UpstreamSimulator } from '../../src/fulfilment/simulator/upstream-simulator';
import { FULFILMENT_ENV } from '../support/fulfilment';
import { checkEventInvariants } from '../support/invariants';
import { provisionMerchant, signedFetch, TestMerchant } from '../support/merchant-fixture';
import { RunningService, startService } from '../support/service';
import { createTestDatabase, TestDatabase } from '../support/test-database';
import { until } from '../support/until';
import { adminClient, failure } from './admin-client';

type Staff = { staff_id: string; token: string };

/** APPROVAL_THRESHOLD 1.00: an order of 1.20, a deposit of 5.00 each need a second person; 0.50 does not. */
const SETTINGS = { ...FULFILMENT_ENV, UPSTREAM_TIMEOUT_MS: '200', APPROVAL_THRESHOLD: '1.00' };

describe('the four-eyes rule: money moves only once a second person approves', () => {
  let db: TestDatabase;
  let simulator: UpstreamSimulator;
  let service: RunningService;
  let merchant: TestMerchant;
  let admin: ReturnType<typeof adminClient>;
  let ada: Staff;
  let ben: Staff;
  let rita: Staff;
  let rob: Staff;
  let aldo: Staff;
  let seq = 0;

  beforeAll(async () => {
    db = await createTestDatabase();
    simulator = await startUpstreamSimulator({ deliveryDelayMs: 10 });
    service = await startService(db, { ...SETTINGS, UPSTREAM_URL: simulator.url });
    merchant = await provisionMerchant(service);
    admin = adminClient(service.url);
    ada = await admin.createStaff('admin', 'Ada Admin');
    ben = await admin.createStaff('admin', 'Ben Admin');
    rita = await admin.createStaff('reconciler', 'Rita');
    rob = await admin.createStaff('reconciler', 'Rob');
    aldo = await admin.createStaff('auditor', 'Aldo');
  });
  afterAll(async () => {
    expect((await checkEventInvariants(service.store)).violations).toEqual([]);
    await service.stop();
    await simulator.stop();
    await db.drop();
  });

  const as = (staff: Staff | null) => ({ token: staff === null ? undefined : staff.token });
  const balance = async () => (await signedFetch(service, merchant, { path: '/api/v2/balance' })).body.data;
  const deposit = (amount: string, reference: string, by: Staff | null = null, note?: string) =>
    admin('POST', `/admin/v1/merchants/${merchant.merchantId}/deposits`, { amount, reference, ...(note === undefined ? {} : { note }) }, as(by));
  const approve = (approvalId: string, by: Staff | null, note = 'checked against the bank statement') =>
    admin('POST', `/admin/v1/approvals/${approvalId}/approve`, { note }, as(by));
  const reject = (approvalId: string, by: Staff | null, note = 'no such transfer') =>
    admin('POST', `/admin/v1/approvals/${approvalId}/reject`, { note }, as(by));
  const walletEvents = async (type: string, match: (data: Record<string, unknown>) => boolean) =>
    (await service.store.readStream(`wallet-${merchant.merchantId}`)).filter((e) => e.type === type && match(e.data)).map((e) => e.data);
  const depositsOf = (reference: string) => walletEvents('FundsDeposited', (d) => d.reference === reference);

  async function orderWithUnknownResult(): Promise<string> {
    const reply = await signedFetch(service, merchant, {
      path: '/api/v2/topup/submit',
      body: JSON.stringify({ out_trade_no: `AP-${++seq}`, sku_id: 'mlbb-86', account_id: `41${seq}999`, account_fields: { server_id: '9' } }),
    });
    const orderNo = reply.body.data.order_no as string;
    const detail = await until(
      () => admin('GET', `/admin/v1/orders/${orderNo}`),
      (r) => r.body.data?.stage === 'unknown',
    );
    if (detail.body.data?.stage !== 'unknown') throw new Error(`${orderNo} never reached the reconciliation queue`);
    return orderNo;
  }

  describe('a deposit over the threshold', () => {
    let approvalId: string;

    it('becomes a request (202 APPROVAL_REQUIRED), and nothing moves', async () => {
      const before = await balance();
      const reply = await deposit('5.00', 'wire-5', null, 'wire from the merchant, 22 Nov');
      expect(reply.status).toBe(202);
      expect(reply.body).toEqual({
        success: true,
        code: 'APPROVAL_REQUIRED',
        data: {
          approval_id: expect.stringMatching(/^apr_[0-9a-f]{16}$/),
          kind: 'deposit',
          status: 'pending',
          summary: 'Deposit 5.00 USD, reference wire-5',
          merchant_id: merchant.merchantId,
          merchant_name: 'Test merchant',
          amounts: [{ currency: 'USD', amount: '5.00' }],
          payload: { merchant_id: merchant.merchantId, reference: 'wire-5', amount: '5.00' },
          requested_by: 'admin',
          requested_by_name: 'Administrator (ADMIN_TOKEN)',
          requested_at: expect.stringMatching(/\+00:00$/),
          note: 'wire from the merchant, 22 Nov',
          decided_by: null,
          decided_by_name: null,
          decided_at: null,
          decision_note: null,
          carried_out_at: null,
          result: null,
        },
      });
      approvalId = reply.body.data.approval_id;
      expect(await balance()).toEqual(before);
      expect(await depositsOf('wire-5')).toEqual([]);
      const audit = await service.pool.query(`select staff_id, action from back_office_audit where target = $1`, [`approval:${approvalId}`]);
      expect(audit.rows).toEqual([{ staff_id: 'admin', action: 'approval.requested' }]);
    });

    it('asked again while it waits, is the same request; another amount under its reference is refused', async () => {
      const again = await deposit('5', 'wire-5');
      expect(again.status).toBe(202);
      expect(again.body.data.approval_id).toBe(approvalId);
      expect((await deposit('5.01', 'wire-5')).body).toEqual(failure('APPROVAL_PENDING'));
      const listed = await admin('GET', '/admin/v1/approvals?kind=deposit&status=pending');
      expect(listed.body.data.approvals.filter((a: { payload: { reference: string } }) => a.payload.reference === 'wire-5')).toHaveLength(1);
    });

    it('cannot be approved by its requester, by a reconciler or by an auditor', async () => {
      expect(await approve(approvalId, null)).toMatchObject({ status: 403, body: failure('SELF_APPROVAL') });
      // A reconciler does not even see deposits (an adjustment's approval refuses a reconciler with APPROVAL_ROLE_NOT_ALLOWED).
      expect(await approve(approvalId, rita)).toMatchObject({ status: 403, body: failure('FORBIDDEN') });
      expect(await approve(approvalId, aldo)).toMatchObject({ status: 403, body: failure('FORBIDDEN') });
      expect(await reject(approvalId, aldo)).toMatchObject({ status: 403, body: failure('FORBIDDEN') });
      expect(await depositsOf('wire-5')).toEqual([]);
      expect((await admin('GET', `/admin/v1/approvals/${approvalId}`)).body.data.status).toBe('pending');
    });

    it('is carried out when another administrator approves it: once, with requester and approver in the event', async () => {
      const before = await balance();
      const reply = await approve(approvalId, ada, 'matches the bank statement');
      expect(reply.status).toBe(200);
      expect(reply.body.data).toMatchObject({
        approval_id: approvalId,
        status: 'approved',
        decided_by: ada.staff_id,
        decided_by_name: 'Ada Admin',
        decided_at: expect.stringMatching(/\+00:00$/),
        decision_note: 'matches the bank statement',
        carried_out_at: expect.stringMatching(/\+00:00$/),
        result: { ok: true, detail: { merchant_id: merchant.merchantId, currency: 'USD', balance: expect.any(String) } },
      });
      const after = await balance();
      expect(Math.round((Number(after.balance) - Number(before.balance)) * 100)).toBe(500);
      expect(await depositsOf('wire-5')).toEqual([{ reference: 'wire-5', amount: '500', by: 'admin', approvedBy: ada.staff_id, at: expect.any(String) }]);
      const audit = await service.pool.query(
        `select staff_id, details from back_office_audit where target = $1 and action = 'wallet.deposited' and details->>'reference' = 'wire-5'`,
        [`merchant:${merchant.merchantId}`],
      );
      expect(audit.rows).toEqual([{ staff_id: 'admin', details: { reference: 'wire-5', amount: '5.00', approved_by: ada.staff_id } }]);
    });

    it('cannot be approved or rejected again; the same deposit again changes nothing, as without the rule', async () => {
      expect(await approve(approvalId, ada)).toMatchObject({ status: 409, body: failure('APPROVAL_ALREADY_DECIDED') });
      expect(await approve(approvalId, ben)).toMatchObject({ status: 409, body: failure('APPROVAL_ALREADY_DECIDED') });
      expect(await reject(approvalId, ben)).toMatchObject({ status: 409, body: failure('APPROVAL_ALREADY_DECIDED') });
      const again = await deposit('5.00', 'wire-5');
      expect(again.status).toBe(201);
      expect(again.body.code).toBe('OK');
      expect(await depositsOf('wire-5')).toHaveLength(1);
      expect((await deposit('6.00', 'wire-5')).body).toEqual(failure('DEPOSIT_REFERENCE_CONFLICT'));
    });
  });

  it('a deposit under the threshold moves at once', async () => {
    const reply = await deposit('0.50', 'small-1');
    expect(reply.status).toBe(201);
    expect(await depositsOf('small-1')).toEqual([{ reference: 'small-1', amount: '50', by: 'admin', at: expect.any(String) }]);
  });

  it('a rejected request moves nothing, and its reference may be asked for again; a requester may withdraw their own request', async () => {
    const first = (await deposit('6.00', 'wire-6', ada)).body.data.approval_id as string;
    const rejected = await reject(first, ben, 'the bank shows no such transfer');
    expect(rejected.status).toBe(200);
    expect(rejected.body.data).toMatchObject({
      status: 'rejected',
      decided_by: ben.staff_id,
      decided_by_name: 'Ben Admin',
      carried_out_at: null,
      result: null,
    });
    expect(await approve(first, ben)).toMatchObject({ status: 409, body: failure('APPROVAL_ALREADY_DECIDED') });
    expect(await depositsOf('wire-6')).toEqual([]);

    const second = await deposit('6.00', 'wire-6', ada);
    expect(second.status).toBe(202);
    expect(second.body.data.approval_id).not.toBe(first);
    const withdrawn = await reject(second.body.data.approval_id, ada, 'asked by mistake');
    expect(withdrawn.body.data).toMatchObject({ status: 'rejected', decided_by: ada.staff_id });
    expect(await depositsOf('wire-6')).toEqual([]);
  });

  describe('a resolution over the threshold', () => {
    it('waits with the order unknown; another reconciler approves it, and the order and its events name both', async () => {
      const orderNo = await orderWithUnknownResult();
      const before = await balance();
      const reply = await admin(
        'POST',
        `/admin/v1/reconciliation/orders/${orderNo}/resolve`,
        { outcome: 'success', note: 'provider says delivered' },
        as(rita),
      );
      expect(reply.status).toBe(202);
      expect(reply.body).toMatchObject({
        code: 'APPROVAL_REQUIRED',
        data: {
          kind: 'resolution',
          status: 'pending',
          summary: `Resolve order ${orderNo} as success`,
          amounts: [{ currency: 'USD', amount: '1.20' }],
          payload: { order_no: orderNo, outcome: 'success', note: 'provider says delivered' },
          requested_by: rita.staff_id,
          requested_by_name: 'Rita',
        },
      });
      const approvalId = reply.body.data.approval_id as string;
      expect((await admin('GET', `/admin/v1/orders/${orderNo}`)).body.data).toMatchObject({ stage: 'unknown', resolution: null });
      expect(await balance()).toEqual(before);

      // The same request again is the same request; the other outcome must wait for this one to be decided.
      expect(
        (await admin('POST', `/admin/v1/reconciliation/orders/${orderNo}/resolve`, { outcome: 'success', note: 'provider says delivered' }, as(rita))).body.data
          .approval_id,
      ).toBe(approvalId);
      expect((await admin('POST', `/admin/v1/reconciliation/orders/${orderNo}/resolve`, { outcome: 'failed', note: 'or not' }, as(rob))).body).toEqual(
        failure('APPROVAL_PENDING'),
      );

      expect(await approve(approvalId, rita)).toMatchObject({ status: 403, body: failure('SELF_APPROVAL') });
      const seen = await admin('GET', '/admin/v1/approvals?status=pending', undefined, as(aldo));
      expect(seen.status).toBe(200);
      expect(seen.body.data.approvals.map((a: { approval_id: string }) => a.approval_id)).toContain(approvalId);

      const approved = await approve(approvalId, rob, 'the provider report agrees');
      expect(approved.status).toBe(200);
      expect(approved.body.data).toMatchObject({
        status: 'approved',
        decided_by: rob.staff_id,
        decided_by_name: 'Rob',
        result: { ok: true, detail: { order_no: orderNo, stage: 'succeeded', status: 'success' } },
      });
      const detail = (await admin('GET', `/admin/v1/orders/${orderNo}`)).body.data;
      expect(detail).toMatchObject({ stage: 'succeeded', status: 'success' });
      expect(detail.resolution).toEqual({
        outcome: 'success',
        resolved_by: rita.staff_id,
        resolved_by_name: 'Rita',
        resolved_at: expect.any(String),
        note: 'provider says delivered',
        approved_by: rob.staff_id,
        approved_by_name: 'Rob',
      });
      const resolved = detail.history.find((e: { type: string }) => e.type === 'OrderResolved');
      expect(resolved).toMatchObject({ staff_name: 'Rita', approved_by_name: 'Rob', data: { resolved_by: rita.staff_id, approved_by: rob.staff_id } });
      const after = await balance();
      expect(Math.round((Number(before.balance) - Number(after.balance)) * 100)).toBe(120);
      expect(await walletEvents('FrozenFundsDeducted', (d) => d.orderNo === orderNo)).toHaveLength(1);

      expect((await admin('POST', `/admin/v1/reconciliation/orders/${orderNo}/resolve`, { outcome: 'failed', note: 'again' }, as(rob))).body).toEqual(
        failure('ORDER_ALREADY_FINAL'),
      );
      const audit = await service.pool.query(`select staff_id, details from back_office_audit where target = $1`, [`order:${orderNo}`]);
      expect(audit.rows).toEqual([{ staff_id: rita.staff_id, details: { outcome: 'success', note: 'provider says delivered', approved_by: rob.staff_id } }]);
    });

    it('resolved meanwhile by someone else, is not resolved twice: the approval records the refusal as failed', async () => {
      const orderNo = await orderWithUnknownResult();
      const approvalId = (await admin('POST', `/admin/v1/reconciliation/orders/${orderNo}/resolve`, { outcome: 'success', note: 'delivered' }, as(rita))).body
        .data.approval_id as string;
      // A bulk apply, say, resolves the order before the approval comes.
      await service.commands.execute(new ResolveOrder(orderNo, 'failed', rob.staff_id, 'the report says failed'));
      const approved = await approve(approvalId, rob);
      expect(approved.status).toBe(200);
      expect(approved.body.data).toMatchObject({ status: 'failed', decided_by: rob.staff_id, result: { ok: false, code: 'ORDER_ALREADY_FINAL' } });
      expect(await walletEvents('FrozenFundsDeducted', (d) => d.orderNo === orderNo)).toEqual([]);
      expect(await walletEvents('FrozenFundsReleased', (d) => d.orderNo === orderNo)).toHaveLength(1);
      expect((await admin('GET', `/admin/v1/approvals?status=failed`)).body.data.approvals.map((a: { approval_id: string }) => a.approval_id)).toContain(
        approvalId,
      );
    });

    it("shows what a resolution rests on (a report's line, as bulk reconciliation records it) on the order's page", async () => {
      const orderNo = await orderWithUnknownResult();
      const evidence = { source: 'report', reportId: 'rpt_1', line: 12, status: 'delivered', reference: 'UP-77' } as const;
      await service.commands.execute(new ResolveOrder(orderNo, 'success', rita.staff_id, 'report line 12', { evidence, approvedBy: rob.staff_id }));
      expect((await admin('GET', `/admin/v1/orders/${orderNo}`, undefined, as(aldo))).body.data.resolution).toEqual({
        outcome: 'success',
        resolved_by: rita.staff_id,
        resolved_by_name: 'Rita',
        resolved_at: expect.any(String),
        note: 'report line 12',
        approved_by: rob.staff_id,
        approved_by_name: 'Rob',
        evidence: { source: 'report', report_id: 'rpt_1', line: 12, status: 'delivered', reference: 'UP-77' },
      });
    });

    it('of an order that is not waiting for one is refused at once, as without the rule', async () => {
      expect((await admin('POST', '/admin/v1/reconciliation/orders/T00000000000000000000000000/resolve', { outcome: 'success', note: 'x' })).body).toEqual(
        failure('ORDER_NOT_FOUND'),
      );
    });
  });

  it('two people approving at once: exactly one approval is recorded and the money moves once', async () => {
    const approvalId = (await deposit('7.00', 'race')).body.data.approval_id as string;
    const replies = await Promise.all([approve(approvalId, ada), approve(approvalId, ben)]);
    expect(replies.map((r) => r.status).sort()).toEqual([200, 409]);
    const winner = replies.find((r) => r.status === 200)!.body.data.decided_by;
    expect(replies.find((r) => r.status === 409)!.body).toEqual(failure('APPROVAL_ALREADY_DECIDED'));
    expect(await depositsOf('race')).toEqual([expect.objectContaining({ amount: '700', approvedBy: winner })]);
    const stream = await service.store.readStream(approvalStream(approvalId));
    expect(stream.map((e) => e.type)).toEqual(['ApprovalRequested', 'ApprovalGranted', 'ApprovalCarriedOut']);
  });

  describe('a crash between the approval and the movement', () => {
    /** A request approved in the log whose movement never happened: the process died right after ApprovalGranted. */
    async function grantedWithoutMovement(reference: string, approver: Staff): Promise<string> {
      const approvalId = (await deposit('8.00', reference)).body.data.approval_id as string;
      const granted = encodeEvent({
        type: 'ApprovalGranted',
        data: { approvedBy: approver.staff_id, note: 'granted, then the lights went out', at: new Date().toISOString() },
      });
      await service.store.append(approvalStream(approvalId), [granted], 0n);
      expect(await depositsOf(reference)).toEqual([]);
      return approvalId;
    }

    it('is carried out by the sweep, exactly once', async () => {
      const approvalId = await grantedWithoutMovement('crash-1', ada);
      const listed = await until(
        () => admin('GET', '/admin/v1/approvals?kind=deposit'),
        (r) =>
          r.body.data?.approvals.some((a: { approval_id: string; carried_out_at: string | null }) => a.approval_id === approvalId && a.carried_out_at !== null),
      );
      expect(listed.body.data.approvals.find((a: { approval_id: string }) => a.approval_id === approvalId)).toMatchObject({
        status: 'approved',
        decided_by: ada.staff_id,
        result: { ok: true },
      });
      const inbox = service.app.get(ApprovalInbox);
      await Promise.all([inbox.sweep(), inbox.sweep()]);
      expect(await depositsOf('crash-1')).toEqual([expect.objectContaining({ amount: '800', by: 'admin', approvedBy: ada.staff_id })]);
      expect((await service.store.readStream(approvalStream(approvalId))).map((e) => e.type)).toEqual([
        'ApprovalRequested',
        'ApprovalGranted',
        'ApprovalCarriedOut',
      ]);
    });

    it('is carried out when its approver approves it again; anyone else is told it is decided', async () => {
      const approvalId = await grantedWithoutMovement('crash-2', ben);
      expect(await approve(approvalId, ada)).toMatchObject({ status: 409, body: failure('APPROVAL_ALREADY_DECIDED') });
      const retried = await approve(approvalId, ben);
      expect(retried.status).toBe(200);
      expect(retried.body.data).toMatchObject({ status: 'approved', decided_by: ben.staff_id, carried_out_at: expect.any(String) });
      await service.app.get(ApprovalInbox).sweep();
      expect(await depositsOf('crash-2')).toEqual([expect.objectContaining({ amount: '800', approvedBy: ben.staff_id })]);
    });
  });

  describe('the list', () => {
    it('shows requests waiting first, then the newest; filters by status and kind, pages with limit and offset', async () => {
      const waiting = (await deposit('9.00', 'list-1')).body.data.approval_id as string;
      const all = (await admin('GET', '/admin/v1/approvals')).body.data;
      expect(all.total).toBeGreaterThanOrEqual(8);
      const statuses = all.approvals.map((a: { status: string }) => a.status);
      expect(statuses.indexOf('pending')).toBe(0);
      expect(statuses.lastIndexOf('pending')).toBeLessThan(statuses.findIndex((s: string) => s !== 'pending'));
      expect(all.approvals.map((a: { approval_id: string }) => a.approval_id)).toContain(waiting);
      const times = all.approvals.filter((a: { status: string }) => a.status !== 'pending').map((a: { requested_at: string }) => a.requested_at);
      expect([...times].sort().reverse()).toEqual(times);

      const approved = (await admin('GET', '/admin/v1/approvals?status=approved')).body.data.approvals;
      expect(approved.length).toBeGreaterThan(0);
      expect(approved.every((a: { status: string }) => a.status === 'approved')).toBe(true);
      const resolutions = (await admin('GET', '/admin/v1/approvals?kind=resolution&status=all')).body.data.approvals;
      expect(resolutions.every((a: { kind: string }) => a.kind === 'resolution')).toBe(true);
      const page = (await admin('GET', '/admin/v1/approvals?limit=2&offset=1')).body.data;
      expect(page.approvals.map((a: { approval_id: string }) => a.approval_id)).toEqual(
        all.approvals.slice(1, 3).map((a: { approval_id: string }) => a.approval_id),
      );
      expect(page.total).toBe(all.total);
    });

    it('shows reconcilers the resolutions and adjustments, not the deposits; auditors read everything', async () => {
      const clerk = (await admin('GET', '/admin/v1/approvals?status=all&limit=200', undefined, as(rita))).body.data.approvals;
      expect(clerk.length).toBeGreaterThan(0);
      expect(clerk.some((a: { kind: string }) => a.kind === 'deposit')).toBe(false);
      const audit = (await admin('GET', '/admin/v1/approvals?kind=deposit', undefined, as(aldo))).body.data;
      expect(audit.total).toBeGreaterThan(0);
      const depositId = audit.approvals[0].approval_id as string;
      expect(await admin('GET', `/admin/v1/approvals/${depositId}`, undefined, as(rita))).toMatchObject({ status: 403, body: failure('FORBIDDEN') });
      expect((await admin('GET', `/admin/v1/approvals/${depositId}`, undefined, as(aldo))).body.data.approval_id).toBe(depositId);
    });

    it('refuses unknown and malformed parameters, and answers 404 for an unknown approval', async () => {
      expect((await admin('GET', '/admin/v1/approvals?status=open')).body).toEqual(failure('VALIDATION_FAILED', 'status'));
      expect((await admin('GET', '/admin/v1/approvals?kind=refund')).body).toEqual(failure('VALIDATION_FAILED', 'kind'));
      expect((await admin('GET', '/admin/v1/approvals?limit=0')).body).toEqual(failure('VALIDATION_FAILED', 'limit'));
      expect((await admin('GET', '/admin/v1/approvals?state=pending')).body).toEqual(failure('VALIDATION_FAILED', 'state'));
      expect((await admin('GET', '/admin/v1/approvals/apr_0000000000000000')).body).toEqual(failure('APPROVAL_NOT_FOUND'));
      expect((await approve('apr_0000000000000000', ada)).body).toEqual(failure('APPROVAL_NOT_FOUND'));
      const waiting = (await deposit('9.50', 'list-2')).body.data.approval_id as string;
      expect((await admin('POST', `/admin/v1/approvals/${waiting}/approve`, {}, as(ada))).body).toEqual(failure('MISSING_REQUIRED_FIELD', 'note'));
      expect((await admin('POST', `/admin/v1/approvals/${waiting}/approve`, { note: '' }, as(ada))).body).toEqual(failure('VALIDATION_FAILED', 'note'));
      expect((await admin('POST', `/admin/v1/approvals/${waiting}/reject`, { note: 'x'.repeat(1001) }, as(ada))).body).toEqual(
        failure('VALIDATION_FAILED', 'note'),
      );
      expect((await admin('GET', '/admin/v1/approvals', undefined, { token: null })).status).toBe(401);
    });
  });

  it("the inbox's rows are rebuilt from the approval streams (the CLI's rebuild-approvals), those held behind a running transaction too", async () => {
    const rows = async () => (await service.pool.query('select * from approvals order by approval_id')).rows.map(({ written_at: _writtenAt, ...row }) => row);
    // A transaction of the server's that took its id before the last approval was appended, still running
    // as the rebuild reads the log: the approval is committed but behind the log's read horizon.
    const holder = new Client(db.config);
    await holder.connect();
    try {
      await holder.query('begin');
      await holder.query('select pg_current_xact_id()');
      expect((await deposit('7.25', 'rebuild-held')).status).toBe(202);
      const before = await rows();
      expect(before.length).toBeGreaterThanOrEqual(10);
      await service.pool.query('delete from approvals');
      let stdout = '';
      const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => k !== 'DATABASE_URL' && !k.startsWith('PG')));
      const rebuilt = runCli(['rebuild-approvals'], { ...env, ...db.env }, { stdout: (text) => void (stdout += text), stderr: () => undefined });
      await new Promise((r) => setTimeout(r, 300));
      await holder.query('commit');
      expect({ code: await rebuilt, stdout }).toEqual({ code: 0, stdout: `${JSON.stringify({ approvals: before.length })}\n` });
      expect(await rows()).toEqual(before);
    } finally {
      await holder.end();
    }
  });

  it('after a restart, the start-up sweep carries out what was approved before the crash', async () => {
    const approvalId = (await deposit('8.50', 'restart-1')).body.data.approval_id as string;
    // The process dies right after appending ApprovalGranted: the approval's row still says pending, the money has not moved.
    const granted = encodeEvent({
      type: 'ApprovalGranted',
      data: { approvedBy: ada.staff_id, note: 'granted before the crash', at: new Date().toISOString() },
    });
    await service.store.append(approvalStream(approvalId), [granted], 0n);
    await service.stop();
    expect((await db.pool.query(`select status from approvals where approval_id = $1`, [approvalId])).rows).toEqual([{ status: 'pending' }]);
    service = await startService(db, { ...SETTINGS, UPSTREAM_URL: simulator.url });
    admin = adminClient(service.url);
    const deposits = await until(
      () => depositsOf('restart-1'),
      (found) => found.length > 0,
    );
    expect(deposits).toEqual([expect.objectContaining({ amount: '850', approvedBy: ada.staff_id })]);
    // The sweep marks the approval carried out after the deposit is in: the deposit can be seen first.
    const carriedOut = await until(
      () => admin('GET', `/admin/v1/approvals/${approvalId}`),
      (reply) => reply.body.data?.carried_out_at !== null,
    );
    expect(carriedOut.body.data).toMatchObject({ status: 'approved', carried_out_at: expect.any(String) });
  });
});

describe('the four-eyes rule with APPROVAL_THRESHOLD=0: every movement waits', () => {
  let db: TestDatabase;
  let service: RunningService;
  let admin: ReturnType<typeof adminClient>;
  beforeAll(async () => {
    db = await createTestDatabase();
    service = await startService(db, { APPROVAL_THRESHOLD: '0' });
    admin = adminClient(service.url);
  });
  afterAll(async () => {
    await service.stop();
    await db.drop();
  });

  it('even a deposit of 0.01', async () => {
    const merchant = await admin.createMerchant();
    const reply = await admin('POST', `/admin/v1/merchants/${merchant.merchant_id}/deposits`, { amount: '0.01', reference: 'cent' });
    expect(reply.status).toBe(202);
    expect(reply.body.data).toMatchObject({ kind: 'deposit', status: 'pending', amounts: [{ currency: 'USD', amount: '0.01' }], note: '' });
    const other = await admin.createStaff('admin', 'Second');
    const approved = await admin('POST', `/admin/v1/approvals/${reply.body.data.approval_id}/approve`, { note: 'ok' }, { token: other.token });
    expect(approved.body.data.result.detail).toMatchObject({ balance: '0.01', available_balance: '0.01' });
  });
});
