import { Inject, Injectable } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { ApiError } from '../../../infrastructure/http/api-error';
import { ResolveOrder } from '../../../ledger/commands/resolve-order/resolve-order.command';
import { decodeEvent } from '../../../ledger/event-codec';
import { OrderEvent, orderDecider, OrderResolution, OrderState, ResolutionEvidence } from '../../../ledger/order/order.decider';
import { EVENT_STORE, EventStore } from '../../../ledger/ports/event-store.port';
import { orderStream } from '../../../ledger/streams';
import { CommandRefusedError } from '../../../shared/command-refused';
import { fold } from '../../../shared/decider';
import { formatAmount, Minor, parseFormattedAmount } from '../../../shared/money';
import { DisplayNames } from '../../display-names/display-names';
import { AuditTrail } from '../../staff-audit-trail/audit-trail';
import { RequeryItemRow, RequeryJobs } from '../requery/requery-jobs';
import { isDefinitive } from '../requery/requery-proposal';
import { ReportItemRow, UpstreamReports } from '../reports/upstream-reports';
import { AppliedDetail, ApplyResult, APPLY_RESULTS, BulkApplyView } from './bulk-apply.view';

export type Outcome = 'success' | 'failed';

/** An order a clerk picked, with the outcome chosen where the evidence leaves it to a person. */
export interface ChosenOrder {
  order_no: string;
  outcome?: Outcome;
}

/**
 * What to apply: the proposals of an upstream report or of a re-query job,
 * all the definitive ones or the chosen orders. Plain JSON, so that an
 * approval request can carry it until a second person approves.
 */
export type BulkSelection = { source: 'report'; reportId: string; orders?: ChosenOrder[] } | { source: 'requery'; jobId: string; orders?: ChosenOrder[] };

interface Known {
  orderNo: string;
  merchantId: string | null;
  amount: Minor | null;
  currency: string | null;
}

/** One order of a plan: resolved as the evidence says, or refused before anything is tried. */
export type PlannedOrder =
  | (Known & { kind: 'resolve'; outcome: Outcome; evidence: ResolutionEvidence })
  | (Known & { kind: 'refuse'; outcome: Outcome | null; code: string; message: string });

export interface BulkPlan {
  selection: BulkSelection;
  orders: PlannedOrder[];
  /**
   * What the resolutions would move, per currency: deductions and releases
   * together. The four-eyes rule compares each with APPROVAL_THRESHOLD.
   */
  amounts: { currency: string; amount: Minor }[];
}

interface Done {
  planned: PlannedOrder;
  result: ApplyResult;
  detail: AppliedDetail;
  /** The order's amount and currency as the ledger has them, when it was resolved now. */
  moved?: { outcome: Outcome; amount: Minor; currency: string };
}

/** Orders resolved at once: each is a few appends, and the event store takes concurrent streams well. */
const CONCURRENCY = 8;

/** Why an item of a report has nothing to apply, by its category. */
const NO_REPORT_PROPOSAL: Record<string, string> = {
  matched: 'the report and the order agree: nothing to resolve',
  exceptions: 'the report contradicts the order, or the amount or currency differs: a person corrects it (a wallet adjustment), not a resolution',
  missing: 'the report line names no order of ours, or the report lacks the order: nothing to resolve from it',
  in_flight: 'the order is still in fulfilment: its own upstream answer will settle it',
};

/**
 * Applies, in one call, the proposals of an upstream report or a re-query
 * job: each becomes the same ResolveOrder a clerk makes by hand, with the
 * note, the evidence (the report's line, or the upstream's answer) and who
 * applied it (and approved it, under the four-eyes rule). Each order is
 * decided against its current state: one resolved meanwhile is skipped and
 * said by whom, and the same apply twice changes nothing (`already_applied`).
 *
 * `plan` works out what an apply would do and move, without doing it: what
 * a four-eyes gate compares with APPROVAL_THRESHOLD (`amounts`). `apply`
 * plans afresh and executes, so a request approved later is carried out
 * against the orders as they stand then: its executor calls
 * `apply(selection, note, requestedBy, approvedBy)` with the selection and
 * note the request kept.
 */
@Injectable()
export class BulkResolutions {
  constructor(
    private readonly commands: CommandBus,
    @Inject(EVENT_STORE) private readonly store: EventStore,
    private readonly reports: UpstreamReports,
    private readonly jobs: RequeryJobs,
    private readonly names: DisplayNames,
    private readonly audit: AuditTrail,
  ) {}

