import { csvField, spreadsheetCell, spreadsheetRow } from './spreadsheet-csv';

describe('spreadsheetCell: OWASP CSV-injection rule, then RFC 4180 quoting', () => {
  it.each([
    ['plain text', 'Acme Games', 'Acme Games'],
    ['an amount', '12.50', '12.50'],
    ['empty', '', ''],
    ['a formula', '=1+2', "'=1+2"],
    ['a HYPERLINK formula with a comma and quotes', '=HYPERLINK("http://x.example","click")', `"'=HYPERLINK(""http://x.example"",""click"")"`],
    ['a plus', '+41 22', "'+41 22"],
    ['a minus', '-2+3', "'-2+3"],
    ['an at sign', '@SUM(A1:A2)', "'@SUM(A1:A2)"],
    ['a leading tab', '\t=1', "'\t=1"],
    ['a leading carriage return (quoted: a line break)', '\r=1', `"'\r=1"`],
    ['a formula sign inside the text only', 'a=b', 'a=b'],
    ['a comma', 'a,b', '"a,b"'],
    ['a quote', 'say "hi"', '"say ""hi"""'],
    ['a line break', 'one\ntwo', '"one\ntwo"'],
    ['an apostrophe already there', "'=x", "'=x"],
  ])('%s', (_name, given, written) => {
    expect(spreadsheetCell(given)).toBe(written);
  });

  it('writes null and undefined as empty cells and numbers as text', () => {
    expect([spreadsheetCell(null), spreadsheetCell(undefined), spreadsheetCell(7), spreadsheetCell(-1)]).toEqual(['', '', '7', "'-1"]);
  });

  it('a row is the cells joined by commas, ended with CRLF', () => {
    expect(spreadsheetRow(['a', '=b', null, 'c,d'])).toBe(`a,'=b,,"c,d"\r\n`);
  });

  it('csvField quotes without neutralising', () => {
    expect([csvField('=1'), csvField('a,b'), csvField('x')]).toEqual(['=1', '"a,b"', 'x']);
  });
});
