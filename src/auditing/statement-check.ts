/**
 * Offline check of an exported wallet statement (JSON or CSV, as written by
 * wallet-statement.ts). Needs nothing but the file: every line carries its
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
import { WalletEvent, walletMovement } from '../ledger/wallet/wallet.decider';
import { isoTimestamp } from '../shared/clock';
import { chainHash, GENESIS_HASH } from '../shared/hash-chain';
import { formatAmount } from '../shared/money';
import { STATEMENT_CSV_COLUMNS } from './wallet-statement';

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

/** A line as read from the file, before any check. */
interface RawLine {
  /** As StatementProblem.line. */
  line: number;
  fields?: Record<string, unknown>;
  /** Set when the line could not be read at all. */
  error?: string;
  /** The revision of an unreadable line, when its first column still shows it. */
  revisionHint?: number;
}

/** A line whose columns all have the right shape. */
interface ParsedLine {
  line: number;
  revision: number;
  type: string;
  orderNo: string | null;
  reference: string | null;
  reason: string | null;
  occurredAt: string;
  recordedAt: string;
  amount: string;
  balanceAfter: string;
  frozenAfter: string;
  availableAfter: string;
  data: Record<string, unknown>;
  prevHash: string;
  hash: string;
}

const WALLET_EVENT_TYPES = new Set(['WalletOpened', 'FundsDeposited', 'FundsFrozen', 'FrozenFundsDeducted', 'FrozenFundsReleased']);
const MOVES_MONEY = new Set(['FundsDeposited', 'FundsFrozen', 'FrozenFundsDeducted', 'FrozenFundsReleased']);
const AMOUNT_TEXT = /^-?(0|[1-9][0-9]*)\.[0-9]{2}$/;
const MINOR_TEXT = /^-?(0|[1-9][0-9]*)$/;
export const CSV_HEADER = STATEMENT_CSV_COLUMNS.join(',');

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

function fileProblem(format: CheckReport['format'], message: string, notes: string[] = []): CheckReport {
  return { ok: false, format, lines: 0, problems: [{ line: 0, kind: 'MALFORMED', message }], notes };
}

// ---------------------------------------------------------------- reading

interface Read {
  ok: true;
  lines: RawLine[];
  linesAt?: string;
  /** JSON header fields, when the file is the JSON export. */
  header?: { merchantId?: unknown; currency?: unknown; nextAfterRevision?: unknown };
}