  async apply(selection: BulkSelection, note: string, staffId: string, approvedBy?: string): Promise<BulkApplyView> {
    return this.execute(await this.plan(selection), note, staffId, approvedBy);
  }

  async plan(selection: BulkSelection): Promise<BulkPlan> {
    const orders =
      selection.source === 'report' ? await this.planReport(selection.reportId, selection.orders) : await this.planJob(selection.jobId, selection.orders);
    const sums = new Map<string, Minor>();
    for (const o of orders) if (o.kind === 'resolve' && o.currency !== null && o.amount !== null) sums.set(o.currency, (sums.get(o.currency) ?? 0n) + o.amount);
    return { selection, orders, amounts: [...sums].map(([currency, amount]) => ({ currency, amount })) };
  }

  async execute(plan: BulkPlan, note: string, staffId: string, approvedBy?: string): Promise<BulkApplyView> {
    const done = await withConcurrency(plan.orders, CONCURRENCY, (planned) =>
      planned.kind === 'refuse'
        ? Promise.resolve<Done>({
            planned,
            result: 'refused',
            detail: { outcome: planned.outcome, code: planned.code, message: planned.message, resolved_by: null },
          })
        : this.resolve(planned, note, staffId, approvedBy),
    );
    const { selection } = plan;
    const recorded = done.map((d) => ({ orderNo: d.planned.orderNo, result: d.result, detail: { ...d.detail, approved_by: approvedBy ?? null } }));
    if (selection.source === 'report') await this.reports.recordApplied(selection.reportId, recorded, staffId);
    else await this.jobs.recordApplied(selection.jobId, recorded, staffId);

    const counts = Object.fromEntries(APPLY_RESULTS.map((r) => [r, done.filter((d) => d.result === r).length])) as Record<ApplyResult, number>;
    const amounts = movedAmounts(done);
    const target = selection.source === 'report' ? `report:${selection.reportId}` : `requery:${selection.jobId}`;
    await this.audit.record({
      staffId,
      action: 'reconciliation.bulk_applied',
      target,
      details: { note, approved_by: approvedBy ?? null, orders: done.length, chosen: selection.orders !== undefined, counts, amounts },
    });
    const names = await this.names.of({
      merchants: done.flatMap((d) => (d.planned.merchantId ? [d.planned.merchantId] : [])),
      staff: [staffId, approvedBy ?? null, ...done.map((d) => d.detail.resolved_by)],
    });
    return {
      source: selection.source,
      report_id: selection.source === 'report' ? selection.reportId : null,
      job_id: selection.source === 'requery' ? selection.jobId : null,
      note,
      applied_by: staffId,
      applied_by_name: names.staff(staffId),
      approved_by: approvedBy ?? null,
      approved_by_name: names.staff(approvedBy ?? null),
      counts,
      amounts,
      orders: done.map(({ planned, result, detail }) => ({
        order_no: planned.orderNo,
        merchant_id: planned.merchantId,
        merchant_name: planned.merchantId ? names.merchant(planned.merchantId) : null,
        amount: planned.amount === null ? null : formatAmount(planned.amount),
        currency: planned.currency,
        outcome: detail.outcome,
        result,
        code: detail.code,
        message: detail.message,
        resolved_by: detail.resolved_by,
        resolved_by_name: names.staff(detail.resolved_by),
      })),
    };
  }

