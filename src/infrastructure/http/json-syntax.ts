/**
 * Where JSON text stops being JSON, for an error message a person can act on.
 * JSON.parse says it only in words that change between Node versions, and
 * some of its messages quote the whole text back. This scanner follows the
 * grammar (RFC 8259) with a stack rather than recursion, since a 64 KiB body
 * can nest tens of thousands of levels deep, and is only run on text that
 * JSON.parse has already refused.
 */
export interface JsonSyntaxError {
  /** 1-based line and column (in characters) of the first character that cannot be JSON, or of the end. */
  line: number;
  column: number;
  expected: string;
  /** The character found there, or undefined at the end of the text. */
  found?: string;
}

const WHITESPACE = /[ \t\n\r]*/y;
const STRING_BODY = /(?:[^"\\\u0000-\u001f]|\\["\\/bfnrt]|\\u[0-9a-fA-F]{4})*/y;

type Expect = 'value' | 'value or ]' | 'key or }' | 'key' | ':' | ', or ]' | ', or }' | 'end';

const EXPECTED: Record<Expect, string> = {
  value: 'a value',
  'value or ]': 'a value or ]',
  'key or }': 'a "key" or }',
  key: 'a "key" in double quotes',
  ':': ':',
  ', or ]': ', or ]',
  ', or }': ', or }',
  end: 'nothing more',
};

/** The first syntax error in `text`, or undefined when it is valid JSON. */
export function findJsonSyntaxError(text: string): JsonSyntaxError | undefined {
  const containers: ('{' | '[')[] = [];
  let expect: Expect = 'value';
  let i = 0;
  const fail = (at: number, expected: string = EXPECTED[expect]) => locate(text, at, expected);
  /** After a value: what its container (or the end of the text) wants next. */
  const afterValue = (): Expect => (containers.length === 0 ? 'end' : containers[containers.length - 1] === '[' ? ', or ]' : ', or }');

  for (;;) {
    WHITESPACE.lastIndex = i;
    WHITESPACE.exec(text);
    i = WHITESPACE.lastIndex;
    const c = text[i];
    if (expect === 'end') return c === undefined ? undefined : fail(i);
    if (c === undefined) return fail(i);

    if (expect === ':') {
      if (c !== ':') return fail(i);
      i++;
      expect = 'value';
    } else if (expect === ', or ]' || expect === ', or }') {
      const closer: ']' | '}' = expect === ', or ]' ? ']' : '}';
      if (c === ',') {
        i++;
        expect = closer === ']' ? 'value' : 'key';
      } else if (c === closer) {
        i++;
        containers.pop();
        expect = afterValue();
      } else {
        return fail(i);
      }
    } else if (expect === 'key' || expect === 'key or }') {
      if (c === '}' && expect === 'key or }') {
        i++;
        containers.pop();
        expect = afterValue();
      } else if (c === '"') {
        const end = stringEnd(text, i);
        if (typeof end !== 'number') return fail(end.at, end.expected);
        i = end;
        expect = ':';
      } else {
        return fail(i);
      }
    } else {
      // A value, or the end of an empty array.
      if (c === ']' && expect === 'value or ]') {
        i++;
        containers.pop();
        expect = afterValue();
      } else if (c === '{' || c === '[') {
        containers.push(c);
        i++;
        expect = c === '{' ? 'key or }' : 'value or ]';
      } else if (c === '"') {
        const end = stringEnd(text, i);
        if (typeof end !== 'number') return fail(end.at, end.expected);
        i = end;
        expect = afterValue();
      } else if (c === '-' || isDigit(c)) {
        const end = numberEnd(text, i);
        if (typeof end !== 'number') return fail(end.at, end.expected);
        i = end;
        expect = afterValue();
      } else {
        const word = ['true', 'false', 'null'].find((w) => w[0] === c);
        if (!word) return fail(i);
        for (let k = 1; k < word.length; k++) if (text[i + k] !== word[k]) return fail(i + k, `"${word}"`);
        i += word.length;
        expect = afterValue();
      }
    }
  }
}

const isDigit = (c: string | undefined) => c !== undefined && c >= '0' && c <= '9';

/** The index after the number that starts at `start` (-0.5e+3), or where a digit is missing. */
function numberEnd(text: string, start: number): number | { at: number; expected: string } {
  let i = start;
  const digits = () => {
    if (!isDigit(text[i])) return false;
    while (isDigit(text[i])) i++;
    return true;
  };
  if (text[i] === '-') i++;
  if (text[i] === '0') i++;
  else if (!digits()) return { at: i, expected: 'a digit' };
  if (text[i] === '.') {
    i++;
    if (!digits()) return { at: i, expected: 'a digit after the decimal point' };
  }
  if (text[i] === 'e' || text[i] === 'E') {
    i++;
    if (text[i] === '+' || text[i] === '-') i++;
    if (!digits()) return { at: i, expected: 'a digit in the exponent' };
  }
  return i;
}

/** The index after the string that opens at `start`, or where and why it breaks. */
function stringEnd(text: string, start: number): number | { at: number; expected: string } {
  STRING_BODY.lastIndex = start + 1;
  STRING_BODY.exec(text);
  const at = STRING_BODY.lastIndex;
  const c = text[at];
  if (c === '"') return at + 1;
  if (c === undefined) return { at, expected: 'the closing "' };
  if (c === '\\') return { at: at + 1, expected: 'an escape: \\" \\\\ \\/ \\b \\f \\n \\r \\t or \\u and four hex digits' };
  return { at, expected: 'no control character inside a string (write a line break as \\n)' };
}

function locate(text: string, at: number, expected: string): JsonSyntaxError {
  const before = text.slice(0, at);
  const lineStart = before.lastIndexOf('\n') + 1;
  const found = text[at] === undefined ? undefined : String.fromCodePoint(text.codePointAt(at)!);
  return { line: before.split('\n').length, column: [...before.slice(lineStart)].length + 1, expected, found };
}

/** "at line 1, column 7: expected a value, found }" */
export function describeJsonSyntaxError(error: JsonSyntaxError): string {
  const found = error.found === undefined ? 'the text ends there' : `found ${JSON.stringify(error.found)}`;
  return `at line ${error.line}, column ${error.column}: expected ${error.expected}, ${found}`;
}
