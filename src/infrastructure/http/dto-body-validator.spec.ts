import 'reflect-metadata';
import { IsIn, IsString, MaxLength } from 'class-validator';
import { ApiError } from './api-error';
import { Optional } from './field-rules';
import { BodyRules, validateBody } from './dto-body-validator';

class ExampleDto {
  @IsString({ message: 'name must be a string' })
  @MaxLength(8)
  name!: string;

  @IsIn(['a', 'b'])
  kind!: string;

  @Optional()
  @IsString()
  note?: string;
}

const BACK_OFFICE: BodyRules = { nullIs: 'a value', order: 'missing first' };
const MERCHANT: BodyRules = { nullIs: 'absent', order: 'field by field' };

type Outcome = [number, string, string?] | 'ok';

async function outcome(body: unknown, rules = BACK_OFFICE): Promise<Outcome> {
  try {
    await validateBody(ExampleDto, body, rules);
    return 'ok';
  } catch (error) {
    if (!(error instanceof ApiError)) throw error;
    return error.field === undefined ? [error.status, error.code] : [error.status, error.code, error.field];
  }
}

describe("validateBody, with the rules both APIs share (shown with the back office's)", () => {
  it.each<[string, unknown, Outcome]>([
    ['a valid body', { name: 'x', kind: 'a' }, 'ok'],
    ['a valid body with the optional field', { name: 'x', kind: 'a', note: 'n' }, 'ok'],
    ['an array', [], [400, 'INVALID_JSON']],
    ['null', null, [400, 'INVALID_JSON']],
    ['a string', 'x', [400, 'INVALID_JSON']],
    ['nothing', undefined, [400, 'INVALID_JSON']],
    ['the first missing field, in declaration order', {}, [400, 'MISSING_REQUIRED_FIELD', 'name']],
    ['a missing field before a wrong one', { name: 5 }, [400, 'MISSING_REQUIRED_FIELD', 'kind']],
    ['a missing field before an unknown one', { kind: 'a', nme: 'x' }, [400, 'MISSING_REQUIRED_FIELD', 'name']],
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
    const dto = await validateBody(ExampleDto, { name: 'x', kind: 'b' }, BACK_OFFICE);
    expect(dto).toBeInstanceOf(ExampleDto);
    expect(Object.keys(dto)).toEqual(['name', 'kind']);
  });

  it('reports the first constraint as written: the type before the length', async () => {
    await expect(validateBody(ExampleDto, { name: 5, kind: 'a' }, BACK_OFFICE)).rejects.toMatchObject({ message: 'name must be a string' });
  });
});

describe('validateBody: where the two APIs differ', () => {
  it.each<[string, unknown, Outcome, Outcome]>([
    ['null for a required field', { name: null, kind: 'a' }, [422, 'VALIDATION_FAILED', 'name'], [400, 'MISSING_REQUIRED_FIELD', 'name']],
    ['null for an optional field', { name: 'x', kind: 'a', note: null }, [422, 'VALIDATION_FAILED', 'note'], 'ok'],
    ['a wrong field before a missing one', { name: 5 }, [400, 'MISSING_REQUIRED_FIELD', 'kind'], [422, 'VALIDATION_FAILED', 'name']],
    ['a wrong field before a null one', { name: 5, kind: null }, [422, 'VALIDATION_FAILED', 'name'], [422, 'VALIDATION_FAILED', 'name']],
    ['a null field before a wrong one', { name: null, kind: 'c' }, [422, 'VALIDATION_FAILED', 'name'], [400, 'MISSING_REQUIRED_FIELD', 'name']],
  ])('%s: back office %j, merchant API %j', async (_name, body, backOffice, merchant) => {
    expect([await outcome(body, BACK_OFFICE), await outcome(body, MERCHANT)]).toEqual([backOffice, merchant]);
  });

  it('leaves a null field out of the instance when null means absent', async () => {
    const dto = await validateBody(ExampleDto, { name: 'x', kind: 'a', note: null }, MERCHANT);
    expect(Object.keys(dto)).toEqual(['name', 'kind']);
  });
});
