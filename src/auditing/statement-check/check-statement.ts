/**
 * Offline check of an exported wallet statement (JSON or CSV, as written by
 * ../wallet-statement.ts). Needs nothing but the file: every line carries its
 * event's data, its link (`prev_hash`) and its hash, so the checker recomputes
 * the chain and the running amounts and pinpoints the first line that was
 * altered, removed or moved.
 *
 * Per line, in this order (at most one problem per line, the most basic one):
 *   1. MALFORMED: the line cannot be read (missing columns, bad JSON data, ...).
 *   2. ALTERED: chainHash(prev_hash, revision, type, data) is not its hash.
 *   3. ALTERED: a column derived from the data (amount, order_no, reference,
 *      reason, occurred_at) disagrees with the data.
 *   4. Continuity with the line before: REORDERED, MISSING or BROKEN_LINK.
 *   5. ALTERED: balance_after / frozen_after / available_after disagree with
 *      the running arithmetic from the line before (walletMovement).
 * Continuity comes before the running amounts so that a removed line is
 * reported as missing, not as a wrong balance on the line after it.
 *
 * Not covered by the chain and not checked: `position` and `recorded_at`.
 */
import { checkLines } from './chain-checker';
import { CheckOptions, CheckReport, fileProblem } from './statement-report';
import { readCsv, readJson } from './statement-reader';

export type { CheckOptions, CheckReport, ProblemKind, StatementProblem } from './statement-report';
export { lineLabel } from './statement-report';

/** Checks an exported statement (JSON or CSV text). Never throws on bad input: it reports it. */
export function checkStatement(text: string, options: CheckOptions = {}): CheckReport {
  const body = text.replace(/^\uFEFF/, '');
  const start = body.trimStart();
  if (start.startsWith('{') || start.startsWith('[')) return checkLines('json', readJson(body), options);
  if (start === '') return fileProblem('unknown', 'the file is empty');
  const csv = readCsv(body);
  if (!csv.ok) return fileProblem('unknown', csv.error);
  return checkLines('csv', csv, options);
}
