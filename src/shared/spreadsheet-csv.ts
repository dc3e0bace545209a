/**
 * CSV that a spreadsheet opens safely (RFC 4180 plus OWASP's CSV-injection
 * rule). The exports for the finance team carry text from outside the
 * service: an upstream's references, merchants' names. A spreadsheet treats
 * a cell that starts with `=`, `+`, `-` or `@` as a formula (and one that
 * starts with a tab or a carriage return can be made into one), so such a
 * cell gets a leading `'`, which shows it as the text it is. A cell with a
 * comma, a quote or a line break is then quoted, its quotes doubled.
 */

/** What a cell may start with that a spreadsheet would read as a formula. */
const FORMULA_START = /^[=+\-@\t\r]/;

/** One cell: neutralised, then quoted when it needs to be. Null and undefined are empty cells. */
export function spreadsheetCell(value: string | number | null | undefined): string {
  if (value === null || value === undefined) return '';
  const text = String(value);
  return csvField(FORMULA_START.test(text) ? `'${text}` : text);
}

/** One line of cells, ended with CRLF as RFC 4180 has it. */
export function spreadsheetRow(cells: readonly (string | number | null | undefined)[]): string {
  return `${cells.map(spreadsheetCell).join(',')}\r\n`;
}

/**
 * A field quoted only when RFC 4180 needs it, nothing neutralised: for CSV
 * read by programs, not people (the upstream simulator's report).
 */
export function csvField(text: string): string {
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}
