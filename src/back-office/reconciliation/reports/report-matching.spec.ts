import { OrderStage } from '../../../ledger/order/order.decider';
import { ReportLine } from './report-csv';
import { MatchReason, matchReport, OurOrder, ReportCategory, windowOfLines } from './report-matching';

const T0 = Date.parse('2026-11-22T10:00:00Z');
const at = (seconds: number) => new Date(T0 + seconds * 1000);
const WINDOW = { from: at(0), to: at(3600) };

const line = (orderNo: string, status: 'delivered' | 'failed', extra: Partial<ReportLine> = {}): ReportLine => ({
  line: 2,
  orderNo,
  status,
  amount: 120n,
  currency: 'USD',
  reference: status === 'delivered' ? `REF-${orderNo}` : '',
  completedAt: at(60),
  ...extra,
});

const ours = (orderNo: string, stage: OrderStage, extra: Partial<OurOrder> = {}): OurOrder => ({
  orderNo,
  merchantId: 'mch_1',
  stage,
  amount: 120n,
  currency: 'USD',
  upstreamAttempts: 1,
  failCode: null,
  resolvedBy: null,
  acceptedAt: at(59),
  completedAt: ['succeeded', 'failed'].includes(stage) ? at(60) : null,
  ...extra,
});

type Case = [string, ReportLine, OurOrder | undefined, ReportCategory, MatchReason, 'success' | 'failed' | null];

describe('matchReport: a line of the upstream report against our order', () => {
  it.each<Case>([
    ['succeeded and delivered agree', line('A', 'delivered'), ours('A', 'succeeded'), 'matched', 'agree', null],
    ['succeeding (not settled yet) and delivered agree', line('A', 'delivered'), ours('A', 'succeeding'), 'matched', 'agree', null],
    ['failed and failed agree', line('A', 'failed'), ours('A', 'failed', { failCode: 'INVALID_ACCOUNT' }), 'matched', 'agree', null],
    ['resolved failed by staff, and failed, agree', line('A', 'failed'), ours('A', 'failed', { resolvedBy: 'stf_1' }), 'matched', 'agree', null],
    ['unknown, delivered: resolvable as success', line('A', 'delivered'), ours('A', 'unknown'), 'resolvable', 'result_unknown', 'success'],
    ['unknown, failed: resolvable as failed', line('A', 'failed'), ours('A', 'unknown'), 'resolvable', 'result_unknown', 'failed'],
    ['we deducted, they say failed', line('A', 'failed'), ours('A', 'succeeded'), 'exceptions', 'deducted_they_failed', null],
    [
      'we released, they say delivered',
      line('A', 'delivered'),
      ours('A', 'failed', { failCode: 'UPSTREAM_REJECTED' }),
      'exceptions',
      'released_they_delivered',
      null,
    ],
    [
      'we released as never reached, they say delivered',
      line('A', 'delivered'),
      ours('A', 'failed', { failCode: 'UPSTREAM_UNAVAILABLE' }),
      'exceptions',
      'released_they_delivered',
      null,
    ],
    ['the amount differs on a matching outcome', line('A', 'delivered', { amount: 125n }), ours('A', 'succeeded'), 'exceptions', 'amount_differs', null],
    [
      'the amount differs on an unknown order: no proposal',
      line('A', 'delivered', { amount: 100n }),
      ours('A', 'unknown'),
      'exceptions',
      'amount_differs',
      null,
    ],
    ['the currency differs', line('A', 'delivered', { currency: 'EUR' }), ours('A', 'succeeded'), 'exceptions', 'currency_differs', null],
    ['an order we never sent (refused submit)', line('A', 'delivered'), ours('A', 'refused', { upstreamAttempts: 0 }), 'exceptions', 'never_sent', null],
    ['no such order of ours', line('X', 'delivered'), undefined, 'missing', 'not_ours', null],
    ['ours still in fulfilment', line('A', 'delivered'), ours('A', 'sent'), 'in_flight', 'in_fulfilment', null],
  ])('%s', (_name, given, order, category, reason, proposal) => {
    const [item] = matchReport([given], order ? [order] : [], WINDOW);
    expect(item).toEqual({ category, reason, line: given, ours: order ?? null, proposal });
  });
});

