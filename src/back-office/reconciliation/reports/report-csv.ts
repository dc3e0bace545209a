import { isUtf8 } from 'node:buffer';
import { REPORT_COLUMNS } from '../../../fulfilment';
import { parseInstant } from '../../../shared/clock';
import { IDENTIFIER, IDENTIFIER_RULE } from '../../../shared/limits';
import { Minor, parseAmount } from '../../../shared/money';

/** One line of an upstream's transaction report (docs/upstream-protocol.md), checked. */
export interface ReportLine {
  /** The line of the file the record starts on; the header is line 1. */
  line: number;
  orderNo: string;
  status: 'delivered' | 'failed';
  amount: Minor;
  currency: string;
  /** Empty when the upstream gave none. */
  reference: string;
  completedAt: Date;
}

/** What is wrong, where: the line, the column (null: the whole line) and a sentence. */
export interface ReportLineError {
  line: number;
  column: string | null;
  message: string;
}

export interface ParsedReport {
  lines: ReportLine[];
  errors: ReportLineError[];
}

const AMOUNT = /^\d+\.\d{2}$/;
const CURRENCY = /^[A-Z]{3}$/;
const CONTROL = /[\u0000-\u001f\u007f]/;
const MAX_REFERENCE = 128;

/** A value quoted back in an error message: short, and without anything that could break a line. */
const quoted = (value: string) => JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}...` : value);

/**
 * Reads a transaction report as received: UTF-8 (a byte-order mark is
 * ignored), RFC 4180 CSV with CRLF or LF line ends, a header naming at least
 * the protocol's columns in any order (others are ignored), then one line per
 * top-up. Every line is checked and every problem reported with its line and
 * column, so a clerk can fix the file in one go; the lines are only usable
 * when there is no error at all.
 */
export function parseReport(bytes: Buffer): ParsedReport {
  const undecodable = firstNonUtf8Line(bytes);
  if (undecodable !== undefined) {
    return { lines: [], errors: [{ line: undecodable, column: null, message: 'the line is not UTF-8 text' }] };
  }
  const text = bytes.toString('utf8').replace(/^\uFEFF/, '');
  const { records, errors } = csvRecords(text);
  const header = records.shift();
  if (!header || (header.fields.length === 1 && header.fields[0].trim() === '')) {
    return { lines: [], errors: [...errors, { line: 1, column: null, message: `the report is empty: it needs a header line (${REPORT_COLUMNS.join(',')})` }] };
  }
  const names = header.fields.map((f) => f.trim().toLowerCase());
  const headerErrors: ReportLineError[] = [
    ...REPORT_COLUMNS.filter((c) => !names.includes(c)).map((c) => ({ line: header.line, column: c, message: `missing column ${c}` })),
    ...names.filter((n, i) => n !== '' && names.indexOf(n) !== i).map((n) => ({ line: header.line, column: n, message: `column ${n} appears more than once` })),
  ];
  if (headerErrors.length > 0) return { lines: [], errors: [...errors, ...headerErrors] };
  const at = Object.fromEntries(REPORT_COLUMNS.map((c) => [c, names.indexOf(c)])) as Record<(typeof REPORT_COLUMNS)[number], number>;

  const lines: ReportLine[] = [];
  const seen = new Map<string, number>();
  for (const { line, fields } of records) {
    if (fields.length === 1 && fields[0] === '') continue; // a blank line
    if (fields.length !== names.length) {
      errors.push({ line, column: null, message: `expected ${names.length} fields as in the header, found ${fields.length}` });
      continue;
    }
    const problems: ReportLineError[] = [];
    const problem = (column: string, message: string) => problems.push({ line, column, message });
    const orderNo = fields[at.order_no];
    if (!IDENTIFIER.test(orderNo)) problem('order_no', `order_no must be ${IDENTIFIER_RULE}, not ${quoted(orderNo)}`);
    else if (seen.has(orderNo)) problem('order_no', `duplicate order_no ${orderNo}: already on line ${seen.get(orderNo)}`);
    const status = fields[at.status];
    if (status !== 'delivered' && status !== 'failed') problem('status', `status must be delivered or failed, not ${quoted(status)}`);
    const amountText = fields[at.amount];
    const amount = AMOUNT.test(amountText) ? parseAmount(amountText) : undefined;
    if (amount === undefined) problem('amount', `amount must be a number with exactly two decimals, such as 12.50, not ${quoted(amountText)}`);
    const currency = fields[at.currency];
    if (!CURRENCY.test(currency)) problem('currency', `currency must be three capital letters, such as USD, not ${quoted(currency)}`);
    const reference = fields[at.reference];
    if (reference.length > MAX_REFERENCE || CONTROL.test(reference)) {
      problem('reference', `reference must be at most ${MAX_REFERENCE} characters without control characters`);
    }
    const completedText = fields[at.completed_at];
    const completedAt = parseInstant(completedText);
    if (!completedAt)
      problem('completed_at', `completed_at must be an ISO 8601 time with an offset, such as 2026-11-22T10:04:05.123+00:00, not ${quoted(completedText)}`);
    if (IDENTIFIER.test(orderNo) && !seen.has(orderNo)) seen.set(orderNo, line);
    if (problems.length > 0 || amount === undefined || !completedAt) {
      errors.push(...problems);
      continue;
    }
    lines.push({ line, orderNo, status: status as ReportLine['status'], amount, currency, reference, completedAt });
  }
  return { lines: errors.length === 0 ? lines : [], errors };
}

/** The first line (1-based) with bytes that are not UTF-8, if any. */
function firstNonUtf8Line(bytes: Buffer): number | undefined {
  if (isUtf8(bytes)) return undefined;
  let start = 0;
  for (let line = 1; ; line++) {
    const end = bytes.indexOf(0x0a, start);
    if (!isUtf8(bytes.subarray(start, end < 0 ? bytes.length : end))) return line;
    if (end < 0) return line;
    start = end + 1;
  }
}

/**
 * RFC 4180 records with the line each starts on. A quote may only open a
 * field or, doubled, stand for itself inside a quoted one; a quoted field
 * runs across line breaks until its closing quote.
 */
function csvRecords(text: string): { records: { line: number; fields: string[] }[]; errors: ReportLineError[] } {
  const records: { line: number; fields: string[] }[] = [];
  const errors: ReportLineError[] = [];
  let line = 1;
  let fields: string[] = [];
  let field = '';
  let quoted = false;
  let start = 1;
  let broken: string | undefined;
  const endRecord = () => {
    fields.push(field);
    if (broken) errors.push({ line: start, column: null, message: broken });
    else records.push({ line: start, fields });
    fields = [];
    field = '';
    broken = undefined;
  };
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        field += '"';
        i++;
      } else if (c === '"') {
        quoted = false;
        const next = text[i + 1];
        if (next !== undefined && next !== ',' && next !== '\r' && next !== '\n') broken ??= 'text after the closing quote of a field';
      } else {
        if (c === '\n') line++;
        field += c;
      }
      continue;
    }
    if (c === '"') {
      if (field === '') quoted = true;
      else broken ??= 'a quote inside a field that does not start with one';
      continue;
    }
    if (c === ',') {
      fields.push(field);
      field = '';
    } else if (c === '\n' || (c === '\r' && text[i + 1] === '\n')) {
      if (c === '\r') i++;
      endRecord();
      line++;
      start = line;
    } else {
      field += c;
    }
  }
  if (quoted) {
    errors.push({ line: start, column: null, message: 'a quoted field is never closed' });
    return { records, errors };
  }
  if (field !== '' || fields.length > 0) endRecord();
  return { records, errors };
}
