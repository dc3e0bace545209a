import { ApiError } from '../../infrastructure/http/api-error';
import { choice, instant, integer, position } from './query-readers';
import { QuerySpec, readQueryString } from './query-string';

const SPEC = { limit: integer(1, 200), at: instant, position, format: choice(['json', 'csv'] as const) };

function refusal(search: string, spec: QuerySpec = SPEC) {
  try {
    readQueryString(search, spec);
  } catch (error) {
    if (error instanceof ApiError) return { status: error.status, code: error.code, field: error.field };
    throw error;
  }
  throw new Error(`${search} was accepted`);
}

describe('readQueryString', () => {
  it('reads each parameter given, and leaves out those that are not', () => {
    expect(readQueryString('limit=5&format=csv', SPEC)).toEqual({ limit: 5, format: 'csv' });
    expect(readQueryString('', SPEC)).toEqual({});
    expect(readQueryString('&&limit=5&', SPEC)).toEqual({ limit: 5 });
  });

  it('decodes as a form does: %XX as UTF-8, + as a space, read back as the + of a pasted offset', () => {
    const at = new Date('2026-11-22T10:00:00Z');
    expect(readQueryString('at=2026-11-22T10:00:00+00:00', SPEC)).toEqual({ at });
    expect(readQueryString('at=2026-11-22T10%3A00%3A00%2B00%3A00', SPEC)).toEqual({ at });
    expect(readQueryString('li%6Dit=7', SPEC)).toEqual({ limit: 7 });
  });

  it('reads positions up to the largest a store holds', () => {
    expect(readQueryString('position=9223372036854775807/0', SPEC)).toEqual({ position: { commit: 2n ** 63n - 1n, prepare: 0n } });
  });

  it.each([
    ['an unknown parameter', 'limt=5', 'limt'],
    ['a parameter twice', 'limit=5&limit=5', 'limit'],
    ['a parameter twice, once empty', 'limit=5&limit', 'limit'],
    ['an empty value', 'limit=', 'limit'],
    ['a bare name', 'limit', 'limit'],
    ['an array', 'limit[]=5', 'limit'],
    ['an object', 'limit[x]=5', 'limit'],
    ['an encoded array', 'limit%5B%5D=5', 'limit'],
    ['a value that is not UTF-8', 'format=%ED%A0%80', 'format'],
    ['a broken escape', 'format=csv%E', 'format'],
    ['a name that is not UTF-8', '%FF=1', '%FF'],
    ['a NUL', 'format=csv%00', 'format'],
    ['a line break', 'format=csv%0A', 'format'],
    ['a value over 1024 characters', `format=${'c'.repeat(1025)}`, 'format'],
    ['an integer beyond 64 bits', 'limit=18446744073709551616', 'limit'],
    ['a negative integer', 'limit=-1', 'limit'],
    ['a position beyond 64 bits', 'position=18446744073709551616/0', 'position'],
    ['a position beyond a signed 64-bit integer', 'position=0/9223372036854775808', 'position'],
    ['a negative position', 'position=-1/-1', 'position'],
  ])('refuses %s with 422 naming the parameter', (_what, search, field) => {
    expect(refusal(search)).toEqual({ status: 422, code: 'VALIDATION_FAILED', field });
  });

  it('refuses every parameter on a route that takes none', () => {
    expect(refusal('a=1', {})).toEqual({ status: 422, code: 'VALIDATION_FAILED', field: 'a' });
    expect(readQueryString('', {})).toEqual({});
  });
});