  private async planReport(reportId: string, chosen: ChosenOrder[] | undefined): Promise<PlannedOrder[]> {
    const report = await this.reports.header(reportId);
    if (!report) throw new ApiError(404, 'REPORT_NOT_FOUND', `No report ${reportId}`);
    if (!report.valid) throw new ApiError(409, 'REPORT_INVALID', `Report ${reportId} has ${report.error_count} errors: it can never be applied`);
    const items = await this.reports.itemsForApply(
      reportId,
      chosen?.map((c) => c.order_no),
    );
    const evidence = (item: ReportItemRow): ResolutionEvidence | undefined =>
      item.line === null || item.theirs === null
        ? undefined
        : {
            source: 'report',
            reportId,
            line: item.line,
            status: item.theirs.status,
            ...(item.theirs.reference === null ? {} : { reference: item.theirs.reference }),
          };
    const known = (item: ReportItemRow): Known => ({
      orderNo: item.order_no,
      merchantId: item.merchant_id,
      amount: item.ours ? (parseFormattedAmount(item.ours.amount) ?? null) : null,
      currency: item.ours?.currency ?? null,
    });
    if (!chosen) {
      return items.flatMap((item) => {
        const backing = evidence(item);
        return item.proposal && backing ? [{ ...known(item), kind: 'resolve' as const, outcome: item.proposal, evidence: backing }] : [];
      });
    }
    const byNo = new Map(items.map((i) => [i.order_no, i]));
    return chosen.map((c): PlannedOrder => {
      const item = byNo.get(c.order_no);
      if (!item) return refusal(unknownOrder(c.order_no), c.outcome, 'NOT_IN_REPORT', `The report does not list order ${c.order_no}`);
      const backing = evidence(item);
      if (!item.proposal || !backing) return refusal(known(item), c.outcome, 'NO_PROPOSAL', `Nothing to apply: ${NO_REPORT_PROPOSAL[item.category]}`);
      if (c.outcome !== undefined && c.outcome !== item.proposal) {
        return refusal(
          known(item),
          c.outcome,
          'OUTCOME_CONTRADICTS_EVIDENCE',
          `The report says ${item.theirs?.status}: the proposal is ${item.proposal}, not ${c.outcome}`,
        );
      }
      return { ...known(item), kind: 'resolve', outcome: item.proposal, evidence: backing };
    });
  }

  private async planJob(jobId: string, chosen: ChosenOrder[] | undefined): Promise<PlannedOrder[]> {
    if (!(await this.jobs.exists(jobId))) throw new ApiError(404, 'REQUERY_JOB_NOT_FOUND', `No re-query job ${jobId}`);
    const items = await this.jobs.itemsForApply(
      jobId,
      chosen?.map((c) => c.order_no),
    );
    const known = (item: RequeryItemRow): Known => ({
      orderNo: item.order_no,
      merchantId: item.merchant_id,
      amount: BigInt(item.amount),
      currency: item.currency,
    });
    const evidence = (item: RequeryItemRow): ResolutionEvidence => ({ source: 'requery', jobId, upstream: { status: item.upstream, ...item.answer } });
    if (!chosen) {
      return items.flatMap((item) =>
        isDefinitive(item.proposal) ? [{ ...known(item), kind: 'resolve' as const, outcome: item.proposal, evidence: evidence(item) }] : [],
      );
    }
    const byNo = new Map(items.map((i) => [i.order_no, i]));
    return chosen.map((c): PlannedOrder => {
      const item = byNo.get(c.order_no);
      if (!item) return refusal(unknownOrder(c.order_no), c.outcome, 'NOT_IN_JOB', `Order ${c.order_no} is not one of this job's orders`);
      if (item.upstream === null || item.proposal === null) {
        return refusal(known(item), c.outcome, 'NOT_ANSWERED_YET', 'The upstream has not been asked about this order yet: the job is still running');
      }
      if (item.proposal === 'leave') {
        return refusal(known(item), c.outcome, 'NO_PROPOSAL', `Nothing to apply: the upstream answered ${item.upstream}, which decides nothing yet`);
      }
      if (item.proposal === 'decide') {
        if (c.outcome === undefined) {
          return refusal(
            known(item),
            null,
            'OUTCOME_REQUIRED',
            'The upstream never received this order: choose the outcome ("outcome": "success" or "failed")',
          );
        }
        return { ...known(item), kind: 'resolve', outcome: c.outcome, evidence: evidence(item) };
      }
      if (c.outcome !== undefined && c.outcome !== item.proposal) {
        return refusal(
          known(item),
          c.outcome,
          'OUTCOME_CONTRADICTS_EVIDENCE',
          `The upstream answered ${item.upstream}: the proposal is ${item.proposal}, not ${c.outcome}`,
        );
      }
      return { ...known(item), kind: 'resolve', outcome: item.proposal, evidence: evidence(item) };
    });
  }

  /** One order: resolved if it still waits for a person; otherwise, or if someone else was quicker, what became of it. */
  private async resolve(planned: Extract<PlannedOrder, { kind: 'resolve' }>, note: string, staffId: string, approvedBy?: string): Promise<Done> {
    let resolved: OrderState;
    try {
      // The command reads the order and decides on it as it stands: an order no longer waiting is refused, and only then read again to say why.
      ({ state: resolved } = await this.commands.execute(
        new ResolveOrder(planned.orderNo, planned.outcome, staffId, note, { evidence: planned.evidence, approvedBy }),
      ));
    } catch (error) {
      if (!(error instanceof CommandRefusedError)) throw error;
      const after = await this.current(planned.orderNo);
      if (after.state.stage === 'unknown') {
        return { planned, result: 'refused', detail: { outcome: planned.outcome, code: error.code, message: error.message, resolved_by: null } };
      }
      return classify(after, planned);
    }
    if (resolved.stage === 'none') throw new Error(`order ${planned.orderNo} resolved but never placed`);
    const { order } = resolved;
    return {
      planned,
      result: 'applied',
      detail: { outcome: planned.outcome, code: null, message: null, resolved_by: null },
      moved: { outcome: planned.outcome, amount: order.amount, currency: order.currency },
    };
  }

