import { OrderStage } from '../../../ledger/order/order.decider';
import { Minor } from '../../../shared/money';
import { ReportLine } from './report-csv';

/**
 * Where a line of the upstream's report, or an order of ours it should list,
 * lands when the two are compared:
 *   matched     both agree (succeeded and delivered, or failed and failed, same amount and currency)
 *   resolvable  ours waits with an unknown result and theirs is definitive: a proposal, the line its evidence
 *   exceptions  they disagree on a final order, the amount or the currency: a person corrects it (a wallet adjustment)
 *   missing     a line with no order of ours, or an order of ours sent in the window that the report lacks
 *   in_flight   ours is still in fulfilment: nothing to compare yet
 */
export type ReportCategory = 'matched' | 'resolvable' | 'exceptions' | 'missing' | 'in_flight';
export const REPORT_CATEGORIES: readonly ReportCategory[] = ['matched', 'resolvable', 'exceptions', 'missing', 'in_flight'];

/** Why, within the category. */
export type MatchReason =
  | 'agree'
  | 'result_unknown'
  | 'deducted_they_failed'
  | 'released_they_delivered'
  | 'amount_differs'
  | 'currency_differs'
  | 'never_sent'
  | 'not_ours'
  | 'absent_from_report'
  | 'in_fulfilment';

/** Our side: an order as the orders read model has it. */
export interface OurOrder {
  orderNo: string;
  merchantId: string;
  stage: OrderStage;
  amount: Minor;
  currency: string;
  upstreamAttempts: number;
  failCode: string | null;
  /** The staff member who resolved it; null when the upstream's own answer settled it (or nothing did yet). */
  resolvedBy: string | null;
  acceptedAt: Date | null;
  completedAt: Date | null;
}

export interface MatchedItem {
  category: ReportCategory;
  reason: MatchReason;
  /** Null for an order of ours the report lacks. */
  line: ReportLine | null;
  /** Null for a line with no order of ours. */
  ours: OurOrder | null;
  /** What a bulk apply would resolve a resolvable order as. */
  proposal: 'success' | 'failed' | null;
}

/** [from, to): the window the report covers. */
export interface ReportWindow {
  from: Date;
  to: Date;
}

const SUCCEEDED: readonly OrderStage[] = ['succeeding', 'succeeded'];
const FAILED: readonly OrderStage[] = ['failing', 'failed'];
const IN_FULFILMENT: readonly OrderStage[] = ['accepted', 'sent'];
const NOT_SENT: readonly OrderStage[] = ['none', 'placed', 'refused'];

const within = (at: Date | null, window: ReportWindow) => at !== null && at >= window.from && at < window.to;

/**
 * The report's window when none was given: from its first completion to just
 * after its last. Undefined for a report without lines.
 */
export function windowOfLines(lines: readonly ReportLine[]): ReportWindow | undefined {
  if (lines.length === 0) return undefined;
  const times = lines.map((l) => l.completedAt.getTime());
  return { from: new Date(Math.min(...times)), to: new Date(Math.max(...times) + 1) };
}

/**
 * Whether the report should list an order of ours it lacks: one the upstream
 * was sent (and not only tried: an order failed UPSTREAM_UNAVAILABLE never
 * reached it) in the window. When the upstream's own answer settled the
 * order, its completion is the upstream's, and must be in the window; for
 * the others (unknown, or resolved by staff) the send is taken to be the
 * acceptance, which precedes it by milliseconds.
 */
function expectedInReport(order: OurOrder, window: ReportWindow): boolean {
  if (order.upstreamAttempts === 0 || order.failCode === 'UPSTREAM_UNAVAILABLE' || NOT_SENT.includes(order.stage)) return false;
  const settledByUpstream = order.resolvedBy === null && [...SUCCEEDED, ...FAILED].includes(order.stage);
  return settledByUpstream ? within(order.completedAt, window) : within(order.acceptedAt, window);
}

/** One line against the order it names (if any). */
function matchLine(line: ReportLine, ours: OurOrder | undefined): MatchedItem {
  const item = (category: ReportCategory, reason: MatchReason, proposal: MatchedItem['proposal'] = null): MatchedItem => ({
    category,
    reason,
    line,
    ours: ours ?? null,
    proposal,
  });
  if (!ours) return item('missing', 'not_ours');
  if (NOT_SENT.includes(ours.stage)) return item('exceptions', 'never_sent');
  if (ours.currency !== line.currency) return item('exceptions', 'currency_differs');
  if (ours.amount !== line.amount) return item('exceptions', 'amount_differs');
  if (IN_FULFILMENT.includes(ours.stage)) return item('in_flight', 'in_fulfilment');
  if (ours.stage === 'unknown') return item('resolvable', 'result_unknown', line.status === 'delivered' ? 'success' : 'failed');
  if (SUCCEEDED.includes(ours.stage)) return line.status === 'delivered' ? item('matched', 'agree') : item('exceptions', 'deducted_they_failed');
  return line.status === 'failed' ? item('matched', 'agree') : item('exceptions', 'released_they_delivered');
}

/**
 * Compares an upstream's report with our orders: every line of the report,
 * in its order, then every order of ours the report should list and lacks.
 * `ours` holds the orders the lines name and those sent in the window (more
 * do no harm); without a window, no order is expected beyond the lines.
 * Pure: the same report and orders always give the same items.
 */
export function matchReport(lines: readonly ReportLine[], ours: readonly OurOrder[], window: ReportWindow | undefined): MatchedItem[] {
  const byNo = new Map(ours.map((o) => [o.orderNo, o]));
  const listed = new Set(lines.map((l) => l.orderNo));
  const items = lines.map((line) => matchLine(line, byNo.get(line.orderNo)));
  if (!window) return items;
  const absent = ours
    .filter((o) => !listed.has(o.orderNo) && expectedInReport(o, window))
    .sort((a, b) => (a.acceptedAt?.getTime() ?? 0) - (b.acceptedAt?.getTime() ?? 0) || (a.orderNo < b.orderNo ? -1 : 1));
  for (const order of absent) {
    const inFlight = IN_FULFILMENT.includes(order.stage);
    items.push({
      category: inFlight ? 'in_flight' : 'missing',
      reason: inFlight ? 'in_fulfilment' : 'absent_from_report',
      line: null,
      ours: order,
      proposal: null,
    });
  }
  return items;
}
