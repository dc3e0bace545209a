import { isoTimestamp } from '../../../shared/clock';
import type { Names } from '../../display-names/display-names';

/**
 * What a bulk apply did with one order: `applied` (resolved now),
 * `already_applied` (this same decision is on the order already: a repeated
 * apply changes nothing), `skipped` (someone else resolved it meanwhile, or it
 * is no longer waiting for a person) or `refused` (with a code).
 */
export type ApplyResult = 'applied' | 'already_applied' | 'skipped' | 'refused';
export const APPLY_RESULTS: readonly ApplyResult[] = ['applied', 'already_applied', 'skipped', 'refused'];

/** One order's result as a bulk apply records it beside the report line or the re-query. */
export interface AppliedDetail {
  outcome: 'success' | 'failed' | null;
  code: string | null;
  message: string | null;
  /** Who resolved the order, when it was skipped because someone else did. */
  resolved_by: string | null;
  /** The second person who approved the apply under the four-eyes rule; absent in rows written before it was kept. */
  approved_by?: string | null;
}

/** The last bulk apply that took an order of a report or a job. */
export interface AppliedView extends AppliedDetail {
  result: ApplyResult;
  resolved_by_name: string | null;
  applied_by: string;
  applied_by_name: string | null;
  approved_by: string | null;
  approved_by_name: string | null;
  applied_at: string;
}

/** How a row of a report's items or a job's orders keeps its applied state. */
export interface AppliedColumns {
  applied_result: ApplyResult | null;
  applied_detail: AppliedDetail | null;
  applied_by: string | null;
  applied_at: Date | null;
}

export function appliedView(row: AppliedColumns, names: Names): AppliedView | null {
  if (row.applied_result === null || row.applied_detail === null || row.applied_by === null || row.applied_at === null) return null;
  return {
    result: row.applied_result,
    ...row.applied_detail,
    resolved_by_name: names.staff(row.applied_detail.resolved_by),
    applied_by: row.applied_by,
    applied_by_name: names.staff(row.applied_by),
    approved_by: row.applied_detail.approved_by ?? null,
    approved_by_name: names.staff(row.applied_detail.approved_by ?? null),
    applied_at: isoTimestamp(row.applied_at),
  };
}

/** The staff ids an applied state names, for DisplayNames. */
export const appliedStaff = (row: AppliedColumns): (string | null)[] => [
  row.applied_by,
  row.applied_detail?.resolved_by ?? null,
  row.applied_detail?.approved_by ?? null,
];

/** One order of a bulk apply's reply. */
export interface BulkApplyOrderView {
  order_no: string;
  merchant_id: string | null;
  merchant_name: string | null;
  amount: string | null;
  currency: string | null;
  /** The resolution asked for; null when the order was refused before one could be chosen. */
  outcome: 'success' | 'failed' | null;
  result: ApplyResult;
  /** Why it was refused or skipped: a stable code and a sentence. */
  code: string | null;
  message: string | null;
  /** Who resolved it instead, when it was skipped. */
  resolved_by: string | null;
  resolved_by_name: string | null;
}

/** Money moved by the orders this apply resolved, per currency: what `success` deducted and what `failed` released. */
export interface BulkApplyAmountView {
  currency: string;
  deducted: string;
  released: string;
}

/** The reply to a bulk apply. */
export interface BulkApplyView {
  source: 'report' | 'requery';
  report_id: string | null;
  job_id: string | null;
  note: string;
  applied_by: string;
  applied_by_name: string | null;
  /** The second person, when the four-eyes rule asked for one. */
  approved_by: string | null;
  approved_by_name: string | null;
  counts: Record<ApplyResult, number>;
  amounts: BulkApplyAmountView[];
  orders: BulkApplyOrderView[];
}
