import { createHash, randomBytes } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { Pool } from 'pg';
import { reconciliationCandidates, ReconciliationOrderRow } from '../../../../projections/orders.queries';
import { PG_POOL } from '../../../infrastructure/infrastructure.tokens';
import { isoTimestamp } from '../../../shared/clock';
import { formatAmount } from '../../../shared/money';
import { merchantStatus } from '../../../ledger/order/order.decider';
import { DisplayNames, Names } from '../../display-names/display-names';
import { appliedStaff, appliedView } from '../bulk-apply/bulk-apply.view';
import { parseReport } from './report-csv';
import { MatchedItem, matchReport, OurOrder, REPORT_CATEGORIES, ReportCategory, ReportWindow, windowOfLines } from './report-matching';
import { ReportItemView, UpstreamReportSummaryView, UpstreamReportView } from './reports.view';
import { NewReportItem, ReportItemRow, ReportRow, StoredOurs, UpstreamReports } from './upstream-reports';

/** Errors kept with a report; the reply shows the first 100. */
const KEPT_ERRORS = 1_000;
export const SHOWN_ERRORS = 100;

export interface ReceivedReport {
  reportId: string;
  /** False when the same bytes (for the same window) were received before: this is that report. */
  created: boolean;
  valid: boolean;
}

/**
 * Upstream transaction reports: received as bytes (uploaded, or fetched from
 * the upstream), kept as evidence with their checksum, parsed line by line,
 * and matched against the orders read model (report-matching.ts) once, when
 * received. A report with any error is kept and shown, but has no items and
 * can never be applied.
 */
@Injectable()
export class ReportsService {
  constructor(
    @Inject(PG_POOL) private readonly pool: Pool,
    private readonly reports: UpstreamReports,
    private readonly names: DisplayNames,
  ) {}

  async receive(
    content: Buffer,
    meta: { source: 'upload' | 'upstream'; fileName: string | null; receivedBy: string; window?: ReportWindow },
  ): Promise<ReceivedReport> {
    const sha256 = createHash('sha256').update(content).digest('hex');
    const dedupeKey = meta.window ? `${sha256}|${isoTimestamp(meta.window.from)}|${isoTimestamp(meta.window.to)}` : sha256;
    const known = await this.reports.idOf(dedupeKey);
    if (known) return this.received(known, false);
    const { lines, errors } = parseReport(content);
    const window = errors.length > 0 ? meta.window : (meta.window ?? windowOfLines(lines));
    const ours =
      errors.length > 0
        ? []
        : await this.ourOrders(
            lines.map((l) => l.orderNo),
            window,
          );
    const matched = errors.length > 0 ? [] : matchReport(lines, ours, window);
    const { reportId, created } = await this.reports.insert({
      reportId: `rp_${randomBytes(8).toString('hex')}`,
      content,
      sha256,
      dedupeKey,
      source: meta.source,
      fileName: meta.fileName,
      receivedBy: meta.receivedBy,
      window,
      lines: lines.length,
      errorCount: errors.length,
      errors: errors.slice(0, KEPT_ERRORS),
      counts: Object.fromEntries(REPORT_CATEGORIES.map((c) => [c, matched.filter((m) => m.category === c).length])) as Record<ReportCategory, number>,
      items: matched.map(storedItem),
    });
    return this.received(reportId, created);
  }

  private async received(reportId: string, created: boolean): Promise<ReceivedReport> {
    const header = await this.reports.header(reportId);
    if (!header) throw new Error(`report ${reportId} vanished after it was recorded`);
    return { reportId, created, valid: header.valid };
  }

  private async ourOrders(orderNos: string[], window: ReportWindow | undefined): Promise<OurOrder[]> {
    // Without a window no order is expected beyond the lines: an empty window finds none.
    const rows = await reconciliationCandidates(this.pool, orderNos, window ?? { from: new Date(0), to: new Date(0) });
    return rows.map(ourOrder);
  }

  async view(reportId: string, page: { category?: ReportCategory; limit: number; offset: number }): Promise<UpstreamReportView | undefined> {
    const found = await this.reports.find(reportId, page);
    if (!found) return undefined;
    const { report, proposals, applied, items } = found;
    const names = await this.namesOf([report], items);
    return {
      ...summaryView(report, names),
      errors: report.errors.slice(0, SHOWN_ERRORS),
      proposals,
      applied,
      page: {
        category: page.category ?? null,
        total: page.category === undefined ? REPORT_CATEGORIES.reduce((n, c) => n + report.counts[c], 0) : report.counts[page.category],
        limit: page.limit,
        offset: page.offset,
      },
      items: items.map((i) => itemView(i, names)),
    };
  }

