import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { checkStatement } from '../../src/auditing/statement-check/check-statement';
import { formatReport } from '../../src/auditing/verify-statement.cli';
import { Statement, statementCsv, StatementLine } from '../../src/auditing/wallet-statement';
import { WalletEvent, walletMovement } from '../../src/ledger/wallet/wallet.decider';
import { isoTimestamp } from '../../src/shared/clock';
import { chainHash, GENESIS_HASH } from '../../src/shared/hash-chain';
import { formatAmount } from '../../src/shared/money';
import { TYPESCRIPT_LOADER } from '../support/service-node-flags';

// A realistic statement built without the service: wallet events as stored
// (amounts as decimal strings of minor units), chained from the genesis hash,
// with running amounts from walletMovement, exactly as wallet-statement.ts renders them.

type Stored = { type: WalletEvent['type']; data: Record<string, unknown> };

const MERCHANT = 'M-1001';
const T0 = Date.parse('2025-03-01T09:00:00.000Z');

function walletEvents(orders: number): Stored[] {
  let minute = 0;
  const at = () => new Date(T0 + minute++ * 60_000).toISOString();
  const events: Stored[] = [
    { type: 'WalletOpened', data: { merchantId: MERCHANT, currency: 'EUR', at: at() } },
    { type: 'FundsDeposited', data: { reference: 'DEP-1', amount: '100000', by: 'ops@example.com', at: at() } },
  ];
  for (let i = 1; i <= orders; i++) {
    const orderNo = `ORD-${String(i).padStart(5, '0')}`;
    const amount = String(100 + (i % 7) * 10); // "100".."160": 1.00..1.60
    events.push({ type: 'FundsFrozen', data: { orderNo, attempt: 1, amount, at: at() } });
    if (i % 5 === 0) {
      // A reason with a comma and quotes exercises CSV quoting.
      events.push({ type: 'FrozenFundsReleased', data: { orderNo, attempt: 1, amount, reason: 'upstream refused: "no stock", try later', at: at() } });
    } else {
      events.push({ type: 'FrozenFundsDeducted', data: { orderNo, attempt: 1, amount, at: at() } });
    }
    if (i % 9 === 0) events.push({ type: 'FundsDeposited', data: { reference: `DEP-${i}`, amount: '5000', by: 'ops@example.com', at: at() } });
  }
  return events;
}

function decode(event: Stored): WalletEvent {
  const data = { ...event.data } as Record<string, unknown>;
  if (typeof data.amount === 'string') data.amount = BigInt(data.amount);
  return { type: event.type, data } as WalletEvent;
}

function buildStatement(orders = 16): Statement {
  let balance = 0n;
  let frozen = 0n;
  let prevHash = GENESIS_HASH;
  const lines: StatementLine[] = walletEvents(orders).map((event, revision) => {
    const domain = decode(event);
    const movement = walletMovement(domain);
    balance += movement.balance;
    frozen += movement.frozen;
    const hash = chainHash(prevHash, revision, event.type, event.data);
    const d = domain.data as Partial<Record<'orderNo' | 'reference' | 'reason' | 'at', string>> & { amount?: bigint };
    const recorded = new Date(Date.parse(d.at!) + 250);
    const line: StatementLine = {
      revision,
      position: `${1000 + revision * 3}/${1000 + revision * 3}`,
      recorded_at: isoTimestamp(recorded),
      occurred_at: isoTimestamp(new Date(d.at!)),
      type: event.type,
      order_no: d.orderNo ?? null,
      reference: d.reference ?? null,
      reason: d.reason ?? null,
      amount: formatAmount(d.amount ?? 0n),
      balance_after: formatAmount(balance),
      frozen_after: formatAmount(frozen),
      available_after: formatAmount(balance - frozen),
      data: event.data,
      prev_hash: prevHash,
      hash,
    };
    prevHash = hash;
    return line;
  });
  return { merchant_id: MERCHANT, currency: 'EUR', lines, next_after_revision: null };
}

const clone = (s: Statement): Statement => JSON.parse(JSON.stringify(s));
const asJson = (s: Statement) => JSON.stringify(s, null, 2);
const escape = (text: string) => text.replace(/[[\]()]/g, '\\$&');