  /** The order's state and its latest resolution by staff, from the event store. */
  private async current(orderNo: string): Promise<{ state: OrderState; resolution: OrderResolution | undefined }> {
    const events = (await this.store.readStream(orderStream(orderNo))).map((e) => decodeEvent<OrderEvent>(e));
    const resolved = events.filter((e): e is Extract<OrderEvent, { type: 'OrderResolved' }> => e.type === 'OrderResolved').pop();
    return { state: fold(orderDecider, events), resolution: resolved?.data };
  }
}

/** An order no longer waiting for a person: this same decision (already applied), or someone else's, or no decision at all. */
function classify(current: { state: OrderState; resolution: OrderResolution | undefined }, planned: Extract<PlannedOrder, { kind: 'resolve' }>): Done {
  const { state, resolution } = current;
  if (state.stage === 'none') {
    return {
      planned,
      result: 'refused',
      detail: { outcome: planned.outcome, code: 'ORDER_NOT_FOUND', message: `No order ${planned.orderNo}`, resolved_by: null },
    };
  }
  if (resolution && resolution.outcome === planned.outcome && sameSource(resolution.evidence, planned.evidence)) {
    return {
      planned,
      result: 'already_applied',
      detail: { outcome: planned.outcome, code: null, message: 'This decision was applied before: nothing changed', resolved_by: resolution.resolvedBy },
    };
  }
  if (resolution) {
    return {
      planned,
      result: 'skipped',
      detail: {
        outcome: planned.outcome,
        code: 'RESOLVED_MEANWHILE',
        message: `Resolved as ${resolution.outcome} meanwhile by ${resolution.resolvedBy}, not by this apply`,
        resolved_by: resolution.resolvedBy,
      },
    };
  }
  return {
    planned,
    result: 'skipped',
    detail: {
      outcome: planned.outcome,
      code: 'NOT_IN_RECONCILIATION',
      message: `The order no longer waits for a person: it is ${state.stage}`,
      resolved_by: null,
    },
  };
}

/** Whether a resolution rests on the same report or the same job as this one. */
function sameSource(recorded: ResolutionEvidence | undefined, planned: ResolutionEvidence): boolean {
  if (!recorded || recorded.source !== planned.source) return false;
  return recorded.source === 'report'
    ? planned.source === 'report' && recorded.reportId === planned.reportId
    : planned.source === 'requery' && recorded.jobId === planned.jobId;
}

function refusal(known: Known, outcome: Outcome | null | undefined, code: string, message: string): PlannedOrder {
  return { ...known, kind: 'refuse', outcome: outcome ?? null, code, message };
}

const unknownOrder = (orderNo: string): Known => ({ orderNo, merchantId: null, amount: null, currency: null });

/** What the orders resolved now moved, per currency. */
function movedAmounts(done: Done[]): BulkApplyView['amounts'] {
  const sums = new Map<string, { deducted: Minor; released: Minor }>();
  for (const { moved } of done) {
    if (!moved) continue;
    const sum = sums.get(moved.currency) ?? { deducted: 0n, released: 0n };
    if (moved.outcome === 'success') sum.deducted += moved.amount;
    else sum.released += moved.amount;
    sums.set(moved.currency, sum);
  }
  return [...sums]
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([currency, s]) => ({ currency, deducted: formatAmount(s.deducted), released: formatAmount(s.released) }));
}

/**
 * `work` over the items, `limit` at a time, results in the items' order. An
 * error stops new work; the work under way finishes before it is thrown.
 */
async function withConcurrency<T, R>(items: readonly T[], limit: number, work: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  let failed: { error: unknown } | undefined;
  const runner = async () => {
    while (!failed && next < items.length) {
      const index = next++;
      try {
        results[index] = await work(items[index]);
      } catch (error) {
        failed ??= { error };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, runner));
  if (failed) throw failed.error;
  return results;
}
