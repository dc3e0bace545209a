import { describeJsonSyntaxError, findJsonSyntaxError } from './json-syntax';

const validJson = (text: string) => {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
};

describe('findJsonSyntaxError', () => {
  it.each<[string, string, string]>([
    ['a missing value', '{"a":}', 'at line 1, column 6: expected a value, found "}"'],
    ['a cut-off body', '{"a":1', 'at line 1, column 7: expected , or }, the text ends there'],
    ['a missing colon', '{"a" 1}', 'at line 1, column 6: expected :, found "1"'],
    ['a trailing comma', '{"a":1,}', 'at line 1, column 8: expected a "key" in double quotes, found "}"'],
    ['a single-quoted key', "{'a':1}", 'at line 1, column 2: expected a "key" or }, found "\'"'],
    ['text after the value', '{"a":1}}', 'at line 1, column 8: expected nothing more, found "}"'],
    ['a misspelt literal', '{"a":tru}', 'at line 1, column 9: expected "true", found "}"'],
    [
      'a line break inside a string',
      '{"a":"x\ny"}',
      'at line 1, column 8: expected no control character inside a string (write a line break as \\n), found "\\n"',
    ],
    ['a bad escape', '{"a":"\\x"}', 'at line 1, column 8: expected an escape: \\" \\\\ \\/ \\b \\f \\n \\r \\t or \\u and four hex digits, found "x"'],
    ['a number without fraction digits', '[1.]', 'at line 1, column 4: expected a digit after the decimal point, found "]"'],
    ['a later line', '{\n  "a": 1,\n  "b": [1 2]\n}', 'at line 3, column 11: expected , or ], found "2"'],
    ['an emoji before the error counts as one column', '["🎮" x]', 'at line 1, column 6: expected , or ], found "x"'],
    ['nothing at all', '   ', 'at line 1, column 4: expected a value, the text ends there'],
  ])('%s', (_name, text, message) => {
    expect(validJson(text)).toBe(false);
    expect(describeJsonSyntaxError(findJsonSyntaxError(text)!)).toBe(message);
  });

  it('finds nothing wrong in valid JSON', () => {
    for (const text of [
      '{}',
      '[]',
      ' 0 ',
      '-0.5e+3',
      '"\\u00e9\\n"',
      'null',
      '{"a":[true,false,null,{"b":"c"}],"d":-1E-2}',
      `${'['.repeat(100_000)}${']'.repeat(100_000)}`,
    ]) {
      expect(findJsonSyntaxError(text)).toBeUndefined();
    }
  });

  it('agrees with JSON.parse on thousands of damaged documents', () => {
    const base = '{"out_trade_no":"A-1","n":[1,-2.5e3,0.25,true,false,null],"o":{"s":"\\u00e9\\"x\\\\"}}';
    const pieces = ['{', '}', '[', ']', ',', ':', '"', '\\', '-', '.', 'e', '0', '1', ' ', '\n', 't', 'n', 'x', '\u0001'];
    let seed = 7;
    const random = (n: number) => ((seed = (seed * 1103515245 + 12345) % 2 ** 31), seed % n);
    const disagreements: string[] = [];
    for (let round = 0; round < 5000; round++) {
      let text = base;
      for (let edits = 1 + random(3); edits > 0; edits--) {
        const at = random(text.length + 1);
        const kind = random(3);
        const piece = pieces[random(pieces.length)];
        text =
          kind === 0
            ? text.slice(0, at) + piece + text.slice(at)
            : kind === 1
              ? text.slice(0, at) + text.slice(at + 1)
              : text.slice(0, at) + piece + text.slice(at + 1);
      }
      if (validJson(text) !== (findJsonSyntaxError(text) === undefined)) disagreements.push(JSON.stringify(text));
    }
    expect(disagreements).toEqual([]);
  });
});
