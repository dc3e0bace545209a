import { spreadsheetRow } from '../../../shared/spreadsheet-csv';
import type { ReportItemView } from './reports.view';

/** The export's columns: the item, our side, theirs, the proposal and what an apply did with it. */
export const EXPORT_COLUMNS = [
  'item',
  'category',
  'reason',
  'line',
  'order_no',
  'merchant_id',
  'merchant_name',
  'our_stage',
  'our_status',
  'our_amount',
  'our_currency',
  'our_resolved_by',
  'their_status',
  'their_amount',
  'their_currency',
  'their_reference',
  'their_completed_at',
  'proposal',
  'applied_result',
  'applied_outcome',
  'applied_by',
  'applied_at',
] as const;

export const EXPORT_HEADER = spreadsheetRow(EXPORT_COLUMNS);

/**
 * One item as a CSV line for the finance team's spreadsheet. Names and
 * references come from merchants and the upstream, so every cell is
 * neutralised (src/shared/spreadsheet-csv.ts): a cell that would start a
 * formula gets a leading apostrophe.
 */
export function exportRow(item: ReportItemView): string {
  return spreadsheetRow([
    item.item,
    item.category,
    item.reason,
    item.line,
    item.order_no,
    item.merchant_id,
    item.merchant_name,
    item.ours?.stage,
    item.ours?.status,
    item.ours?.amount,
    item.ours?.currency,
    item.ours?.resolved_by_name ?? item.ours?.resolved_by,
    item.theirs?.status,
    item.theirs?.amount,
    item.theirs?.currency,
    item.theirs?.reference,
    item.theirs?.completed_at,
    item.proposal,
    item.applied?.result,
    item.applied?.outcome,
    item.applied?.applied_by_name ?? item.applied?.applied_by,
    item.applied?.applied_at,
  ]);
}
