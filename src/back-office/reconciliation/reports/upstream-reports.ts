import { Inject, Injectable } from '@nestjs/common';
import { Pool } from 'pg';
import { PG_POOL } from '../../../infrastructure/infrastructure.tokens';
import type { MerchantStatus, OrderStage } from '../../../ledger/order/order.decider';
import { inOneSnapshot, inTransaction } from '../../../infrastructure/postgres/transactions';
import { staffNameSql } from '../../display-names/display-names';
import { recordAudit } from '../../staff-audit-trail/audit-trail';
import { ApplyResult, AppliedColumns, AppliedDetail, APPLY_RESULTS } from '../bulk-apply/bulk-apply.view';
import { ReportLineError } from './report-csv';
import { MatchReason, ReportCategory } from './report-matching';

/** A line as stored: the view's fields, except the staff name (read at each view). */
export interface StoredTheirs {
  status: 'delivered' | 'failed';
  amount: string;
  currency: string;
  reference: string | null;
  completed_at: string;
}

export interface StoredOurs {
  stage: OrderStage;
  status: MerchantStatus | null;
  amount: string;
  currency: string;
  resolved_by: string | null;
}

export interface NewReport {
  reportId: string;
  content: Buffer;
  sha256: string;
  dedupeKey: string;
  source: 'upload' | 'upstream';
  fileName: string | null;
  receivedBy: string;
  window: { from: Date; to: Date } | undefined;
  lines: number;
  errorCount: number;
  errors: ReportLineError[];
  counts: Record<ReportCategory, number>;
  items: NewReportItem[];
}

export interface NewReportItem {
  category: ReportCategory;
  reason: MatchReason;
  line: number | null;
  orderNo: string;
  merchantId: string | null;
  theirs: StoredTheirs | null;
  ours: StoredOurs | null;
  proposal: 'success' | 'failed' | null;
}

export interface ReportRow {
  report_id: string;
  sha256: string;
  size_bytes: number;
  source: 'upload' | 'upstream';
  file_name: string | null;
  received_by: string;
  received_by_name: string | null;
  received_at: Date;
  window_from: Date | null;
  window_to: Date | null;
  lines: number;
  valid: boolean;
  error_count: number;
  errors: ReportLineError[];
  counts: Record<ReportCategory, number>;
  /** received_at as Postgres prints it, full precision: the list's cursor. */
  sort_at: string;
}

export interface ReportItemRow extends AppliedColumns {
  item: number;
  category: ReportCategory;
  reason: MatchReason;
  line: number | null;
  order_no: string;
  merchant_id: string | null;
  theirs: StoredTheirs | null;
  ours: StoredOurs | null;
  proposal: 'success' | 'failed' | null;
}

const REPORT_COLUMNS = `report_id, sha256, size_bytes, source, file_name, received_by, ${staffNameSql('upstream_reports.received_by')} as received_by_name,
  received_at, window_from, window_to, lines, valid, error_count, errors, counts, received_at::text as sort_at`;
const ITEM_COLUMNS = `item, category, reason, line, order_no, merchant_id, theirs, ours, proposal, applied_result, applied_detail, applied_by, applied_at`;
/** Items written per statement: a 10 MiB report has some 100,000 lines. */
const INSERT_BATCH = 5_000;

/**
 * Upstream transaction reports as received, and their items as matched.
 * Every read and write of upstream_reports and upstream_report_items is here.
 */
@Injectable()
export class UpstreamReports {
  constructor(@Inject(PG_POOL) private readonly pool: Pool) {}

  /** The report received before with this dedupe key, if any. */
  async idOf(dedupeKey: string): Promise<string | undefined> {
    const { rows } = await this.pool.query<{ report_id: string }>('select report_id from upstream_reports where dedupe_key = $1', [dedupeKey]);
    return rows[0]?.report_id;
  }

  /**
   * Stores the report, its items and its audit row in one transaction. Two
   * receipts of the same bytes at once store one: the other gets its id.
   */
  async insert(report: NewReport): Promise<{ reportId: string; created: boolean }> {
    return inTransaction(this.pool, async (client) => {
      const { rows } = await client.query<{ report_id: string }>(
        `insert into upstream_reports (report_id, content, sha256, size_bytes, dedupe_key, source, file_name, received_by, window_from, window_to,
                                       lines, valid, error_count, errors, counts)
         values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)
         on conflict (dedupe_key) do nothing returning report_id`,
        [
          report.reportId,
          report.content,
          report.sha256,
          report.content.length,
          report.dedupeKey,
          report.source,
          report.fileName,
          report.receivedBy,
          report.window?.from ?? null,
          report.window?.to ?? null,
          report.lines,
          report.errorCount === 0,
          report.errorCount,
          JSON.stringify(report.errors),
          JSON.stringify(report.counts),
        ],
      );
      if (rows.length === 0) {
        const existing = await client.query<{ report_id: string }>('select report_id from upstream_reports where dedupe_key = $1', [report.dedupeKey]);
        return { reportId: existing.rows[0].report_id, created: false };
      }
      for (let start = 0; start < report.items.length; start += INSERT_BATCH) {
        const batch = report.items.slice(start, start + INSERT_BATCH);
        await client.query(
          `insert into upstream_report_items (report_id, item, category, reason, line, order_no, merchant_id, theirs, ours, proposal)
           select $1, item, category, reason, line, order_no, merchant_id, theirs, ours, proposal
           from jsonb_to_recordset($2::jsonb) as i(item int, category text, reason text, line int, order_no text, merchant_id text,
                                                   theirs jsonb, ours jsonb, proposal text)`,
          [
            report.reportId,
            JSON.stringify(
              batch.map((i, n) => ({
                item: start + n + 1,
                category: i.category,
                reason: i.reason,
                line: i.line,
                order_no: i.orderNo,
                merchant_id: i.merchantId,
                theirs: i.theirs,
                ours: i.ours,
                proposal: i.proposal,
              })),
            ),
          ],
        );
      }
      await recordAudit(client, {
        staffId: report.receivedBy,
        action: 'reconciliation.report_received',
        target: `report:${report.reportId}`,
        details: {
          source: report.source,
          file_name: report.fileName,
          sha256: report.sha256,
          size_bytes: report.content.length,
          lines: report.lines,
          errors: report.errorCount,
        },
      });
      return { reportId: report.reportId, created: true };
    });
  }

