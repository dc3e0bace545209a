import { parseReport, ReportLineError } from './report-csv';

const HEADER = 'order_no,status,amount,currency,reference,completed_at';
const csv = (...lines: string[]) => Buffer.from(lines.join('\r\n'));

describe('parseReport: an upstream transaction report, line by line', () => {
  it('reads the lines of a well-formed report', () => {
    const parsed = parseReport(csv(HEADER, 'T1,delivered,1.20,USD,REF-1,2026-11-22T10:04:05.123+00:00', 'T2,failed,25.00,EUR,,2026-11-22T10:04:06Z', ''));
    expect(parsed.errors).toEqual([]);
    expect(parsed.lines).toEqual([
      { line: 2, orderNo: 'T1', status: 'delivered', amount: 120n, currency: 'USD', reference: 'REF-1', completedAt: new Date('2026-11-22T10:04:05.123Z') },
      { line: 3, orderNo: 'T2', status: 'failed', amount: 2500n, currency: 'EUR', reference: '', completedAt: new Date('2026-11-22T10:04:06Z') },
    ]);
  });

  it('takes the columns in any order, ignores others, LF line ends, a byte-order mark, quoted fields and blank lines', () => {
    const text =
      `\uFEFFCompleted_At,status,Order_No,note,amount,currency,reference\n2026-11-22T10:00:00+01:00,delivered,T1,"a, b",1.20,USD,"R ""1"""\n\nx,failed,T2,"two\nlines",0.05,USD,\n`.replace(
        'x',
        '2026-11-22T09:00:00+00:00',
      );
    const parsed = parseReport(Buffer.from(text));
    expect(parsed.errors).toEqual([]);
    expect(parsed.lines.map((l) => [l.line, l.orderNo, l.reference, l.amount, l.completedAt.toISOString()])).toEqual([
      [2, 'T1', 'R "1"', 120n, '2026-11-22T09:00:00.000Z'],
      [4, 'T2', '', 5n, '2026-11-22T09:00:00.000Z'],
    ]);
  });

  it('a report with a header only has no lines and no errors', () => {
    expect(parseReport(csv(HEADER, ''))).toEqual({ lines: [], errors: [] });
  });

  type Case = [string, string[], ReportLineError[]];
  it.each<Case>([
    ['an empty file', [''], [{ line: 1, column: null, message: expect.stringContaining('the report is empty') }]],
    [
      'a missing column',
      ['order_no,status,amount,reference,completed_at', 'T1,delivered,1.20,R,2026-11-22T10:00:00Z'],
      [{ line: 1, column: 'currency', message: 'missing column currency' }],
    ],
    ['a column twice', [`${HEADER},status`], [{ line: 1, column: 'status', message: 'column status appears more than once' }]],
    [
      'a bad status',
      [HEADER, 'T1,pending,1.20,USD,,2026-11-22T10:00:00Z'],
      [{ line: 2, column: 'status', message: 'status must be delivered or failed, not "pending"' }],
    ],
    [
      'an amount without two decimals',
      [HEADER, 'T1,delivered,1.2,USD,,2026-11-22T10:00:00Z'],
      [{ line: 2, column: 'amount', message: 'amount must be a number with exactly two decimals, such as 12.50, not "1.2"' }],
    ],
    [
      'a negative amount',
      [HEADER, 'T1,delivered,-1.20,USD,,2026-11-22T10:00:00Z'],
      [{ line: 2, column: 'amount', message: expect.stringContaining('"-1.20"') }],
    ],
    [
      'a bad currency',
      [HEADER, 'T1,delivered,1.20,usd,,2026-11-22T10:00:00Z'],
      [{ line: 2, column: 'currency', message: 'currency must be three capital letters, such as USD, not "usd"' }],
    ],
    [
      'an instant without an offset',
      [HEADER, 'T1,delivered,1.20,USD,,2026-11-22T10:00:00'],
      [{ line: 2, column: 'completed_at', message: expect.stringContaining('must be an ISO 8601 time with an offset') }],
    ],
    ['an empty order_no', [HEADER, ',delivered,1.20,USD,,2026-11-22T10:00:00Z'], [{ line: 2, column: 'order_no', message: expect.stringContaining('not ""') }]],
    [
      'a duplicate order_no',
      [HEADER, 'T1,delivered,1.20,USD,,2026-11-22T10:00:00Z', 'T1,failed,1.20,USD,,2026-11-22T10:00:01Z'],
      [{ line: 3, column: 'order_no', message: 'duplicate order_no T1: already on line 2' }],
    ],
    ['too few fields', [HEADER, 'T1,delivered,1.20'], [{ line: 2, column: null, message: 'expected 6 fields as in the header, found 3' }]],
    [
      'a stray quote',
      [HEADER, 'T1,deli"vered,1.20,USD,,2026-11-22T10:00:00Z'],
      [{ line: 2, column: null, message: 'a quote inside a field that does not start with one' }],
    ],
    [
      'a quoted field never closed',
      [HEADER, 'T1,"delivered,1.20,USD,,2026-11-22T10:00:00Z'],
      [{ line: 2, column: null, message: 'a quoted field is never closed' }],
    ],
    [
      'a control character in the reference',
      [HEADER, 'T1,delivered,1.20,USD,a\u0007b,2026-11-22T10:00:00Z'],
      [{ line: 2, column: 'reference', message: expect.stringContaining('without control characters') }],
    ],
  ])('%s', (_name, lines, errors) => {
    const parsed = parseReport(csv(...lines));
    expect(parsed.errors).toEqual(errors);
    expect(parsed.lines).toEqual([]);
  });

  it('reports every problem of every line, and keeps no line when there is one', () => {
    const parsed = parseReport(
      csv(HEADER, 'T1,delivered,1.20,USD,,2026-11-22T10:00:00Z', 'T2,maybe,1,us,,yesterday', 'T3,failed,2.00,USD,,2026-11-22T10:00:00Z'),
    );
    expect(parsed.errors.map((e) => [e.line, e.column])).toEqual([
      [3, 'status'],
      [3, 'amount'],
      [3, 'currency'],
      [3, 'completed_at'],
    ]);
    expect(parsed.lines).toEqual([]);
  });

  it('names the first line that is not UTF-8', () => {
    const bytes = Buffer.concat([Buffer.from(`${HEADER}\nT1,delivered,1.20,USD,`), Buffer.from([0xff, 0xfe]), Buffer.from(',2026-11-22T10:00:00Z\n')]);
    expect(parseReport(bytes)).toEqual({ lines: [], errors: [{ line: 2, column: null, message: 'the line is not UTF-8 text' }] });
  });

  it('quotes a long bad value short', () => {
    const parsed = parseReport(csv(HEADER, `T1,${'x'.repeat(100)},1.20,USD,,2026-11-22T10:00:00Z`));
    expect(parsed.errors[0].message).toBe(`status must be delivered or failed, not "${'x'.repeat(40)}..."`);
  });
});
