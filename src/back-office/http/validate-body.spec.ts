import 'reflect-metadata';
import { IsIn } from 'class-validator';
import { ApiError } from '../../infrastructure/http/api-error';
import { validateBody } from './validate-body';
import { IsDisplayName, ipOrCidrProblem, Optional } from './validators';

class ExampleDto {
  @IsDisplayName()
  name!: string;

  @IsIn(['a', 'b'])
  kind!: string;

  @Optional()
  @IsDisplayName()
  note?: string;
}

async function outcome(body: unknown): Promise<[number, string, string?] | 'ok'> {
  try {
    await validateBody(ExampleDto, body);
    return 'ok';
  } catch (error) {
    if (!(error instanceof ApiError)) throw error;
    return error.field === undefined ? [error.status, error.code] : [error.status, error.code, error.field];
  }
}

describe('validateBody', () => {
  it.each<[string, unknown, [number, string, string?] | 'ok']>([
    ['a valid body', { name: 'x', kind: 'a' }, 'ok'],
    ['a valid body with the optional field', { name: 'x', kind: 'a', note: 'n' }, 'ok'],
    ['an array', [], [400, 'INVALID_JSON']],
    ['null', null, [400, 'INVALID_JSON']],
    ['a string', 'x', [400, 'INVALID_JSON']],
    ['nothing', undefined, [400, 'INVALID_JSON']],
    ['the first missing field, in declaration order', {}, [400, 'MISSING_REQUIRED_FIELD', 'name']],
    ['a missing field before a wrong one', { name: 5 }, [400, 'MISSING_REQUIRED_FIELD', 'kind']],
    ['a missing field before an unknown one', { kind: 'a', nme: 'x' }, [400, 'MISSING_REQUIRED_FIELD', 'name']],
    ['null for a required field', { name: null, kind: 'a' }, [422, 'VALIDATION_FAILED', 'name']],
    ['null for an optional field', { name: 'x', kind: 'a', note: null }, [422, 'VALIDATION_FAILED', 'note']],
    ['a wrong field before an unknown one', { name: 'x', kind: 'c', extra: 1 }, [422, 'VALIDATION_FAILED', 'kind']],
    ['an unknown field', { name: 'x', kind: 'a', extra: 1 }, [422, 'VALIDATION_FAILED', 'extra']],
    ['a lone surrogate', { name: 'x\ud800', kind: 'a' }, [422, 'VALIDATION_FAILED', 'name']],
    ['NUL in an optional field', { name: 'x', kind: 'a', note: '\u0000' }, [422, 'VALIDATION_FAILED', 'note']],
    ['a missing field before a lone surrogate', { name: '\ud800' }, [400, 'MISSING_REQUIRED_FIELD', 'kind']],
    ['a wrong field before a later lone surrogate', { name: 5, kind: '\ud800' }, [422, 'VALIDATION_FAILED', 'name']],
    ['a lone surrogate before a later wrong field', { name: '\udc00', kind: 'c' }, [422, 'VALIDATION_FAILED', 'name']],
    ['a lone surrogate inside a value', { name: 'x', kind: 'a', note: ['ok', { k: '\ud800' }] }, [422, 'VALIDATION_FAILED', 'note.1.k']],
    ['a "constructor" field', JSON.parse('{"name": "x", "kind": "a", "constructor": 1}'), [422, 'VALIDATION_FAILED', 'constructor']],
    ['a "__proto__" field', JSON.parse('{"name": "x", "kind": "a", "__proto__": {"kind": "b"}}'), [422, 'VALIDATION_FAILED', '__proto__']],
  ])('%s', async (_name, body, expected) => {
    expect(await outcome(body)).toEqual(expected);
  });

  it('returns an instance with exactly the fields given', async () => {
    const dto = await validateBody(ExampleDto, { name: 'x', kind: 'b' });
    expect(dto).toBeInstanceOf(ExampleDto);
    expect(Object.keys(dto)).toEqual(['name', 'kind']);
  });

  it('reports the first constraint as written: the type before the length', async () => {
    await expect(validateBody(ExampleDto, { name: 5, kind: 'a' })).rejects.toMatchObject({ message: 'name must be a string' });
  });
});

describe('ipOrCidrProblem', () => {
  it.each(['127.0.0.1', '10.0.0.0/8', '0.0.0.0/0', '255.255.255.255/32', '::1', '2001:db8::/32', '::/0', 'fe80::/128', '::ffff:10.0.0.1'])(
    'accepts %s',
    (entry) => expect(ipOrCidrProblem(entry)).toBeUndefined(),
  );

  it.each([
    '10.0.0.0/33',
    '2001:db8::/129',
    '10.0.0.0/-1',
    '10.0.0.0/08',
    '10.0.0.0/',
    '10.0.0.0/8/8',
    '/8',
    '300.1.1.1',
    '010.0.0.1',
    'fe80::1%eth0',
    'localhost',
    ' 10.0.0.1',
    '',
    5,
    null,
  ])('refuses %p', (entry) => expect(ipOrCidrProblem(entry)).toEqual(expect.any(String)));
});
