import type { MerchantStatus, OrderStage } from '../../../ledger/order/order.decider';
import type { ApplyResult, AppliedView } from '../bulk-apply/bulk-apply.view';
import type { ReportLineError } from './report-csv';
import type { MatchReason, ReportCategory } from './report-matching';

export type { ReportLineError } from './report-csv';
export type { MatchReason, ReportCategory } from './report-matching';

/** A report line as the upstream wrote it. */
export interface TheirsView {
  status: 'delivered' | 'failed';
  amount: string;
  currency: string;
  /** Null when the line had none. */
  reference: string | null;
  completed_at: string;
}

/** Our order as the orders read model had it when the report was matched. */
export interface OursView {
  stage: OrderStage;
  status: MerchantStatus | null;
  amount: string;
  currency: string;
  resolved_by: string | null;
  resolved_by_name: string | null;
}

/** An upstream report in a list: what was received, from where and whom, and how its lines matched. */
export interface UpstreamReportSummaryView {
  report_id: string;
  source: 'upload' | 'upstream';
  file_name: string | null;
  size_bytes: number;
  sha256: string;
  received_by: string;
  received_by_name: string | null;
  received_at: string;
  /** [from, to): given, or from the lines' completions; null for a report with neither. */
  window: { from: string; to: string } | null;
  lines: number;
  /** False when any line has an error: the report is kept as evidence but can never be applied. */
  valid: boolean;
  error_count: number;
  counts: Record<ReportCategory, number>;
}

/** One item of a report: a line and the order it names, or an order of ours the report lacks. */
export interface ReportItemView {
  item: number;
  category: ReportCategory;
  reason: MatchReason;
  /** The line of the file (header: line 1); null for an order the report lacks. */
  line: number | null;
  order_no: string;
  merchant_id: string | null;
  merchant_name: string | null;
  ours: OursView | null;
  theirs: TheirsView | null;
  /** What a bulk apply resolves a resolvable order as; null for the other categories. */
  proposal: 'success' | 'failed' | null;
  applied: AppliedView | null;
}

/** A report with its first errors, its counts and a page of its items. */
export interface UpstreamReportView extends UpstreamReportSummaryView {
  /** The first 100 errors, by line. */
  errors: ReportLineError[];
  proposals: { success: number; failed: number };
  applied: Record<ApplyResult, number>;
  page: { category: ReportCategory | null; total: number; limit: number; offset: number };
  items: ReportItemView[];
}