  async list(after: readonly string[] | undefined, limit: number): Promise<{ rows: ReportRow[]; views: UpstreamReportSummaryView[] }> {
    const rows = await this.reports.list(after, limit);
    const names = await this.namesOf(rows, []);
    return { rows, views: rows.map((r) => summaryView(r, names)) };
  }

  /** The report's items in pages, as views, for the export. */
  async *itemPages(reportId: string, category: ReportCategory | undefined, pageSize = 2_000): AsyncGenerator<ReportItemView[]> {
    for (let after = 0; ;) {
      const rows = await this.reports.items(reportId, category, after, pageSize);
      if (rows.length === 0) return;
      const names = await this.namesOf([], rows);
      yield rows.map((r) => itemView(r, names));
      after = rows[rows.length - 1].item;
    }
  }

  header(reportId: string): Promise<ReportRow | undefined> {
    return this.reports.header(reportId);
  }

  /** The bytes as received, with their checksum. */
  original(reportId: string): Promise<{ content: Buffer; sha256: string } | undefined> {
    return this.reports.original(reportId);
  }

  private namesOf(reports: ReportRow[], items: ReportItemRow[]): Promise<Names> {
    return this.names.of({
      merchants: items.flatMap((i) => (i.merchant_id ? [i.merchant_id] : [])),
      staff: [...reports.map((r) => r.received_by), ...items.flatMap((i) => [...appliedStaff(i), i.ours?.resolved_by ?? null])],
    });
  }
}

function ourOrder(row: ReconciliationOrderRow): OurOrder {
  return {
    orderNo: row.order_no,
    merchantId: row.merchant_id,
    stage: row.stage,
    amount: BigInt(row.amount),
    currency: row.currency,
    upstreamAttempts: row.upstream_attempts,
    failCode: row.fail_code,
    resolvedBy: row.resolved_by,
    acceptedAt: row.accepted_at,
    completedAt: row.completed_at,
  };
}

function storedItem(m: MatchedItem): NewReportItem {
  const ours: StoredOurs | null = m.ours && {
    stage: m.ours.stage,
    status: merchantStatus(m.ours.stage) ?? null,
    amount: formatAmount(m.ours.amount),
    currency: m.ours.currency,
    resolved_by: m.ours.resolvedBy,
  };
  return {
    category: m.category,
    reason: m.reason,
    line: m.line?.line ?? null,
    orderNo: m.line?.orderNo ?? m.ours?.orderNo ?? '',
    merchantId: m.ours?.merchantId ?? null,
    theirs: m.line && {
      status: m.line.status,
      amount: formatAmount(m.line.amount),
      currency: m.line.currency,
      reference: m.line.reference === '' ? null : m.line.reference,
      completed_at: isoTimestamp(m.line.completedAt),
    },
    ours,
    proposal: m.proposal,
  };
}

function summaryView(r: ReportRow, names: Names): UpstreamReportSummaryView {
  return {
    report_id: r.report_id,
    source: r.source,
    file_name: r.file_name,
    size_bytes: r.size_bytes,
    sha256: r.sha256,
    received_by: r.received_by,
    received_by_name: r.received_by_name ?? names.staff(r.received_by),
    received_at: isoTimestamp(r.received_at),
    window: r.window_from && r.window_to ? { from: isoTimestamp(r.window_from), to: isoTimestamp(r.window_to) } : null,
    lines: r.lines,
    valid: r.valid,
    error_count: r.error_count,
    // In the categories' order (jsonb keeps its own).
    counts: Object.fromEntries(REPORT_CATEGORIES.map((c) => [c, r.counts[c] ?? 0])) as Record<ReportCategory, number>,
  };
}

function itemView(i: ReportItemRow, names: Names): ReportItemView {
  return {
    item: i.item,
    category: i.category,
    reason: i.reason,
    line: i.line,
    order_no: i.order_no,
    merchant_id: i.merchant_id,
    merchant_name: i.merchant_id ? names.merchant(i.merchant_id) : null,
    ours: i.ours && { ...i.ours, resolved_by_name: names.staff(i.ours.resolved_by) },
    theirs: i.theirs,
    proposal: i.proposal,
    applied: appliedView(i, names),
  };
}