  /** The report, how its items were applied, and one page of its items (all, or one category), as of one moment. */
  async find(
    reportId: string,
    page: { category?: ReportCategory; limit: number; offset: number },
  ): Promise<{ report: ReportRow; proposals: { success: number; failed: number }; applied: Record<ApplyResult, number>; items: ReportItemRow[] } | undefined> {
    return inOneSnapshot(this.pool, async (client) => {
      const { rows } = await client.query<ReportRow>(`select ${REPORT_COLUMNS} from upstream_reports where report_id = $1`, [reportId]);
      if (rows.length === 0) return undefined;
      const { rows: counted } = await client.query<Record<string, number>>(
        `select count(*) filter (where proposal = 'success')::int as success, count(*) filter (where proposal = 'failed')::int as failed,
                ${APPLY_RESULTS.map((r) => `count(*) filter (where applied_result = '${r}')::int as "${r}"`).join(', ')}
         from upstream_report_items where report_id = $1`,
        [reportId],
      );
      const { rows: items } = await client.query<ReportItemRow>(
        `select ${ITEM_COLUMNS} from upstream_report_items
         where report_id = $1 and ($2::text is null or category = $2) order by item limit $3 offset $4`,
        [reportId, page.category ?? null, page.limit, page.offset],
      );
      const { success, failed, ...applied } = counted[0];
      return { report: rows[0], proposals: { success, failed }, applied: applied as Record<ApplyResult, number>, items };
    });
  }

  /** The bytes as received, with their checksum: the evidence itself. */
  async original(reportId: string): Promise<{ content: Buffer; sha256: string } | undefined> {
    const { rows } = await this.pool.query<{ content: Buffer; sha256: string }>('select content, sha256 from upstream_reports where report_id = $1', [
      reportId,
    ]);
    return rows[0];
  }

  /** The report's row alone. */
  async header(reportId: string): Promise<ReportRow | undefined> {
    const { rows } = await this.pool.query<ReportRow>(`select ${REPORT_COLUMNS} from upstream_reports where report_id = $1`, [reportId]);
    return rows[0];
  }

  /** Reports newest first, after the cursor (the sort key of the last row shown). */
  async list(after: readonly string[] | undefined, limit: number): Promise<ReportRow[]> {
    const { rows } = await this.pool.query<ReportRow>(
      `select ${REPORT_COLUMNS} from upstream_reports
       where $1::text is null or (received_at, report_id) < ($1::timestamptz, $2)
       order by received_at desc, report_id desc limit $3`,
      [after?.[0] ?? null, after?.[1] ?? null, limit],
    );
    return rows;
  }

  /** Items after `afterItem`, in order, of one category or all: the export reads the report in such pages. */
  async items(reportId: string, category: ReportCategory | undefined, afterItem: number, limit: number): Promise<ReportItemRow[]> {
    const { rows } = await this.pool.query<ReportItemRow>(
      `select ${ITEM_COLUMNS} from upstream_report_items
       where report_id = $1 and ($2::text is null or category = $2) and item > $3 order by item limit $4`,
      [reportId, category ?? null, afterItem, limit],
    );
    return rows;
  }

  /** The report's items (or those of `orderNos` among them), for a bulk apply. */
  async itemsForApply(reportId: string, orderNos?: readonly string[]): Promise<ReportItemRow[]> {
    const { rows } = await this.pool.query<ReportItemRow>(
      `select ${ITEM_COLUMNS} from upstream_report_items where report_id = $1 and ($2::text[] is null or order_no = any($2)) order by item`,
      [reportId, orderNos ?? null],
    );
    return rows;
  }

  /** What a bulk apply did with each order; a later apply never overwrites an `applied` with anything but another. */
  async recordApplied(reportId: string, results: readonly { orderNo: string; result: ApplyResult; detail: AppliedDetail }[], appliedBy: string): Promise<void> {
    if (results.length === 0) return;
    await this.pool.query(
      `update upstream_report_items i set applied_result = r.result, applied_detail = r.detail, applied_by = $3, applied_at = now()
       from jsonb_to_recordset($2::jsonb) as r(order_no text, result text, detail jsonb)
       where i.report_id = $1 and i.order_no = r.order_no and (i.applied_result is distinct from 'applied' or r.result = 'applied')`,
      [reportId, JSON.stringify(results.map((r) => ({ order_no: r.orderNo, result: r.result, detail: r.detail }))), appliedBy],
    );
  }
}