describe('matchReport: our orders the report lacks', () => {
  type Absent = [string, OurOrder, ReportCategory | 'not listed'];
  it.each<Absent>([
    ['an unknown order sent in the window', ours('B', 'unknown'), 'missing'],
    ['one resolved by staff, sent in the window', ours('B', 'succeeded', { resolvedBy: 'stf_1', completedAt: at(7200) }), 'missing'],
    ['one the upstream settled in the window', ours('B', 'succeeded'), 'missing'],
    ['one the upstream settled after the window (sent in it)', ours('B', 'succeeded', { completedAt: at(3600) }), 'not listed'],
    ['one the upstream settled in the window, sent before it', ours('B', 'failed', { acceptedAt: at(-5), completedAt: at(1) }), 'missing'],
    ['an unknown order sent before the window', ours('B', 'unknown', { acceptedAt: at(-1) }), 'not listed'],
    ['an unknown order sent at the window end (excluded)', ours('B', 'unknown', { acceptedAt: at(3600) }), 'not listed'],
    ['one never sent (no route)', ours('B', 'failed', { upstreamAttempts: 0, failCode: 'SKU_UNAVAILABLE' }), 'not listed'],
    ['one that never reached the upstream', ours('B', 'failed', { upstreamAttempts: 3, failCode: 'UPSTREAM_UNAVAILABLE' }), 'not listed'],
    ['one still in fulfilment', ours('B', 'sent'), 'in_flight'],
  ])('%s', (_name, order, expected) => {
    const items = matchReport([line('A', 'delivered')], [ours('A', 'succeeded'), order], WINDOW);
    const absent = items.filter((i) => i.line === null);
    if (expected === 'not listed') expect(absent).toEqual([]);
    else
      expect(absent).toEqual([
        { category: expected, reason: expected === 'missing' ? 'absent_from_report' : 'in_fulfilment', line: null, ours: order, proposal: null },
      ]);
  });

  it('lists nothing beyond the lines without a window, and keeps the lines in order, then the absent by acceptance', () => {
    const lines = [line('A', 'delivered', { line: 2 }), line('C', 'failed', { line: 3 })];
    const orders = [ours('A', 'succeeded'), ours('C', 'unknown'), ours('E', 'unknown', { acceptedAt: at(30) }), ours('D', 'unknown', { acceptedAt: at(10) })];
    expect(matchReport(lines, orders, undefined).map((i) => i.ours?.orderNo)).toEqual(['A', 'C']);
    expect(matchReport(lines, orders, WINDOW).map((i) => [i.line?.line ?? null, i.ours?.orderNo, i.category])).toEqual([
      [2, 'A', 'matched'],
      [3, 'C', 'resolvable'],
      [null, 'D', 'missing'],
      [null, 'E', 'missing'],
    ]);
  });

  it('is the same for the same input, whatever the order of ours', () => {
    const lines = [line('A', 'delivered'), line('B', 'failed')];
    const orders = [ours('A', 'unknown'), ours('B', 'unknown'), ours('C', 'unknown')];
    expect(matchReport(lines, [...orders].reverse(), WINDOW)).toEqual(matchReport(lines, orders, WINDOW));
  });
});

describe('windowOfLines', () => {
  it('runs from the first completion to just after the last', () => {
    expect(windowOfLines([line('A', 'delivered', { completedAt: at(30) }), line('B', 'failed', { completedAt: at(10) })])).toEqual({
      from: at(10),
      to: new Date(at(30).getTime() + 1),
    });
  });

  it('is undefined without lines', () => {
    expect(windowOfLines([])).toBeUndefined();
  });
});
