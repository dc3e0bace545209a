import { createHash } from 'node:crypto';
import { startUpstreamSimulator, UpstreamSimulator } from '../../src/fulfilment/simulator/upstream-simulator';
import { MAX_REPORT_BYTES } from '../../src/fulfilment/upstream/upstream.port';
import { isoTimestamp } from '../../src/shared/clock';
import { checkEventInvariants } from '../support/invariants';
import { awaitFinal, FULFILMENT_ENV_SOME_UNKNOWN } from '../support/fulfilment';
import { provisionMerchant, signedFetch, TestMerchant } from '../support/merchant-fixture';
import { awaitStage, orderInFlight, submitOrder, unknownOrders } from '../support/reconciliation-orders';
import { RunningService, startService } from '../support/service';
import { createTestDatabase, TestDatabase } from '../support/test-database';
import { adminClient, failure } from './admin-client';

const HEADER = 'order_no,status,amount,currency,reference,completed_at';

interface Line {
  orderNo: string;
  status: 'delivered' | 'failed';
  amount?: string;
  currency?: string;
  reference?: string;
  at?: Date;
}

/** A report as an upstream would write it. */
const reportOf = (lines: Line[]) =>
  `${[HEADER, ...lines.map((l) => [l.orderNo, l.status, l.amount ?? '1.20', l.currency ?? 'USD', l.reference ?? '', isoTimestamp(l.at ?? new Date())].join(','))].join('\r\n')}\r\n`;

/**
 * An upstream's transaction report, uploaded by hand or fetched from the
 * upstream: kept as received, parsed with line-by-line errors, matched
 * against our orders in five categories, exported for the finance team with
 * every cell spreadsheet-safe, and applied in one call that resolves each
 * resolvable order exactly once.
 */
