import 'reflect-metadata';
import { IsBoolean, IsEmail, IsIn, IsInt, IsString, Length, Matches, Max, Min, ValidateIf } from 'class-validator';
import { BodyRules } from './dto-body-validator';
import { dtoJsonSchema, UnknownRuleError } from './dto-json-schema';
import { Doc, Optional, OptionalNullable, RequiredUnless, Rule } from './field-rules';

const BACK_OFFICE: BodyRules = { nullIs: 'a value', order: 'missing first' };
const MERCHANT: BodyRules = { nullIs: 'absent', order: 'field by field' };

const IsEven = () =>
  Rule('isEven', { schema: { type: 'integer', multipleOf: 2 } }, (value) =>
    Number.isInteger(value) && (value as number) % 2 === 0 ? undefined : 'must be even',
  );
const IsPrime = () => Rule('isPrime', { schema: { type: 'integer', minimum: 2 }, beyond: 'A prime number' }, () => undefined);

class EveryRule {
  @IsString()
  @Length(1, 10)
  text!: string;

  @IsIn(['a', 'b'])
  kind!: string;

  @IsBoolean()
  flag!: boolean;

  @IsInt()
  @Min(1)
  @Max(5)
  count!: number;

  @Matches(/^[A-Z]{3}$/)
  code!: string;

  @Doc({ description: 'Twice something', examples: [4] })
  @IsEven()
  even!: number;

  @IsPrime()
  prime!: number;

  @Optional()
  @IsString()
  note?: string;

  @OptionalNullable()
  @IsString()
  maybe?: string | null;
}

class OneOfTwo {
  @RequiredUnless('b')
  @IsString()
  a?: string;

  @Optional()
  @IsString()
  b?: string;
}

describe('dtoJsonSchema', () => {
  it('maps every rule the DTOs use, in a closed object whose required fields are those not optional', () => {
    expect(dtoJsonSchema(EveryRule, BACK_OFFICE)).toEqual({
      type: 'object',
      properties: {
        text: { type: 'string', minLength: 1, maxLength: 10 },
        kind: { enum: ['a', 'b'] },
        flag: { type: 'boolean' },
        count: { type: 'integer', minimum: 1, maximum: 5 },
        code: { type: 'string', pattern: '^[A-Z]{3}$' },
        even: { type: 'integer', multipleOf: 2, description: 'Twice something', examples: [4] },
        prime: { type: 'integer', minimum: 2, description: 'A prime number' },
        note: { type: 'string' },
        maybe: { anyOf: [{ type: 'string' }, { type: 'null' }] },
      },
      required: ['text', 'kind', 'flag', 'count', 'code', 'even', 'prime'],
      additionalProperties: false,
    });
  });

  it('lets an optional field be null on the merchant API, where null is a missing field', () => {
    const { properties } = dtoJsonSchema(EveryRule, MERCHANT) as { properties: Record<string, unknown> };
    expect(properties.note).toEqual({ anyOf: [{ type: 'string' }, { type: 'null' }] });
    expect(properties.text).toEqual({ type: 'string', minLength: 1, maxLength: 10 });
  });

  it('states RequiredUnless as "one of the two, not null"', () => {
    expect(dtoJsonSchema(OneOfTwo, MERCHANT)).toMatchObject({
      properties: { a: { anyOf: [{ type: 'string' }, { type: 'null' }] }, b: { anyOf: [{ type: 'string' }, { type: 'null' }] } },
      anyOf: [
        { required: ['a'], properties: { a: { not: { type: 'null' } } } },
        { required: ['b'], properties: { b: { not: { type: 'null' } } } },
      ],
    });
    expect(dtoJsonSchema(OneOfTwo, MERCHANT)).not.toHaveProperty('required');
  });

  describe('refuses what it cannot state, rather than leave it out', () => {
    class UnknownDecorator {
      @IsEmail()
      email!: string;
    }
    class Each {
      @IsString({ each: true })
      names!: string[];
    }
    class OwnCondition {
      @ValidateIf((o: { kind?: string }) => o.kind === 'x')
      @IsString()
      detail?: string;
    }
    class Flags {
      @Matches(/^a$/i)
      letter!: string;
    }
    class Untyped {
      @ValidateIf(() => true)
      nothing?: string;
    }
    it.each([
      ['a class-validator decorator it has no mapping for', UnknownDecorator, /UnknownDecorator\.email: @isEmail has no JSON Schema/],
      ['a rule applied to each member', Each, /Each\.names: @isString with each/],
      ['a ValidateIf of its own', OwnCondition, /OwnCondition\.detail: a @ValidateIf/],
      ['a pattern with flags', Flags, /Flags\.letter: @Matches with flags/],
      ['a field with a condition and no rule', Untyped, /Untyped\.nothing/],
    ])('%s', (_name, dto, message) => {
      expect(() => dtoJsonSchema(dto, BACK_OFFICE)).toThrow(UnknownRuleError);
      expect(() => dtoJsonSchema(dto, BACK_OFFICE)).toThrow(message);
    });
  });
});
