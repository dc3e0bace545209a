/** What the offline check of an exported statement reports (see check-statement.ts). */

export type ProblemKind = 'ALTERED' | 'MISSING' | 'REORDERED' | 'BROKEN_LINK' | 'MALFORMED';

export interface StatementProblem {
  /**
   * Where the line is: in a CSV file, its line in the file (the header is line 1);
   * in JSON, its place in the `lines` array counted from 1. 0 for the file as a whole.
   * `lineLabel` turns it into what the report prints.
   */
  line: number;
  revision?: number;
  kind: ProblemKind;
  message: string;
}

export interface CheckReport {
  ok: boolean;
  format: 'json' | 'csv' | 'unknown';
  /** JSON: the path of the array the lines were read from (`lines`, or `data.lines` in the service's reply). */
  linesAt?: string;
  lines: number;
  firstRevision?: number;
  lastRevision?: number;
  lastHash?: string;
  /**
   * Where the chain was checked from: the genesis hash (the export starts at
   * revision 0) or the first line's own `prev_hash` (it starts mid-stream,
   * and this file alone cannot confirm that hash).
   */
  anchor?: { kind: 'genesis' } | { kind: 'prev_hash'; revision: number; prevHash: string };
  problems: StatementProblem[];
  /** Things the auditor should know that are not problems (anchoring, paging, early stop). */
  notes: string[];
}

export interface CheckOptions {
  /** Called every `progressEvery` lines (default 10,000) with lines checked so far and the total. */
  onProgress?: (checked: number, total: number) => void;
  progressEvery?: number;
  /** Stop listing after this many problems (default 1,000). The first is always exact. */
  maxProblems?: number;
}

/** "line 14" (CSV: the line of the file) or "data.lines[12]" (JSON: the place in the array). */
export function lineLabel(report: Pick<CheckReport, 'linesAt'>, line: number): string {
  return report.linesAt === undefined ? `line ${line}` : `${report.linesAt}[${line - 1}]`;
}

/** A report on a file that could not be checked line by line. */
export function fileProblem(format: CheckReport['format'], message: string, notes: string[] = []): CheckReport {
  return { ok: false, format, lines: 0, problems: [{ line: 0, kind: 'MALFORMED', message }], notes };
}
