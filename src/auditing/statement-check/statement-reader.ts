/**
 * The reader of a statement check: a JSON or CSV export (RFC 4180) as the
 * lines it holds, each still unchecked; a line that cannot be read is kept
 * with the reason, so the check can report it in its place.
 */
import { STATEMENT_CSV_COLUMNS } from '../wallet-statement';

const CSV_HEADER = STATEMENT_CSV_COLUMNS.join(',');

/** A line as read from the file, before any check. */
export interface RawLine {
  /** As StatementProblem.line. */
  line: number;
  fields?: Record<string, unknown>;
  /** Set when the line could not be read at all. */
  error?: string;
  /** The revision of an unreadable line, when its first column still shows it. */
  revisionHint?: number;
}

/** The lines of a statement file, read but not checked. */
export interface Read {
  ok: true;
  lines: RawLine[];
  linesAt?: string;
  /** JSON header fields, when the file is the JSON export. */
  header?: { merchantId?: unknown; currency?: unknown; nextAfterRevision?: unknown };
}

export function readJson(text: string): Read | { ok: false; error: string } {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    return { ok: false, error: `the file is not valid JSON: ${(error as Error).message}` };
  }
  let lines: unknown;
  let linesAt = 'lines';
  let header: Read['header'];
  if (isObject(parsed) && parsed.success === false) {
    return { ok: false, error: `the file is the service's refusal, not a statement: ${String(parsed.code)}: ${String(parsed.message)}` };
  }
  // The service's reply as it came ({"success": true, "code": "OK", "data": {...}}), or its data alone.
  if (isObject(parsed) && isObject(parsed.data) && !('lines' in parsed)) {
    parsed = parsed.data;
    linesAt = 'data.lines';
  }
  if (Array.isArray(parsed)) {
    lines = parsed;
    linesAt = '';
  } else if (isObject(parsed)) {
    lines = parsed.lines;
    header = { merchantId: parsed.merchant_id, currency: parsed.currency, nextAfterRevision: parsed.next_after_revision };
  }
  if (!Array.isArray(lines)) return { ok: false, error: 'the JSON has no "lines" array: it is not a wallet statement' };
  return {
    ok: true,
    header,
    linesAt,
    lines: lines.map((value, i) =>
      value !== null && typeof value === 'object' && !Array.isArray(value)
        ? { line: i + 1, fields: value as Record<string, unknown> }
        : { line: i + 1, error: 'the line is not a JSON object' },
    ),
  };
}

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/**
 * RFC 4180: fields separated by commas, records by CRLF or LF, fields may be
 * quoted ("" inside a quoted field is one "). A record that cannot be read is
 * reported and reading resumes at the next physical line, so one truncated
 * row (say, an unclosed quote) does not swallow the rows after it.
 */
export function readCsv(text: string): Read | { ok: false; error: string } {
  const records: { fields?: string[]; error?: string; revisionHint?: number; fileLine: number }[] = [];
  let i = 0;
  let fileLine = 1;
  while (i < text.length) {
    const start = i;
    const record = readCsvRecord(text, i);
    if ('error' in record) {
      const lead = /^(0|[1-9][0-9]*),/.exec(text.slice(start, start + 24));
      records.push({ error: record.error, revisionHint: lead ? Number(lead[1]) : undefined, fileLine });
      const newline = text.indexOf('\n', start);
      i = newline < 0 ? text.length : newline + 1;
    } else {
      records.push({ fields: record.fields, fileLine });
      i = record.next;
    }
    // A quoted field may hold line breaks: count the file's lines, not the records.
    for (let at = text.indexOf('\n', start); at >= 0 && at < i; at = text.indexOf('\n', at + 1)) fileLine++;
  }
  if (records.length === 0) return { ok: false, error: 'the file is empty' };
  const header = records[0];
  if (!header.fields || header.fields.join(',') !== CSV_HEADER) {
    return { ok: false, error: `not a statement export: JSON must start with "{", CSV with the header row ${CSV_HEADER}` };
  }
  const rows = records.slice(1);
  // The final CRLF is a record terminator, not an empty record; tolerate blank lines at the end only.
  while (rows.length > 0 && rows[rows.length - 1].fields?.length === 1 && rows[rows.length - 1].fields![0] === '') rows.pop();
  const lines = rows.map((row): RawLine => {
    const line = row.fileLine;
    if (!row.fields) return { line, error: row.error, revisionHint: row.revisionHint };
    if (row.fields.length === 1 && row.fields[0] === '') return { line, error: 'the row is empty' };
    const revisionHint = /^(0|[1-9][0-9]*)$/.test(row.fields[0]) ? Number(row.fields[0]) : undefined;
    if (row.fields.length !== STATEMENT_CSV_COLUMNS.length) {
      return { line, revisionHint, error: `the row has ${row.fields.length} of ${STATEMENT_CSV_COLUMNS.length} columns (truncated or damaged)` };
    }
    const fields: Record<string, unknown> = {};
    STATEMENT_CSV_COLUMNS.forEach((column, c) => (fields[column] = row.fields![c]));
    let data: unknown;
    try {
      data = JSON.parse(row.fields[STATEMENT_CSV_COLUMNS.indexOf('data')]);
    } catch {
      return { line, revisionHint, error: 'the data column is not valid JSON' };
    }
    fields.data = data;
    const revision = String(fields.revision);
    fields.revision = /^(0|[1-9][0-9]*)$/.test(revision) ? Number(revision) : revision;
    for (const column of ['order_no', 'reference', 'reason'] as const) if (fields[column] === '') fields[column] = null;
    return { line, fields };
  });
  return { ok: true, lines };
}

function readCsvRecord(text: string, from: number): { fields: string[]; next: number } | { error: string } {
  const fields: string[] = [];
  let i = from;
  for (;;) {
    let field = '';
    if (text[i] === '"') {
      i++;
      for (;;) {
        const quote = text.indexOf('"', i);
        if (quote < 0) return { error: 'a quoted field is never closed (the row is truncated or damaged)' };
        field += text.slice(i, quote);
        if (text[quote + 1] === '"') {
          field += '"';
          i = quote + 2;
        } else {
          i = quote + 1;
          break;
        }
      }
      const after = text[i];
      if (after !== undefined && after !== ',' && after !== '\n' && !(after === '\r' && text[i + 1] === '\n')) {
        return { error: 'text follows a closing quote (the row is damaged)' };
      }
    } else {
      let j = i;
      while (j < text.length && text[j] !== ',' && text[j] !== '\n' && !(text[j] === '\r' && text[j + 1] === '\n')) {
        if (text[j] === '"') return { error: 'a quote inside an unquoted field (the row is damaged)' };
        j++;
      }
      field = text.slice(i, j);
      i = j;
    }
    fields.push(field);
    if (text[i] === ',') {
      i++;
      continue;
    }
    if (text[i] === '\r') return { fields, next: i + 2 };
    if (text[i] === '\n') return { fields, next: i + 1 };
    return { fields, next: text.length };
  }
}