describe('reconciliation: upstream transaction reports', () => {
  let db: TestDatabase;
  let simulator: UpstreamSimulator;
  let service: RunningService;
  let merchant: TestMerchant;
  let admin: ReturnType<typeof adminClient>;
  let reconciler: { staff_id: string; token: string };
  let auditor: { staff_id: string; token: string };
  const started = new Date(Date.now() - 1_000);

  beforeAll(async () => {
    db = await createTestDatabase();
    simulator = await startUpstreamSimulator({ deliveryDelayMs: 10 });
    service = await startService(db, { ...FULFILMENT_ENV_SOME_UNKNOWN, UPSTREAM_URL: simulator.url });
    merchant = await provisionMerchant(service);
    admin = adminClient(service.url);
    reconciler = await admin.createStaff('reconciler', 'Rita');
    auditor = await admin.createStaff('auditor', 'Aldo');
  });
  afterAll(async () => {
    expect((await checkEventInvariants(service.store)).violations).toEqual([]);
    await service.stop();
    await simulator.stop();
    await db.drop();
  });

  const as = (staff: { token: string }) => ({ token: staff.token });
  const upload = (csv: string | Buffer, query = '', token = reconciler.token) =>
    admin('POST', `/admin/v1/reconciliation/reports${query}`, undefined, { raw: csv, headers: { 'content-type': 'text/csv' }, token });
  const balance = async (m = merchant) => (await signedFetch(service, m, { path: '/api/v2/balance' })).body.data;
  const itemOf = (report: { items: { order_no: string }[] }, orderNo: string) => report.items.find((i) => i.order_no === orderNo) as any;
  const windowQuery = () => `?from=${encodeURIComponent(isoTimestamp(started))}&to=${encodeURIComponent(isoTimestamp(new Date(Date.now() + 60_000)))}`;

  it('matches every line, and every order of ours sent in the window, into its category', async () => {
    const delivered = await submitOrder(service, merchant, '11110123');
    const refused = await submitOrder(service, merchant, '11110000');
    const disputed = await submitOrder(service, merchant, '11112123');
    const released = await submitOrder(service, merchant, '11113000');
    const cheaper = await submitOrder(service, merchant, '11114123');
    await Promise.all([delivered, refused, disputed, released, cheaper].map((n) => awaitFinal(service, merchant, n)));
    const [unknownDelivered, unknownFailed, absent] = await unknownOrders(service, merchant, ['22220999', '22221999', '22222999']);
    const inFlight = await orderInFlight(service, merchant);
    try {
      const csv = reportOf([
        { orderNo: delivered, status: 'delivered', reference: `SIM-${delivered}` },
        { orderNo: refused, status: 'failed' },
        { orderNo: unknownDelivered, status: 'delivered', reference: 'UP-77' },
        { orderNo: unknownFailed, status: 'failed' },
        { orderNo: disputed, status: 'failed' },
        { orderNo: released, status: 'delivered' },
        { orderNo: cheaper, status: 'delivered', amount: '1.00' },
        { orderNo: 'TNOTOURS00000000000000000001', status: 'delivered' },
        { orderNo: inFlight.orderNo, status: 'delivered' },
      ]);
      const reply = await upload(csv, windowQuery());
      expect(reply.status).toBe(201);
      expect(reply.body.code).toBe('OK');
      const report = reply.body.data;
      expect(report).toMatchObject({
        report_id: expect.stringMatching(/^rp_[0-9a-f]{16}$/),
        source: 'upload',
        file_name: null,
        size_bytes: Buffer.byteLength(csv),
        sha256: expect.stringMatching(/^[0-9a-f]{64}$/),
        received_by: reconciler.staff_id,
        received_by_name: 'Rita',
        received_at: expect.stringMatching(/\+00:00$/),
        window: { from: isoTimestamp(started), to: expect.any(String) },
        lines: 9,
        valid: true,
        error_count: 0,
        errors: [],
        proposals: { success: 1, failed: 1 },
        applied: { applied: 0, already_applied: 0, skipped: 0, refused: 0 },
      });
      const expected: [string, string, string, string | null][] = [
        [delivered, 'matched', 'agree', null],
        [refused, 'matched', 'agree', null],
        [unknownDelivered, 'resolvable', 'result_unknown', 'success'],
        [unknownFailed, 'resolvable', 'result_unknown', 'failed'],
        [disputed, 'exceptions', 'deducted_they_failed', null],
        [released, 'exceptions', 'released_they_delivered', null],
        [cheaper, 'exceptions', 'amount_differs', null],
        ['TNOTOURS00000000000000000001', 'missing', 'not_ours', null],
        [inFlight.orderNo, 'in_flight', 'in_fulfilment', null],
        [absent, 'missing', 'absent_from_report', null],
      ];
      for (const [orderNo, category, reason, proposal] of expected) {
        expect([orderNo, itemOf(report, orderNo)]).toEqual([orderNo, expect.objectContaining({ category, reason, proposal })]);
      }
      expect(report.counts).toEqual({ matched: 2, resolvable: 2, exceptions: 3, missing: 2, in_flight: 1 });
      expect(itemOf(report, unknownDelivered)).toEqual({
        item: 3,
        category: 'resolvable',
        reason: 'result_unknown',
        line: 4,
        order_no: unknownDelivered,
        merchant_id: merchant.merchantId,
        merchant_name: 'Test merchant',
        ours: { stage: 'unknown', status: 'processing', amount: '1.20', currency: 'USD', resolved_by: null, resolved_by_name: null },
        theirs: { status: 'delivered', amount: '1.20', currency: 'USD', reference: 'UP-77', completed_at: expect.stringMatching(/\+00:00$/) },
        proposal: 'success',
        applied: null,
      });
      expect(itemOf(report, 'TNOTOURS00000000000000000001')).toMatchObject({ ours: null, merchant_id: null, merchant_name: null, line: 9 });
      expect(itemOf(report, absent)).toMatchObject({ line: null, theirs: null, ours: { stage: 'unknown' } });

      // A category at a time, paged.
      const exceptions = await admin(
        'GET',
        `/admin/v1/reconciliation/reports/${report.report_id}?category=exceptions&limit=2&offset=1`,
        undefined,
        as(auditor),
      );
      expect(exceptions.status).toBe(200);
      expect(exceptions.body.data.page).toEqual({ category: 'exceptions', total: 3, limit: 2, offset: 1 });
      expect(exceptions.body.data.items.map((i: { order_no: string }) => i.order_no)).toEqual([released, cheaper]);
      expect((await admin('GET', `/admin/v1/reconciliation/reports/${report.report_id}?category=odd`)).body).toEqual(failure('VALIDATION_FAILED', 'category'));
      expect((await admin('GET', `/admin/v1/reconciliation/reports/${report.report_id}?colour=red`)).body).toEqual(failure('VALIDATION_FAILED', 'colour'));
      expect((await admin('GET', '/admin/v1/reconciliation/reports/rp_0000000000000000')).body).toEqual(failure('REPORT_NOT_FOUND'));

      // Without a window, only the lines: the order the report lacks is not looked for.
      const lines = await upload(reportOf([{ orderNo: delivered, status: 'delivered' }]));
      expect(lines.status).toBe(201);
      expect(lines.body.data.counts).toEqual({ matched: 1, resolvable: 0, exceptions: 0, missing: 0, in_flight: 0 });
      expect(lines.body.data.window).toEqual({ from: expect.any(String), to: expect.any(String) });
    } finally {
      inFlight.resume();
    }
  });

  it('takes a file as multipart/form-data too; the same bytes twice give the same report back; reports are listed newest first', async () => {
    const [orderNo] = await unknownOrders(service, merchant, ['33330999']);
    const csv = reportOf([{ orderNo, status: 'delivered', reference: 'MP-1' }]);
    const form = new FormData();
    form.append('note', 'November, from the provider');
    form.append('report', new Blob([csv], { type: 'text/csv' }), 'provider-november.csv');
    const response = await fetch(`${service.url}/admin/v1/reconciliation/reports`, {
      method: 'POST',
      headers: { authorization: `Bearer ${reconciler.token}` },
      body: form,
    });
    const first = (await response.json()) as any;
    expect(response.status).toBe(201);
    expect(first.data).toMatchObject({ file_name: 'provider-november.csv', size_bytes: Buffer.byteLength(csv), counts: { resolvable: 1 } });

    const again = await upload(csv);
    expect(again.status).toBe(200);
    expect(again.body.code).toBe('DUPLICATE');
    expect(again.body.data.report_id).toBe(first.data.report_id);
    expect(again.body.data.file_name).toBe('provider-november.csv');
    const { rows } = await service.pool.query('select count(*)::int as n from upstream_reports where sha256 = $1', [first.data.sha256]);
    expect(rows[0].n).toBe(1);
    // Kept as received: the multipart file's own bytes, byte for byte, under their checksum.
    const original = await fetch(`${service.url}/admin/v1/reconciliation/reports/${first.data.report_id}/original`, {
      headers: { authorization: `Bearer ${auditor.token}` },
    });
    expect(original.status).toBe(200);
    expect(original.headers.get('content-type')).toBe('application/octet-stream');
    expect(original.headers.get('x-content-sha256')).toBe(first.data.sha256);
    const bytes = Buffer.from(await original.arrayBuffer());
    expect(bytes.equals(Buffer.from(csv))).toBe(true);
    expect(createHash('sha256').update(bytes).digest('hex')).toBe(first.data.sha256);
    const withQuery = await admin('GET', `/admin/v1/reconciliation/reports/${first.data.report_id}/original?limit=1`, undefined, as(auditor));
    expect([withQuery.status, withQuery.body.code, withQuery.body.field]).toEqual([422, 'VALIDATION_FAILED', 'limit']);
    // The same bytes for another window are another report: the window decides which orders it should list.
    expect((await upload(csv, windowQuery())).status).toBe(201);

    const list = await admin('GET', '/admin/v1/reconciliation/reports?limit=2', undefined, as(auditor));
    expect(list.status).toBe(200);
    expect(list.body.data.reports).toHaveLength(2);
    expect(list.body.data.reports[1]).toMatchObject({ report_id: first.data.report_id, received_by_name: 'Rita', counts: { resolvable: 1 } });
    expect(list.body.data.reports[0]).not.toHaveProperty('items');
    const next = await admin('GET', `/admin/v1/reconciliation/reports?limit=2&cursor=${list.body.data.next_cursor}`, undefined, as(auditor));
    expect(next.body.data.reports.map((r: { report_id: string }) => r.report_id)).not.toContain(first.data.report_id);

    // Multipart that is not one file, and a type that is not CSV.
    const two = new FormData();
    two.append('a', new Blob(['x']), 'a.csv');
    two.append('b', new Blob(['y']), 'b.csv');
    const refused = await fetch(`${service.url}/admin/v1/reconciliation/reports`, {
      method: 'POST',
      headers: { authorization: `Bearer ${reconciler.token}` },
      body: two,
    });
    expect([refused.status, ((await refused.json()) as any).code]).toEqual([400, 'INVALID_MULTIPART']);
    const json = await admin('POST', '/admin/v1/reconciliation/reports', { order_no: 'x' }, as(reconciler));
    expect([json.status, json.body.code]).toEqual([415, 'UNSUPPORTED_MEDIA_TYPE']);
    expect((await upload(csv, '?from=2026-01-01T00:00:00Z')).body).toEqual(failure('VALIDATION_FAILED', 'to'));
    expect((await upload(csv, '?from=2026-01-02T00:00:00Z&to=2026-01-01T00:00:00Z')).body).toEqual(failure('VALIDATION_FAILED', 'to'));
  });

  it('keeps a malformed report with clear line-by-line errors, answers 422, and never applies it', async () => {
    const [orderNo] = await unknownOrders(service, merchant, ['44440999']);
    const before = await balance();
    const csv = [HEADER, `${orderNo},delivered,1.20,USD,R-1,${isoTimestamp(new Date())}`, `${orderNo},maybe,1.2,usd,,yesterday`, 'T2,failed,1.20,USD', ''].join(
      '\n',
    );
    const reply = await upload(csv);
    expect(reply.status).toBe(422);
    expect(reply.body).toEqual({
      success: false,
      code: 'REPORT_INVALID',
      message: expect.stringContaining('The report has 6 errors (the first: line 3, order_no: duplicate order_no'),
      report_id: expect.stringMatching(/^rp_/),
      error_count: 6,
      errors: [
        { line: 3, column: 'order_no', message: `duplicate order_no ${orderNo}: already on line 2` },
        { line: 3, column: 'status', message: 'status must be delivered or failed, not "maybe"' },
        { line: 3, column: 'amount', message: 'amount must be a number with exactly two decimals, such as 12.50, not "1.2"' },
        { line: 3, column: 'currency', message: 'currency must be three capital letters, such as USD, not "usd"' },
        { line: 3, column: 'completed_at', message: expect.stringContaining('not "yesterday"') },
        { line: 4, column: null, message: 'expected 6 fields as in the header, found 4' },
      ],
    });
    const reportId = reply.body.report_id;
    const kept = await admin('GET', `/admin/v1/reconciliation/reports/${reportId}`, undefined, as(reconciler));
    expect(kept.body.data).toMatchObject({ valid: false, error_count: 6, lines: 0, items: [], counts: { resolvable: 0 } });
    expect(kept.body.data.errors).toEqual(reply.body.errors);
    const { rows } = await service.pool.query('select content from upstream_reports where report_id = $1', [reportId]);
    expect(rows[0].content.toString()).toBe(csv);
    expect((await upload(csv)).body).toMatchObject({ code: 'REPORT_INVALID', report_id: reportId });

    const apply = await admin('POST', `/admin/v1/reconciliation/reports/${reportId}/apply`, { note: 'try anyway' }, as(reconciler));
    expect(apply.status).toBe(409);
    expect(apply.body).toEqual(failure('REPORT_INVALID'));
    expect(await balance()).toEqual(before);
    await awaitStage(service, [orderNo], 'unknown');
  });

  it('takes a report of up to 10 MiB, refuses a larger one with 413, and leaves the 64 KiB limit of JSON bodies as it was', async () => {
    const big = reportOf(Array.from({ length: 20_000 }, (_, i) => ({ orderNo: `TBIG${String(i).padStart(8, '0')}`, status: 'delivered' as const })));
    expect(big.length).toBeGreaterThan(1024 * 1024);
    const accepted = await upload(big);
    expect(accepted.status).toBe(201);
    expect(accepted.body.data).toMatchObject({ lines: 20_000, counts: { missing: 20_000 } });

    // Just under the limit: read whole (and refused for its content, not its size).
    const under = await upload(Buffer.alloc(MAX_REPORT_BYTES - 100, 'x'));
    expect([under.status, under.body.code]).toEqual([422, 'REPORT_INVALID']);
    const over = await upload(Buffer.alloc(MAX_REPORT_BYTES + 1, 'x'));
    expect(over.status).toBe(413);
    expect(over.body).toEqual({ success: false, code: 'PAYLOAD_TOO_LARGE', message: 'The body is larger than 10 MiB' });
    const json = await admin('POST', `/admin/v1/merchants/${merchant.merchantId}/deposits`, undefined, { raw: 'x'.repeat(70_000) });
    expect(json.status).toBe(413);
    expect(json.body.message).toBe('The body is larger than 64 KiB');
  });

  it('applies the resolvable orders once, to the cent: a repeat changes nothing, and an order resolved meanwhile is skipped and said by whom', async () => {
    const m = await provisionMerchant(service);
    const orders = await unknownOrders(service, m, ['5501999', '5502999', '5503999', '5504999', '5505999']);
    const [a, b, c, d, e] = orders;
    const csv = reportOf([
      { orderNo: a, status: 'delivered', reference: 'UP-A' },
      { orderNo: b, status: 'delivered' },
      { orderNo: c, status: 'failed' },
      { orderNo: d, status: 'delivered' },
      { orderNo: e, status: 'failed' },
    ]);
    const report = (await upload(csv)).body.data;
    expect(report.counts.resolvable).toBe(5);
    const before = await balance(m);
    expect(before).toMatchObject({ balance: '100.00', frozen_balance: '6.00' });

    // A colleague resolves one by hand after the report was matched.
    expect((await admin('POST', `/admin/v1/reconciliation/orders/${d}/resolve`, { outcome: 'failed', note: 'ticket 9' })).status).toBe(200);

    const applied = await admin('POST', `/admin/v1/reconciliation/reports/${report.report_id}/apply`, { note: 'provider report, November' }, as(reconciler));
    expect(applied.status).toBe(200);
    expect(applied.body.data).toMatchObject({
      source: 'report',
      report_id: report.report_id,
      job_id: null,
      note: 'provider report, November',
      applied_by: reconciler.staff_id,
      applied_by_name: 'Rita',
      approved_by: null,
      approved_by_name: null,
      counts: { applied: 4, already_applied: 0, skipped: 1, refused: 0 },
      amounts: [{ currency: 'USD', deducted: '2.40', released: '2.40' }],
    });
    const byNo = (reply: any) => Object.fromEntries(reply.body.data.orders.map((o: any) => [o.order_no, o]));
    expect(byNo(applied)[d]).toEqual({
      order_no: d,
      merchant_id: m.merchantId,
      merchant_name: 'Test merchant',
      amount: '1.20',
      currency: 'USD',
      outcome: 'success',
      result: 'skipped',
      code: 'RESOLVED_MEANWHILE',
      message: expect.stringContaining('Resolved as failed meanwhile'),
      resolved_by: 'admin',
      resolved_by_name: 'Administrator (ADMIN_TOKEN)',
    });
    expect(byNo(applied)[a]).toMatchObject({ outcome: 'success', result: 'applied', code: null });
    for (const orderNo of [a, b]) expect(await awaitFinal(service, m, orderNo)).toMatchObject({ status: 'success' });
    for (const orderNo of [c, e, d]) expect(await awaitFinal(service, m, orderNo)).toMatchObject({ status: 'failed', fail_code: 'RESOLVED_FAILED' });
    // Two deducted (2.40), three released (3.60): nothing frozen is left.
    expect(await balance(m)).toMatchObject({ balance: '97.60', frozen_balance: '0.00', available_balance: '97.60' });

    // Each resolution is the clerk's, with the note and the report line as evidence.
    const resolved = (await service.store.readStream(`order-${a}`)).find((ev) => ev.type === 'OrderResolved');
    expect(resolved?.data).toEqual({
      outcome: 'success',
      resolvedBy: reconciler.staff_id,
      note: 'provider report, November',
      evidence: { source: 'report', reportId: report.report_id, line: 2, status: 'delivered', reference: 'UP-A' },
      at: expect.any(String),
    });
    const withoutReference = (await service.store.readStream(`order-${c}`)).find((ev) => ev.type === 'OrderResolved');
    expect(withoutReference?.data.evidence).toEqual({ source: 'report', reportId: report.report_id, line: 4, status: 'failed' });

    // Again: nothing changes.
    const eventsBefore = (await service.store.readStream(`wallet-${m.merchantId}`)).length;
    const again = await admin('POST', `/admin/v1/reconciliation/reports/${report.report_id}/apply`, { note: 'once more' }, as(reconciler));
    expect(again.body.data.counts).toEqual({ applied: 0, already_applied: 4, skipped: 1, refused: 0 });
    expect(again.body.data.amounts).toEqual([]);
    expect(byNo(again)[a]).toMatchObject({ result: 'already_applied', resolved_by: reconciler.staff_id, resolved_by_name: 'Rita' });
    expect((await service.store.readStream(`wallet-${m.merchantId}`)).length).toBe(eventsBefore);
    expect(await balance(m)).toMatchObject({ balance: '97.60', frozen_balance: '0.00' });

    // The report shows what was applied; the first apply's record stands.
    const shown = (await admin('GET', `/admin/v1/reconciliation/reports/${report.report_id}`, undefined, as(auditor))).body.data;
    expect(shown.applied).toEqual({ applied: 4, already_applied: 0, skipped: 1, refused: 0 });
    expect(itemOf(shown, a).applied).toEqual({
      result: 'applied',
      outcome: 'success',
      code: null,
      message: null,
      resolved_by: null,
      resolved_by_name: null,
      applied_by: reconciler.staff_id,
      applied_by_name: 'Rita',
      approved_by: null,
      approved_by_name: null,
      applied_at: expect.stringMatching(/\+00:00$/),
    });
    const audit = await service.pool.query(
      `select staff_id, action, details from back_office_audit where target = $1 and action = 'reconciliation.bulk_applied' order by id`,
      [`report:${report.report_id}`],
    );
    expect(audit.rows.map((r) => [r.staff_id, r.details.note, r.details.counts.applied])).toEqual([
      [reconciler.staff_id, 'provider report, November', 4],
      [reconciler.staff_id, 'once more', 0],
    ]);
  });

  it('a manual resolution racing the apply: exactly one of them resolves the order', async () => {
    const m = await provisionMerchant(service);
    const orders = await unknownOrders(service, m, ['6601999', '6602999', '6603999', '6604999']);
    const report = (await upload(reportOf(orders.map((orderNo) => ({ orderNo, status: 'delivered' as const }))))).body.data;
    const [apply, manual] = await Promise.all([
      admin('POST', `/admin/v1/reconciliation/reports/${report.report_id}/apply`, { note: 'bulk' }, as(reconciler)),
      admin('POST', `/admin/v1/reconciliation/orders/${orders[3]}/resolve`, { outcome: 'failed', note: 'by hand' }),
    ]);
    const result = apply.body.data.orders.find((o: { order_no: string }) => o.order_no === orders[3]).result;
    if (manual.status === 200) expect(result).toBe('skipped');
    else expect([manual.status, result]).toEqual([409, 'applied']);
    const resolutions = (await service.store.readStream(`order-${orders[3]}`)).filter((ev) => ev.type === 'OrderResolved');
    expect(resolutions).toHaveLength(1);
    const deducted = manual.status === 200 ? '3.60' : '4.80';
    expect(apply.body.data.amounts).toEqual([{ currency: 'USD', deducted, released: '0.00' }]);
    await Promise.all(orders.map((n) => awaitFinal(service, m, n)));
    expect(await balance(m)).toMatchObject({ balance: (100 - Number(deducted)).toFixed(2), frozen_balance: '0.00' });
  });

  it('applies chosen orders only, and refuses per order what has no proposal', async () => {
    const m = await provisionMerchant(service);
    const [x, y] = await unknownOrders(service, m, ['7701999', '7702999']);
    const settled = await submitOrder(service, m, '7703123');
    await awaitFinal(service, m, settled);
    const report = (
      await upload(
        reportOf([
          { orderNo: x, status: 'delivered' },
          { orderNo: y, status: 'failed' },
          { orderNo: settled, status: 'delivered' },
        ]),
      )
    ).body.data;
    const reply = await admin(
      'POST',
      `/admin/v1/reconciliation/reports/${report.report_id}/apply`,
      {
        note: 'picked',
        orders: [{ order_no: x, outcome: 'success' }, { order_no: y, outcome: 'success' }, { order_no: settled }, { order_no: 'TNOWHERE' }],
      },
      as(reconciler),
    );
    expect(reply.status).toBe(200);
    expect(reply.body.data.counts).toEqual({ applied: 1, already_applied: 0, skipped: 0, refused: 3 });
    expect(reply.body.data.orders.map((o: any) => [o.order_no, o.result, o.code])).toEqual([
      [x, 'applied', null],
      [y, 'refused', 'OUTCOME_CONTRADICTS_EVIDENCE'],
      [settled, 'refused', 'NO_PROPOSAL'],
      ['TNOWHERE', 'refused', 'NOT_IN_REPORT'],
    ]);
    expect(reply.body.data.orders[2].message).toContain('agree');
    await awaitStage(service, [y], 'unknown');
    const bad = (orders: unknown) => admin('POST', `/admin/v1/reconciliation/reports/${report.report_id}/apply`, { note: 'x', orders }, as(reconciler));
    expect((await bad([])).body).toEqual(failure('VALIDATION_FAILED', 'orders'));
    expect((await bad([{ order_no: x }, { order_no: x }])).body).toEqual(failure('VALIDATION_FAILED', 'orders'));
    expect((await bad([{ order_no: x, outcome: 'maybe' }])).body).toEqual(failure('VALIDATION_FAILED', 'orders'));
    expect((await bad([{ order_no: x, colour: 'red' }])).body).toEqual(failure('VALIDATION_FAILED', 'orders'));
    expect((await admin('POST', `/admin/v1/reconciliation/reports/${report.report_id}/apply`, {}, as(reconciler))).body).toEqual(
      failure('MISSING_REQUIRED_FIELD', 'note'),
    );
    expect((await admin('POST', '/admin/v1/reconciliation/reports/rp_0000000000000000/apply', { note: 'x' }, as(reconciler))).body).toEqual(
      failure('REPORT_NOT_FOUND'),
    );
  });

  it('exports the items as CSV a spreadsheet opens safely', async () => {
    const evil = await admin.createMerchant({ name: '=HYPERLINK("http://evil.example","click")' });
    await admin('PUT', '/admin/v1/products/mlbb', { name: 'Mobile Legends' });
    const m = { merchantId: evil.merchant_id, apiKey: evil.api_key, appSecret: evil.app_secret };
    await service.pool.query(`insert into merchant_prices (merchant_id, sku_id, price, updated_by) values ($1, 'mlbb-86', 120, 'test')`, [m.merchantId]);
    await admin('POST', `/admin/v1/merchants/${m.merchantId}/deposits`, { amount: '10.00', reference: 'evil' });
    const [orderNo] = await unknownOrders(service, m, ['8801999']);
    const report = (
      await upload(
        reportOf([
          { orderNo, status: 'delivered', reference: '+SUM(A1:A9)' },
          { orderNo: 'TNOTOURS00000000000000000002', status: 'failed', reference: '@cmd' },
        ]),
      )
    ).body.data;

    const response = await fetch(`${service.url}/admin/v1/reconciliation/reports/${report.report_id}/export`, {
      headers: { authorization: `Bearer ${auditor.token}` },
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/csv; charset=utf-8');
    expect(response.headers.get('content-disposition')).toBe(`attachment; filename="report-${report.report_id}.csv"`);
    const text = await response.text();
    const [header, first, second] = text.split('\r\n');
    expect(header).toBe(
      'item,category,reason,line,order_no,merchant_id,merchant_name,our_stage,our_status,our_amount,our_currency,our_resolved_by,' +
        'their_status,their_amount,their_currency,their_reference,their_completed_at,proposal,applied_result,applied_outcome,applied_by,applied_at',
    );
    // The name starts with "=" and holds quotes and a comma: neutralised, then quoted.
    expect(first).toContain(`,"'=HYPERLINK(""http://evil.example"",""click"")",`);
    expect(first).toContain(",'+SUM(A1:A9),");
    expect(first.split(',').slice(0, 5)).toEqual(['1', 'resolvable', 'result_unknown', '2', orderNo]);
    expect(second).toContain(",'@cmd,");
    // No cell anywhere starts a formula.
    const cells = text
      .trim()
      .split('\r\n')
      .flatMap((line) => line.match(/("([^"]|"")*"|[^,]*)(,|$)/g) ?? [])
      .map((cell) => cell.replace(/,$/, '').replace(/^"/, ''));
    expect(cells.filter((cell) => /^[=+\-@\t\r]/.test(cell))).toEqual([]);

    const missing = await fetch(`${service.url}/admin/v1/reconciliation/reports/${report.report_id}/export?category=missing`, {
      headers: { authorization: `Bearer ${auditor.token}` },
    });
    expect(missing.headers.get('content-disposition')).toBe(`attachment; filename="report-${report.report_id}-missing.csv"`);
    const rows = (await missing.text()).trim().split('\r\n');
    expect(rows.slice(1).map((r) => r.split(',')[4])).toEqual(['TNOTOURS00000000000000000002']);
    expect((await admin('GET', `/admin/v1/reconciliation/reports/${report.report_id}/export?category=all`)).body).toEqual(
      failure('VALIDATION_FAILED', 'category'),
    );
    expect((await admin('GET', '/admin/v1/reconciliation/reports/rp_0000000000000000/export')).body).toEqual(failure('REPORT_NOT_FOUND'));
  });

  it('fetches the report from the upstream for a window', async () => {
    const from = new Date();
    const orderNo = await submitOrder(service, merchant, '99990123');
    await awaitFinal(service, merchant, orderNo);
    const to = new Date(Date.now() + 1_000);
    await new Promise((r) => setTimeout(r, 1_100));
    const reply = await admin('POST', '/admin/v1/reconciliation/reports/fetch', { from: isoTimestamp(from), to: isoTimestamp(to) }, as(reconciler));
    expect(reply.status).toBe(201);
    expect(reply.body.data).toMatchObject({
      source: 'upstream',
      file_name: expect.stringMatching(/^transactions-.*\.csv$/),
      window: { from: isoTimestamp(from), to: isoTimestamp(to) },
    });
    expect(itemOf(reply.body.data, orderNo)).toMatchObject({ category: 'matched', theirs: { status: 'delivered', reference: `SIM-${orderNo}` } });
    // The upstream's answer again, for the same window: the same report.
    const again = await admin('POST', '/admin/v1/reconciliation/reports/fetch', { from: isoTimestamp(from), to: isoTimestamp(to) }, as(reconciler));
    expect([again.status, again.body.code, again.body.data.report_id]).toEqual([200, 'DUPLICATE', reply.body.data.report_id]);
    expect((await admin('POST', '/admin/v1/reconciliation/reports/fetch', { from: isoTimestamp(to), to: isoTimestamp(from) })).body).toEqual(
      failure('VALIDATION_FAILED', 'to'),
    );
    expect((await admin('POST', '/admin/v1/reconciliation/reports/fetch', { from: 'yesterday', to: isoTimestamp(to) })).body).toEqual(
      failure('VALIDATION_FAILED', 'from'),
    );
    expect((await admin('POST', '/admin/v1/reconciliation/reports/fetch', { from: isoTimestamp(from) })).body).toEqual(failure('MISSING_REQUIRED_FIELD', 'to'));
  });

  it('lets auditors read reports and exports, but neither upload, fetch nor apply them', async () => {
    expect((await admin('GET', '/admin/v1/reconciliation/reports', undefined, as(auditor))).status).toBe(200);
    expect((await upload(reportOf([]), '', auditor.token)).status).toBe(403);
    expect(
      (await admin('POST', '/admin/v1/reconciliation/reports/fetch', { from: isoTimestamp(started), to: isoTimestamp(new Date()) }, as(auditor))).status,
    ).toBe(403);
    expect((await admin('POST', '/admin/v1/reconciliation/reports/rp_0000000000000000/apply', { note: 'x' }, as(auditor))).status).toBe(403);
    expect((await upload(reportOf([]), '', 'not-a-token')).status).toBe(401);
  });
});
