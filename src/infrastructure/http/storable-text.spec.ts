import { unstorableTextPath } from './storable-text';

describe('unstorableTextPath', () => {
  it.each<[string, unknown, string | undefined]>([
    ['plain text', 'Acme Games', undefined],
    ['a surrogate pair (an emoji)', '🎮', undefined],
    ['not text at all', 5, undefined],
    ['a lone high surrogate', 'a\ud800', 'f'],
    ['a lone low surrogate', '\udfffa', 'f'],
    ['two high surrogates', '\ud83d\ud83d', 'f'],
    ['NUL', 'a\u0000b', 'f'],
    ['an array entry', ['ok', '\u0000'], 'f.1'],
    ['a nested value', { a: { b: ['x', { c: '\ud800' }] } }, 'f.a.b.1.c'],
    ['a key', { ok: 1, ['\ud800']: 1 }, 'f.\ud800'],
    ["an object's bad key before its bad values", { a: '\u0000', ['b\u0000']: 1 }, 'f.b\u0000'],
    ['the first of two values', { a: ['\ud800'], b: '\u0000' }, 'f.a.0'],
  ])('%s', (_name, value, expected) => {
    expect(unstorableTextPath(value, 'f')).toBe(expected);
  });

  it('walks a value nested far deeper than the call stack allows', () => {
    const deep = JSON.parse(`${'['.repeat(100_000)}"\\u0000"${']'.repeat(100_000)}`);
    expect(unstorableTextPath(deep, 'f')).toBe(`f${'.0'.repeat(100_000)}`);
  });
});