/** How a report names the k-th line (from 0): CSV by the line of the file (the header is line 1), JSON by the place in `lines`. */
const csv = { line: (k: number) => k + 2, name: (k: number) => `line ${k + 2}`, names: (a: number, b: number) => `lines ${a + 2} and ${b + 2}` };
const json = { line: (k: number) => k + 1, name: (k: number) => `lines[${k}]`, names: (a: number, b: number) => `lines[${a}] and lines[${b}]` };
/** Both exports of a statement, each with its way of naming lines. */
const exportsOf = (s: Statement) => [
  { text: asJson(s), ...json },
  { text: statementCsv(s), ...csv },
];
/** Index (0-based) of the n-th line of a type. */
const indexOf = (s: Statement, type: string, n = 0) => s.lines.map((l, i) => (l.type === type ? i : -1)).filter((i) => i >= 0)[n];
/** Re-hashes every line from `from` on, as a forger who edits a line and recomputes the chain after it would. */
function rehashFrom(s: Statement, from: number, to = s.lines.length - 1): void {
  for (let i = from; i <= to; i++) {
    const line = s.lines[i];
    if (i > from) line.prev_hash = s.lines[i - 1].hash;
    line.hash = chainHash(line.prev_hash, line.revision, line.type, line.data);
  }
}