function readJson(text: string): Read | { ok: false; error: string } {
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
function readCsv(text: string): Read | { ok: false; error: string } {
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

/** Validates the shape of every column; returns the parsed line or what is wrong with it. */
function parseLine(raw: RawLine): ParsedLine | string {
  if (raw.error || !raw.fields) return raw.error ?? 'the line cannot be read';
  const f = raw.fields;
  const missing = STATEMENT_CSV_COLUMNS.filter((c) => !(c in f));
  if (missing.length > 0) return `missing column${missing.length > 1 ? 's' : ''} ${missing.join(', ')}`;
  if (typeof f.revision !== 'number' || !Number.isSafeInteger(f.revision) || f.revision < 0) {
    return `revision ${JSON.stringify(f.revision)} is not a non-negative integer`;
  }
  for (const column of ['type', 'amount', 'balance_after', 'frozen_after', 'available_after', 'prev_hash', 'hash', 'occurred_at', 'recorded_at'] as const) {
    if (typeof f[column] !== 'string') return `${column} is not a string`;
  }
  for (const column of ['order_no', 'reference', 'reason'] as const) {
    if (f[column] !== null && typeof f[column] !== 'string') return `${column} is neither a string nor null`;
  }
  for (const column of ['amount', 'balance_after', 'frozen_after', 'available_after'] as const) {
    if (!AMOUNT_TEXT.test(f[column] as string)) return `${column} ${JSON.stringify(f[column])} is not an amount like "12.50"`;
  }
  if (f.data === null || typeof f.data !== 'object' || Array.isArray(f.data)) return 'data is not a JSON object';
  return {
    line: raw.line,
    revision: f.revision,
    type: f.type as string,
    orderNo: f.order_no as string | null,
    reference: f.reference as string | null,
    reason: f.reason as string | null,
    occurredAt: f.occurred_at as string,
    recordedAt: f.recorded_at as string,
    amount: f.amount as string,
    balanceAfter: f.balance_after as string,
    frozenAfter: f.frozen_after as string,
    availableAfter: f.available_after as string,
    data: f.data as Record<string, unknown>,
    prevHash: f.prev_hash as string,
    hash: f.hash as string,
  };
}

// ---------------------------------------------------------------- checking

/** The last line the chain was followed to, and the amounts after it. */
interface Tip {
  index: number;
  revision: number;
  hash: string;
  balance: bigint;
  frozen: bigint;
}

/** "line 14" (CSV: the line of the file) or "data.lines[12]" (JSON: the place in the array). */
export function lineLabel(report: Pick<CheckReport, 'linesAt'>, line: number): string {
  return report.linesAt === undefined ? `line ${line}` : `${report.linesAt}[${line - 1}]`;
}

function checkLines(format: 'json' | 'csv', read: Read | { ok: false; error: string }, options: CheckOptions): CheckReport {
  if (!read.ok) return fileProblem(format, read.error);
  const raws = read.lines;
  const name = (index: number) => lineLabel(read, raws[index].line);
  const names = (a: number, b: number) => (read.linesAt === undefined ? `lines ${raws[a].line} and ${raws[b].line}` : `${name(a)} and ${name(b)}`);
  const total = raws.length;
  const maxProblems = options.maxProblems ?? 1000;
  const progressEvery = options.progressEvery ?? 10_000;
  const problems: StatementProblem[] = [];
  const notes: string[] = [];
  const report = (p: StatementProblem) => problems.push(p);

  const parsed = raws.map(parseLine);
  // Where each revision and hash occurs, to tell a moved line from a missing one.
  const byRevision = new Map<number, number>();
  const byHash = new Map<string, number>();
  parsed.forEach((p, index) => {
    if (typeof p === 'string') return;
    if (!byRevision.has(p.revision)) byRevision.set(p.revision, index);
    if (!byHash.has(p.hash)) byHash.set(p.hash, index);
  });

  const first = parsed.find((p): p is ParsedLine => typeof p !== 'string');
  const last = [...parsed].reverse().find((p): p is ParsedLine => typeof p !== 'string');
  let anchor: CheckReport['anchor'];
  let tip: Tip | undefined;
  /** True until the first readable line: the chain starts there. */
  let atStart = true;
  let stoppedAt: number | undefined;

  for (let index = 0; index < parsed.length; index++) {
    if (problems.length >= maxProblems) {
      notes.push(`stopped listing after ${maxProblems} problems at ${name(index - 1)}`);
      break;
    }
    if (options.onProgress && index > 0 && index % progressEvery === 0) options.onProgress(index, total);
    const p = parsed[index];
    const lineNo = raws[index].line;
    if (typeof p === 'string') {
      report({ line: lineNo, revision: revisionOf(raws[index]), kind: 'MALFORMED', message: p });
      if (tip && index + 1 < total) notes.push(`${name(index + 1)} is checked from its own prev_hash: the unreadable ${name(index)} breaks the chain`);
      tip = undefined;
      continue;
    }
    const at = (kind: ProblemKind, message: string) => report({ line: lineNo, revision: p.revision, kind, message });

    // 1. The line's own hash.
    const recomputed = chainHash(p.prevHash, p.revision, p.type, p.data);
    if (recomputed !== p.hash) {
      at('ALTERED', `its content does not match its hash (the revision, type, data or prev_hash was changed): recomputed ${recomputed}, stated ${p.hash}`);
      tip = tipAfter(index, p);
      atStart = false;
      continue;
    }

    // 2. Columns derived from the data, and the movement the data implies.
    const derived = derivedProblem(p);
    if ('kind' in derived) {
      at(derived.kind, derived.message);
      tip = tipAfter(index, p);
      atStart = false;
      continue;
    }
    const movement = derived;

    // 3. Continuity with the line before.
    let opening: { balance: bigint; frozen: bigint } | undefined;
    if (atStart) {
      atStart = false;
      // The chain starts here unless an earlier revision (or the line this one links to) comes later in the file.
      const partner = earlierLater(p, index, parsed, byHash);
      if (partner !== undefined) {
        const other = parsed[partner] as ParsedLine;
        at('REORDERED', `${names(index, partner)} are out of order: revision ${p.revision} comes before revision ${other.revision}`);
        const pairFits =
          partner === index + 1 &&
          other.revision === p.revision - 1 &&
          p.prevHash === other.hash &&
          chainHash(other.prevHash, other.revision, other.type, other.data) === other.hash &&
          (other.revision > 0 || other.prevHash === GENESIS_HASH);
        if (!pairFits) {
          stoppedAt = lineNo;
          break;
        }
        anchor = other.revision === 0 ? { kind: 'genesis' } : { kind: 'prev_hash', revision: other.revision, prevHash: other.prevHash };
        index++;
        tip = tipAfter(index - 1, p);
        continue;
      }
      if (p.revision === 0) {
        anchor = { kind: 'genesis' };
        if (p.prevHash !== GENESIS_HASH) {
          at('BROKEN_LINK', `the first event of a wallet (revision 0) must link to the genesis hash ${GENESIS_HASH}, this one links to ${p.prevHash}`);
          tip = tipAfter(index, p);
          continue;
        }
        opening = { balance: 0n, frozen: 0n };
      } else {
        anchor = { kind: 'prev_hash', revision: p.revision, prevHash: p.prevHash };
        notes.push(
          `the export starts mid-stream at revision ${p.revision}: it could only be checked from that anchor, ${name(index)}'s prev_hash ${p.prevHash} ` +
            `(the hash of revision ${p.revision - 1}, which this file alone cannot confirm), and ${name(index)}'s balance_after and frozen_after are taken as given`,
        );
      }
    } else if (tip) {
      const expected = tip.revision + 1;
      if (p.revision !== expected || p.prevHash !== tip.hash) {
        const continuity = continuityProblem(p, index, tip, parsed, byRevision, byHash, name, names);
        at(continuity.kind, continuity.message);
        if (continuity.kind === 'REORDERED') {
          const partner = continuity.partner;
          const swapped = partner === index + 1 ? parsed[partner] : undefined;
          const pairFits =
            swapped !== undefined &&
            typeof swapped !== 'string' &&
            swapped.revision === expected &&
            swapped.prevHash === tip.hash &&
            p.prevHash === swapped.hash &&
            chainHash(swapped.prevHash, swapped.revision, swapped.type, swapped.data) === swapped.hash;
          if (pairFits) {
            // A swapped pair: follow the chain in its true order and carry on after the pair.
            index++;
            tip = tipAfter(index - 1, p);
            continue;
          }
          stoppedAt = lineNo;
          break;
        }
        // MISSING or BROKEN_LINK: carry on from this line, its amounts taken as given.
        tip = tipAfter(index, p);
        continue;
      }
      opening = { balance: tip.balance, frozen: tip.frozen };
    }

    // 4. Running amounts.
    if (opening) {
      const balance = opening.balance + movement.balance;
      const frozen = opening.frozen + movement.frozen;
      const wrong = amountsProblem(p, balance, frozen, opening, movement);
      if (wrong) at('ALTERED', wrong);
      // With the data and the link verified, the computed amounts are the true ones.
      tip = { index, revision: p.revision, hash: p.hash, balance, frozen };
    } else {
      const balance = BigInt(p.balanceAfter.replace('.', ''));
      const frozen = BigInt(p.frozenAfter.replace('.', ''));
      if (p.availableAfter !== formatAmount(balance - frozen)) {
        at(
          'ALTERED',
          `available_after is ${p.availableAfter} but balance_after ${p.balanceAfter} minus frozen_after ${p.frozenAfter} is ${formatAmount(balance - frozen)}`,
        );
      }
      tip = tipAfter(index, p);
    }
  }
  if (options.onProgress && total >= progressEvery && stoppedAt === undefined) options.onProgress(total, total);
  if (stoppedAt !== undefined)
    notes.push(`checking stopped at ${lineLabel(read, stoppedAt)}: with lines out of order, later results would only repeat the problem`);

  if (read.header) headerProblems(read.header, parsed, report, notes);
  problems.sort((a, b) => a.line - b.line);
  return {
    ok: problems.length === 0,
    format,
    linesAt: read.linesAt,
    lines: total,
    firstRevision: first?.revision,
    lastRevision: last?.revision,
    lastHash: last?.hash,
    anchor,
    problems,
    notes,
  };
}

function revisionOf(raw: RawLine): number | undefined {
  const r = raw.fields?.revision;
  return typeof r === 'number' && Number.isSafeInteger(r) ? r : raw.revisionHint;
}

/** The tip after a line whose amounts are taken as stated (re-anchoring after a problem). */
function tipAfter(index: number, p: ParsedLine): Tip {
  return {
    index,
    revision: p.revision,
    hash: p.hash,
    balance: BigInt(p.balanceAfter.replace('.', '')),
    frozen: BigInt(p.frozenAfter.replace('.', '')),
  };
}

/** The movement the (hash-verified) data implies, or what a derived column gets wrong. */
function derivedProblem(p: ParsedLine): { balance: bigint; frozen: bigint } | { kind: ProblemKind; message: string } {
  const malformed = (message: string) => ({ kind: 'MALFORMED' as const, message });
  const altered = (message: string) => ({ kind: 'ALTERED' as const, message });
  if (!WALLET_EVENT_TYPES.has(p.type)) return malformed(`unknown event type ${JSON.stringify(p.type)}: not a wallet event`);
  const raw = p.data.amount;
  let amount: bigint | undefined;
  if (raw !== undefined) {
    if ((typeof raw === 'string' && MINOR_TEXT.test(raw)) || (typeof raw === 'number' && Number.isSafeInteger(raw))) amount = BigInt(raw);
    else return malformed(`data.amount ${JSON.stringify(raw)} is not a whole number of minor units`);
  }
  if (amount === undefined && MOVES_MONEY.has(p.type)) return malformed(`data.amount is missing, and a ${p.type} moves money`);
  const expectedAmount = formatAmount(amount ?? 0n);
  if (p.amount !== expectedAmount)
    return altered(`amount is ${p.amount} but the event's data says ${expectedAmount} (data.amount ${JSON.stringify(raw ?? null)})`);
  const text = (key: string) => (typeof p.data[key] === 'string' ? (p.data[key] as string) : null);
  for (const [column, value, key] of [
    ['order_no', p.orderNo, 'orderNo'],
    ['reference', p.reference, 'reference'],
    ['reason', p.reason, 'reason'],
  ] as const) {
    if (value !== text(key)) return altered(`${column} is ${JSON.stringify(value)} but the event's data says ${JSON.stringify(text(key))}`);
  }
  const at = text('at');
  if (at !== null) {
    const date = new Date(at);
    const expected = Number.isNaN(date.getTime()) ? undefined : isoTimestamp(date);
    if (expected !== undefined && p.occurredAt !== expected) return altered(`occurred_at is ${p.occurredAt} but the event's data says ${expected}`);
  } else if (p.occurredAt !== p.recordedAt) {
    return altered(`occurred_at is ${p.occurredAt} but the event's data has no time, so it must be recorded_at ${p.recordedAt}`);
  }
  const event = { type: p.type, data: { ...p.data, amount: amount ?? 0n } } as unknown as WalletEvent;
  return walletMovement(event);
}

function amountsProblem(
  p: ParsedLine,
  balance: bigint,
  frozen: bigint,
  opening: { balance: bigint; frozen: bigint },
  movement: { balance: bigint; frozen: bigint },
): string | undefined {
  const signed = (v: bigint) => (v < 0n ? `- ${formatAmount(-v)}` : `+ ${formatAmount(v)}`);
  if (p.balanceAfter !== formatAmount(balance)) {
    return `balance_after is ${p.balanceAfter} but the balance before, ${formatAmount(opening.balance)}, ${signed(movement.balance)} for this ${p.type} is ${formatAmount(balance)}`;
  }
  if (p.frozenAfter !== formatAmount(frozen)) {
    return `frozen_after is ${p.frozenAfter} but the frozen amount before, ${formatAmount(opening.frozen)}, ${signed(movement.frozen)} for this ${p.type} is ${formatAmount(frozen)}`;
  }
  if (p.availableAfter !== formatAmount(balance - frozen)) {
    return `available_after is ${p.availableAfter} but balance_after ${formatAmount(balance)} minus frozen_after ${formatAmount(frozen)} is ${formatAmount(balance - frozen)}`;
  }
  return undefined;
}

/** A later line with a lower revision than the first line, or that the first line links to. */
function earlierLater(p: ParsedLine, index: number, parsed: (ParsedLine | string)[], byHash: Map<string, number>): number | undefined {
  const linked = byHash.get(p.prevHash);
  if (linked !== undefined && linked > index) return linked;
  let best: number | undefined;
  for (let j = index + 1; j < parsed.length; j++) {
    const q = parsed[j];
    if (typeof q === 'string' || q.revision >= p.revision) continue;
    if (q.revision === p.revision - 1) return j;
    if (best === undefined) best = j;
  }
  return best;
}

/** Why line `index` does not follow the tip: moved, missing lines before it, or a foreign link. */
function continuityProblem(
  p: ParsedLine,
  index: number,
  tip: Tip,
  parsed: (ParsedLine | string)[],
  byRevision: Map<number, number>,
  byHash: Map<string, number>,
  name: (index: number) => string,
  names: (a: number, b: number) => string,
): { kind: ProblemKind; message: string; partner?: number } {
  const expected = tip.revision + 1;
  const pair = (j: number) => `${names(index, j)} are out of order${j === index + 1 ? '' : ` (${name(j)} belongs here)`}`;

  if (p.revision > expected) {
    // Is a skipped revision (or the line this one links to) further down the file?
    let partner: number | undefined;
    for (let r = expected; r < p.revision && partner === undefined; r++) {
      const j = byRevision.get(r);
      if (j !== undefined && j > index) partner = j;
    }
    const linked = byHash.get(p.prevHash);
    if (partner === undefined && linked !== undefined && linked > index) partner = linked;
    if (partner !== undefined) {
      const other = parsed[partner] as ParsedLine;
      return {
        kind: 'REORDERED',
        partner,
        message: `${pair(partner)}: revision ${p.revision} comes before revision ${other.revision} (expected revision ${expected} after ${name(tip.index)})`,
      };
    }
    const n = p.revision - expected;
    return {
      kind: 'MISSING',
      message: `${n} line${n === 1 ? '' : 's'} missing between revision ${tip.revision} and ${p.revision}, before this line (revision${n === 1 ? ` ${expected}` : `s ${expected}..${p.revision - 1}`})`,
    };
  }
  if (p.revision < expected) {
    if (p.revision === tip.revision && p.hash === tip.hash) {
      return { kind: 'REORDERED', message: `it repeats ${name(tip.index)} (revision ${p.revision}): a duplicated line` };
    }
    const earlier = byRevision.get(p.revision);
    const where = earlier !== undefined && earlier < index ? `; revision ${p.revision} already appeared at ${name(earlier)}` : '';
    return {
      kind: 'REORDERED',
      message: `${names(tip.index, index)} are out of order: revision ${p.revision} comes after revision ${tip.revision}${where}`,
    };
  }
  // Right revision, wrong link.
  const linked = byHash.get(p.prevHash);
  if (linked !== undefined && linked > index) {
    return { kind: 'REORDERED', partner: linked, message: `${pair(linked)}: this line links to ${name(linked)}, which comes after it` };
  }
  return {
    kind: 'BROKEN_LINK',
    message: `its prev_hash ${p.prevHash} is not the hash of ${name(tip.index)} (revision ${tip.revision}) ${tip.hash}: ${name(tip.index)} was altered and re-hashed, or this line does not belong after it`,
  };
}

/** The JSON header (merchant, currency, paging) against the lines. */
function headerProblems(header: NonNullable<Read['header']>, parsed: (ParsedLine | string)[], report: (p: StatementProblem) => void, notes: string[]): void {
  const opened = parsed.find((p): p is ParsedLine => typeof p !== 'string' && p.type === 'WalletOpened');
  if (opened) {
    if (typeof header.merchantId === 'string' && opened.data.merchantId !== header.merchantId) {
      report({
        line: opened.line,
        revision: opened.revision,
        kind: 'ALTERED',
        message: `the statement is for merchant ${JSON.stringify(header.merchantId)} but its WalletOpened event opened ${JSON.stringify(opened.data.merchantId)}`,
      });
    }
    if (typeof header.currency === 'string' && opened.data.currency !== header.currency) {
      report({
        line: opened.line,
        revision: opened.revision,
        kind: 'ALTERED',
        message: `the statement's currency is ${JSON.stringify(header.currency)} but its WalletOpened event says ${JSON.stringify(opened.data.currency)}`,
      });
    }
  }
  if (typeof header.nextAfterRevision === 'number') {
    notes.push(`this is one page of a longer statement: the next page starts after revision ${header.nextAfterRevision}`);
  }
}