describe('checkStatement', () => {
  const statement = buildStatement();
  const n = statement.lines.length;
  const lastHash = statement.lines[n - 1].hash;

  it('builds a realistic fixture', () => {
    expect(n).toBeGreaterThan(30);
    expect(new Set(statement.lines.map((l) => l.type))).toEqual(
      new Set(['WalletOpened', 'FundsDeposited', 'FundsFrozen', 'FrozenFundsDeducted', 'FrozenFundsReleased']),
    );
    expect(statementCsv(statement)).toContain('"upstream refused: ""no stock"", try later"');
  });

  describe('untouched exports pass', () => {
    it('JSON', () => {
      const report = checkStatement(asJson(statement));
      expect(report).toMatchObject({ ok: true, format: 'json', lines: n, firstRevision: 0, lastRevision: n - 1, lastHash, anchor: { kind: 'genesis' } });
      expect(report.problems).toEqual([]);
      expect(report.notes).toEqual([]);
    });

    it('compact JSON and a bare array of lines', () => {
      expect(checkStatement(JSON.stringify(statement)).ok).toBe(true);
      expect(checkStatement(JSON.stringify(statement.lines)).ok).toBe(true);
    });

    it('CSV with CRLF, as exported', () => {
      const csv = statementCsv(statement);
      expect(csv).toContain('\r\n');
      const report = checkStatement(csv);
      expect(report).toMatchObject({ ok: true, format: 'csv', lines: n, firstRevision: 0, lastRevision: n - 1, lastHash });
      expect(report.problems).toEqual([]);
    });

    it('CSV with LF line endings, without the final newline, and with a BOM', () => {
      const csv = statementCsv(statement).replace(/\r\n/g, '\n');
      expect(checkStatement(csv).ok).toBe(true);
      expect(checkStatement(csv.trimEnd()).ok).toBe(true);
      expect(checkStatement(`\uFEFF${csv}`).ok).toBe(true);
    });

    it('an export starting mid-stream (revision 5 on), checked from its anchor', () => {
      const tail = { ...clone(statement), lines: statement.lines.slice(5) };
      for (const text of [asJson(tail), statementCsv(tail)]) {
        const report = checkStatement(text);
        expect(report).toMatchObject({ ok: true, lines: n - 5, firstRevision: 5, lastRevision: n - 1, lastHash });
        expect(report.anchor).toEqual({ kind: 'prev_hash', revision: 5, prevHash: statement.lines[4].hash });
        expect(report.notes.join('\n')).toMatch(/starts mid-stream at revision 5: it could only be checked from that anchor/);
      }
    });

    it('an empty statement', () => {
      const empty = { ...statement, lines: [] };
      expect(checkStatement(asJson(empty))).toMatchObject({ ok: true, lines: 0, problems: [] });
      expect(checkStatement(statementCsv(empty))).toMatchObject({ ok: true, lines: 0, problems: [] });
    });

    it('a page with more to come says so', () => {
      const page = { ...clone(statement), lines: statement.lines.slice(0, 10), next_after_revision: 9 };
      const report = checkStatement(asJson(page));
      expect(report.ok).toBe(true);
      expect(report.notes.join('\n')).toMatch(/next page starts after revision 9/);
    });
  });

  describe('pinpoints the first altered, missing or reordered line', () => {
    it('an altered amount column: ALTERED at that line', () => {
      const k = indexOf(statement, 'FundsFrozen', 3);
      const s = clone(statement);
      s.lines[k].amount = '1.99';
      for (const { text, line } of exportsOf(s)) {
        const report = checkStatement(text);
        expect(report.ok).toBe(false);
        expect(report.problems).toEqual([
          { line: line(k), revision: k, kind: 'ALTERED', message: expect.stringMatching(/^amount is 1\.99 but the event's data says/) },
        ]);
      }
    });

    it('an altered data.amount: ALTERED at that line, through its hash', () => {
      const k = indexOf(statement, 'FrozenFundsDeducted', 2);
      const s = clone(statement);
      s.lines[k].data.amount = '1';
      for (const { text, line } of exportsOf(s)) {
        const report = checkStatement(text);
        expect(report.problems[0]).toEqual({ line: line(k), revision: k, kind: 'ALTERED', message: expect.stringMatching(/does not match its hash/) });
        expect(report.problems).toHaveLength(1);
      }
    });

    it('an altered balance_after: ALTERED at that line, naming the column, and nothing after it', () => {
      const k = indexOf(statement, 'FundsDeposited', 1);
      const s = clone(statement);
      s.lines[k].balance_after = '9999.00';
      s.lines[k].available_after = formatAmount(999900n - BigInt(s.lines[k].frozen_after.replace('.', '')));
      for (const { text, line } of exportsOf(s)) {
        const report = checkStatement(text);
        expect(report.problems).toEqual([
          { line: line(k), revision: k, kind: 'ALTERED', message: expect.stringMatching(/^balance_after is 9999\.00 but the balance before/) },
        ]);
      }
    });

    it('an altered frozen_after or available_after: ALTERED naming the column', () => {
      const k = indexOf(statement, 'FundsFrozen', 5);
      const s = clone(statement);
      s.lines[k].frozen_after = '0.00';
      expect(checkStatement(asJson(s)).problems).toEqual([
        { line: k + 1, revision: k, kind: 'ALTERED', message: expect.stringMatching(/^frozen_after is 0\.00/) },
      ]);
      const t = clone(statement);
      t.lines[k].available_after = '0.01';
      expect(checkStatement(statementCsv(t)).problems).toEqual([
        { line: csv.line(k), revision: k, kind: 'ALTERED', message: expect.stringMatching(/^available_after is 0\.01/) },
      ]);
    });

    it('an altered derived text column (order_no, reason): ALTERED at that line', () => {
      const k = indexOf(statement, 'FrozenFundsReleased', 0);
      const s = clone(statement);
      s.lines[k].reason = 'customer cancelled';
      expect(checkStatement(statementCsv(s)).problems).toEqual([
        { line: csv.line(k), revision: k, kind: 'ALTERED', message: expect.stringMatching(/^reason is/) },
      ]);
      const t = clone(statement);
      t.lines[k - 1].order_no = 'ORD-99999';
      expect(checkStatement(asJson(t)).problems).toEqual([{ line: k, revision: k - 1, kind: 'ALTERED', message: expect.stringMatching(/^order_no is/) }]);
    });

    it('a deleted line: MISSING, reported at the line that followed it', () => {
      const k = indexOf(statement, 'FundsFrozen', 4);
      const s = clone(statement);
      s.lines.splice(k, 1);
      for (const { text, line } of exportsOf(s)) {
        const report = checkStatement(text);
        expect(report.problems).toEqual([
          {
            line: line(k),
            revision: k + 1,
            kind: 'MISSING',
            message: expect.stringMatching(new RegExp(`^1 line missing between revision ${k - 1} and ${k + 1}`)),
          },
        ]);
        expect(report.lines).toBe(n - 1);
      }
    });

    it('three deleted lines in a row: MISSING, counted', () => {
      const s = clone(statement);
      s.lines.splice(10, 3);
      expect(checkStatement(asJson(s)).problems).toEqual([
        { line: 11, revision: 13, kind: 'MISSING', message: expect.stringMatching(/^3 lines missing between revision 9 and 13, .*revisions 10\.\.12/) },
      ]);
    });

    it('a swapped pair: REORDERED at the first of the pair, and nothing else', () => {
      const k = indexOf(statement, 'FundsFrozen', 6);
      const s = clone(statement);
      [s.lines[k], s.lines[k + 1]] = [s.lines[k + 1], s.lines[k]];
      for (const { text, line, names } of exportsOf(s)) {
        const report = checkStatement(text);
        expect(report.problems).toEqual([
          { line: line(k), revision: k + 1, kind: 'REORDERED', message: expect.stringMatching(new RegExp(`^${escape(names(k, k + 1))} are out of order`)) },
        ]);
      }
    });

    it('the first two lines swapped: REORDERED at line 1', () => {
      const s = clone(statement);
      [s.lines[0], s.lines[1]] = [s.lines[1], s.lines[0]];
      const report = checkStatement(statementCsv(s));
      expect(report.problems).toEqual([{ line: 2, revision: 1, kind: 'REORDERED', message: expect.stringMatching(/^lines 2 and 3 are out of order/) }]);
      expect(report.anchor).toEqual({ kind: 'genesis' });
    });

    it('at every position, each kind of tampering is reported first at the right line', () => {
      const misses: string[] = [];
      const expectFirst = (what: string, s: Statement, k: number, kinds: string[]) => {
        for (const { text, line } of exportsOf(s)) {
          const first = checkStatement(text).problems[0];
          if (!first || first.line !== line(k) || !kinds.includes(first.kind)) misses.push(`${what} (${text.slice(0, 1)}): got ${JSON.stringify(first)}`);
        }
      };
      for (let k = 0; k < n; k++) {
        const amount = clone(statement);
        amount.lines[k].amount = '123456.78';
        expectFirst(`amount of line ${k + 1}`, amount, k, ['ALTERED']);
        const data = clone(statement);
        data.lines[k].data.at = '2030-01-01T00:00:00.000Z';
        expectFirst(`data of line ${k + 1}`, data, k, ['ALTERED']);
        const balance = clone(statement);
        balance.lines[k].balance_after = '123456.78';
        expectFirst(`balance_after of line ${k + 1}`, balance, k, ['ALTERED']);
        const link = clone(statement);
        link.lines[k].prev_hash = '1'.repeat(64);
        expectFirst(`prev_hash of line ${k + 1}`, link, k, ['ALTERED', 'BROKEN_LINK']);
        if (k > 0 && k < n - 1) {
          const deleted = clone(statement);
          deleted.lines.splice(k, 1);
          expectFirst(`deleting line ${k + 1}`, deleted, k, ['MISSING']);
        }
        if (k < n - 1) {
          const swapped = clone(statement);
          [swapped.lines[k], swapped.lines[k + 1]] = [swapped.lines[k + 1], swapped.lines[k]];
          expectFirst(`swapping lines ${k + 1} and ${k + 2}`, swapped, k, ['REORDERED']);
        }
      }
      expect(misses).toEqual([]);
    });

    it('a line moved further down: REORDERED where it is missing from', () => {
      const s = clone(statement);
      const [moved] = s.lines.splice(7, 1);
      s.lines.splice(20, 0, moved);
      const report = checkStatement(asJson(s));
      expect(report.problems[0]).toEqual({
        line: 8,
        revision: 8,
        kind: 'REORDERED',
        message: expect.stringMatching(/^lines\[7\] and lines\[20\] are out of order/),
      });
    });

    it('a duplicated line: REORDERED at the copy', () => {
      const s = clone(statement);
      s.lines.splice(9, 0, clone(statement).lines[8]);
      expect(checkStatement(asJson(s)).problems[0]).toEqual({ line: 10, revision: 8, kind: 'REORDERED', message: expect.stringMatching(/repeats lines\[8\]/) });
      expect(checkStatement(statementCsv(s)).problems[0]).toEqual({
        line: 11,
        revision: 8,
        kind: 'REORDERED',
        message: expect.stringMatching(/repeats line 10 /),
      });
    });

    it('an edited prev_hash: ALTERED at that line', () => {
      const k = 14;
      const s = clone(statement);
      s.lines[k].prev_hash = s.lines[k].prev_hash.replace(/^./, (c) => (c === 'a' ? 'b' : 'a'));
      for (const { text, line } of exportsOf(s)) {
        const problem = checkStatement(text).problems[0];
        expect(problem.line).toBe(line(k));
        expect(['ALTERED', 'BROKEN_LINK']).toContain(problem.kind);
      }
    });

    it('a line edited and re-hashed by a forger: BROKEN_LINK at the next line', () => {
      const k = indexOf(statement, 'FundsFrozen', 2);
      const s = clone(statement);
      s.lines[k].data.at = '2025-03-01T08:00:00.000Z';
      s.lines[k].occurred_at = '2025-03-01T08:00:00.000+00:00';
      rehashFrom(s, k, k);
      for (const { text, line, name } of exportsOf(s)) {
        expect(checkStatement(text).problems).toEqual([
          {
            line: line(k + 1),
            revision: k + 1,
            kind: 'BROKEN_LINK',
            message: expect.stringMatching(new RegExp(`is not the hash of ${escape(name(k))} \\(revision ${k}\\)`)),
          },
        ]);
      }
    });

    it('a whole chain recomputed from an altered line still fails on the amounts', () => {
      const k = indexOf(statement, 'FundsDeposited', 1);
      const s = clone(statement);
      s.lines[k].data.amount = '9000000';
      s.lines[k].amount = '90000.00';
      rehashFrom(s, k);
      expect(checkStatement(asJson(s)).problems[0]).toEqual({ line: k + 1, revision: k, kind: 'ALTERED', message: expect.stringMatching(/^balance_after/) });
    });

    it('a first line not linked to the genesis hash: BROKEN_LINK at line 1', () => {
      const s = clone(statement);
      s.lines[0].prev_hash = 'f'.repeat(64);
      rehashFrom(s, 0);
      const report = checkStatement(asJson(s));
      expect(report.problems[0]).toEqual({ line: 1, revision: 0, kind: 'BROKEN_LINK', message: expect.stringMatching(/genesis hash/) });
    });

    it('a mid-stream export with a line removed: MISSING pinpointed', () => {
      const tail = { ...clone(statement), lines: statement.lines.slice(5) };
      tail.lines.splice(10, 1);
      expect(checkStatement(statementCsv(tail)).problems).toEqual([
        { line: 12, revision: 16, kind: 'MISSING', message: expect.stringMatching(/^1 line missing between revision 14 and 16/) },
      ]);
    });

    it('lists later independent problems too, the first one first', () => {
      const s = clone(statement);
      s.lines[4].amount = '7.77';
      s.lines[20].data.orderNo = 'ORD-X';
      expect(checkStatement(asJson(s)).problems.map((p) => [p.line, p.kind])).toEqual([
        [5, 'ALTERED'],
        [21, 'ALTERED'],
      ]);
    });
  });

  describe('names each line as the file shows it', () => {
    it("CSV: the line of the file, which an editor's line numbers show", () => {
      const k = indexOf(statement, 'FundsFrozen', 2);
      const s = clone(statement);
      s.lines[k].amount = '4.44';
      const text = statementCsv(s);
      const [problem] = checkStatement(text).problems;
      expect(text.split('\r\n')[problem.line - 1]).toMatch(new RegExp(`^${k},.*,4\\.44,`));
    });

    it('CSV: a quoted value with a line break counts as the lines it takes', () => {
      const s = clone(statement);
      const k = indexOf(s, 'FrozenFundsReleased', 0);
      s.lines[k].reason = s.lines[k].data.reason = 'refused:\nno stock';
      rehashFrom(s, k);
      s.lines[k + 3].amount = '4.44';
      const text = statementCsv(s);
      const [problem] = checkStatement(text).problems;
      expect(problem).toMatchObject({ line: k + 6, revision: k + 3, kind: 'ALTERED' });
      expect(text.split('\n')[problem.line - 1]).toMatch(new RegExp(`^${k + 3},`));
    });

    it("JSON: the service's whole reply is read as it came, and lines are named by their place in data.lines", () => {
      const s = clone(statement);
      s.lines[6].amount = '5.00';
      const reply = JSON.stringify({ success: true, code: 'OK', data: s });
      const report = checkStatement(reply);
      expect(report).toMatchObject({ format: 'json', linesAt: 'data.lines', lines: n });
      expect(report.problems).toEqual([{ line: 7, revision: 6, kind: 'ALTERED', message: expect.stringMatching(/^amount is 5\.00/) }]);
      expect(formatReport(report)[0]).toMatch(/^data\.lines\[6\] \(revision 6\): ALTERED: /);
      expect(checkStatement(JSON.stringify({ success: true, code: 'OK', data: statement })).ok).toBe(true);
    });

    it('JSON: a refusal from the service says so', () => {
      const report = checkStatement(JSON.stringify({ success: false, code: 'WALLET_NOT_FOUND', message: 'No wallet for merchant m-1' }));
      expect(report.problems).toEqual([
        { line: 0, kind: 'MALFORMED', message: "the file is the service's refusal, not a statement: WALLET_NOT_FOUND: No wallet for merchant m-1" },
      ]);
    });
  });

  describe('MALFORMED', () => {
    const rowsOf = (csv: string) => csv.split('\r\n');

    it('a truncated CSV row (cut inside the data JSON)', () => {
      const rows = rowsOf(statementCsv(statement));
      const k = 9; // rows[9] is line 10 of the file
      rows[k] = rows[k].slice(0, Math.floor(rows[k].length / 2));
      const report = checkStatement(rows.join('\r\n'));
      expect(report.problems[0]).toEqual({ line: k + 1, revision: k - 1, kind: 'MALFORMED', message: expect.any(String) });
      expect(report.problems).toHaveLength(1);
      expect(report.lines).toBe(n);
    });

    it('a CSV row missing its last columns', () => {
      const rows = rowsOf(statementCsv(statement));
      rows[3] = rows[3].slice(0, rows[3].lastIndexOf(','));
      expect(checkStatement(rows.join('\n')).problems[0]).toEqual({
        line: 4,
        revision: 2,
        kind: 'MALFORMED',
        message: 'the row has 14 of 15 columns (truncated or damaged)',
      });
    });

    it('bad JSON in the data column, a bad amount, a JSON line without a column', () => {
      const rows = rowsOf(statementCsv(statement));
      rows[6] = rows[6].replace('"{', '"{x');
      expect(checkStatement(rows.join('\r\n')).problems[0]).toMatchObject({ line: 7, kind: 'MALFORMED' });

      const s = clone(statement);
      s.lines[4].balance_after = '12.5';
      expect(checkStatement(asJson(s)).problems[0]).toMatchObject({ line: 5, revision: 4, kind: 'MALFORMED', message: expect.stringMatching(/balance_after/) });

      const t = clone(statement) as unknown as { lines: Record<string, unknown>[] };
      delete t.lines[2].hash;
      expect(checkStatement(JSON.stringify(t)).problems[0]).toMatchObject({ line: 3, kind: 'MALFORMED', message: 'missing column hash' });
    });

    it('not a statement at all', () => {
      expect(checkStatement('').problems[0]).toMatchObject({ line: 0, kind: 'MALFORMED' });
      expect(checkStatement('a,b,c\n1,2,3\n').problems[0]).toMatchObject({ line: 0, kind: 'MALFORMED', message: expect.stringMatching(/header row/) });
      expect(checkStatement('{"lines": 3}').problems[0]).toMatchObject({ line: 0, kind: 'MALFORMED' });
      expect(checkStatement('{not json').problems[0]).toMatchObject({ line: 0, kind: 'MALFORMED', message: expect.stringMatching(/not valid JSON/) });
    });
  });

  it('reports progress on long statements', () => {
    const big = buildStatement(5_000);
    const seen: number[] = [];
    const report = checkStatement(statementCsv(big), { onProgress: (checked) => seen.push(checked) });
    expect(report.ok).toBe(true);
    expect(report.lines).toBe(big.lines.length);
    expect(big.lines.length).toBeGreaterThan(10_000);
    expect(seen[0]).toBe(10_000);
    expect(seen[seen.length - 1]).toBe(big.lines.length);
  });
});

describe('verify-statement CLI', () => {
  const root = resolve(__dirname, '../..');
  const dir = mkdtempSync(join(tmpdir(), 'verify-statement-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const run = (...args: string[]) =>
    spawnSync(process.execPath, [...TYPESCRIPT_LOADER, 'src/auditing/verify-statement.cli.ts', ...args], {
      cwd: root,
      encoding: 'utf8',
      timeout: 60_000,
    });
  const statement = buildStatement();
  const n = statement.lines.length;

  it('OK: exit 0, one summary line', () => {
    const file = join(dir, 'ok.csv');
    writeFileSync(file, statementCsv(statement));
    const result = run(file);
    expect(result.status).toBe(0);
    expect(result.stdout).toBe(`OK: ${n} lines, revisions 0..${n - 1}, chain intact, last hash ${statement.lines[n - 1].hash}\n`);
  });

  it('a relative FILE is taken from the directory npm was run in (INIT_CWD); a missing one is named by its absolute path', () => {
    writeFileSync(join(dir, 'relative.csv'), statementCsv(statement));
    const from = (initCwd: string, file: string) =>
      spawnSync(process.execPath, [...TYPESCRIPT_LOADER, 'src/auditing/verify-statement.cli.ts', file], {
        cwd: root,
        env: { ...process.env, INIT_CWD: initCwd },
        encoding: 'utf8',
        timeout: 60_000,
      });
    const found = from(dir, 'relative.csv');
    expect(found.status).toBe(0);
    expect(found.stdout).toMatch(/^OK: /);

    const missing = from(dir, 'nowhere.csv');
    expect(missing.status).toBe(2);
    expect(missing.stderr).toContain(`verify-statement: cannot read ${join(dir, 'nowhere.csv')}: no such file`);
  });

  it('OK from stdin, mid-stream, with the anchor noted', () => {
    const tail = { ...statement, lines: statement.lines.slice(5) };
    const result = spawnSync(process.execPath, [...TYPESCRIPT_LOADER, 'src/auditing/verify-statement.cli.ts', '-'], {
      cwd: root,
      encoding: 'utf8',
      input: asJson(tail),
      timeout: 60_000,
    });
    expect(result.status).toBe(0);
    expect(result.stdout).toMatch(
      new RegExp(`^OK: ${n - 5} lines, revisions 5\\.\\.${n - 1}, chain intact, last hash [0-9a-f]{64}\nnote: the export starts mid-stream at revision 5`),
    );
  });

  it('an altered line: exit 1, names the line', () => {
    const s = clone(statement);
    s.lines[6].amount = '5.00';
    const file = join(dir, 'altered.json');
    writeFileSync(file, asJson(s));
    const result = run(file);
    expect(result.status).toBe(1);
    const out = result.stdout.split('\n');
    expect(out[0]).toMatch(/^lines\[6\] \(revision 6\): ALTERED: amount is 5\.00 but the event's data says /);
    expect(out[1]).toBe(`FAILED: 1 problem in ${n} lines; the first is at lines[6] (revision 6)`);
  });

  it('a deleted line: exit 1, MISSING', () => {
    const s = clone(statement);
    s.lines.splice(12, 1);
    const file = join(dir, 'missing.csv');
    writeFileSync(file, statementCsv(s));
    const result = run(file);
    expect(result.status).toBe(1);
    expect(result.stdout).toMatch(/^line 14 \(revision 13\): MISSING: 1 line missing between revision 11 and 13/);
  });

  it('usage errors and unreadable files: exit 2', () => {
    const none = run();
    expect(none.status).toBe(2);
    expect(none.stderr).toMatch(/^usage: npm run verify-statement -- FILE/);
    expect(run('a', 'b').status).toBe(2);
    const missing = run(join(dir, 'no-such-file.json'));
    expect(missing.status).toBe(2);
    expect(missing.stderr).toMatch(/cannot read .*no-such-file\.json/);
  });

  it('shows progress on stderr for files over 10,000 lines', () => {
    const big = buildStatement(5_000);
    const file = join(dir, 'big.csv');
    writeFileSync(file, statementCsv(big));
    const result = run(file);
    expect(result.status).toBe(0);
    expect(result.stderr).toContain(`verify-statement: checked 10000 of ${big.lines.length} lines`);
    expect(result.stdout).toMatch(new RegExp(`^OK: ${big.lines.length} lines`));
    expect(run(join(dir, 'ok.csv')).stderr).toBe('');
  });
});
