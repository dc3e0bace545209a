import { ValidateBy, ValidateIf, ValidationError } from 'class-validator';
import { IDENTIFIER, IDENTIFIER_RULE, isIdentifier } from '../../shared/limits';

/**
 * Property decorators that both APIs' DTOs use. Each rule names what is wrong
 * in its message, so one failing constraint is a complete answer to the caller.
 * Each rule of our own also carries the JSON Schema of what it accepts, which
 * the API documents publish (dto-json-schema.ts): the schema sits beside the
 * check it describes, and a test holds the two to each other at the edges.
 */

export type JsonSchema = Record<string, unknown>;

/** What the API documents say a rule accepts. */
export interface RuleSchema {
  /** JSON Schema 2020-12 of the values the rule accepts. */
  readonly schema: JsonSchema;
  /**
   * Only for a rule the schema cannot state whole: what the rule checks beyond
   * it, in words. The schema then lets through some values the rule refuses,
   * never the other way round, and the documents show these words.
   */
  readonly beyond?: string;
}

const isPresent = (_object: object, value: unknown) => value !== undefined;
const isPresentAndNotNull = (_object: object, value: unknown) => value !== undefined && value !== null;

/** Absent is fine; present must validate. (class-validator's @IsOptional would also let null through.) */
export const Optional = () => ValidateIf(isPresent);

/** Absent or null is fine; anything else must validate. */
export const OptionalNullable = () => ValidateIf(isPresentAndNotNull);

/** The conditions of the field rules that make a field optional, for the converter to the documents' schemas. */
export type Optionality = { kind: 'optional' } | { kind: 'optional or null' } | { kind: 'required unless'; other: string };

const optionalities = new WeakMap<object, Optionality>([
  [isPresent, { kind: 'optional' }],
  [isPresentAndNotNull, { kind: 'optional or null' }],
]);

/**
 * Required unless `other` is given: one of the two must be there. Left out
 * with `other` left out too, the field is the missing one (400
 * MISSING_REQUIRED_FIELD naming it, and `other` in the message).
 */
export function RequiredUnless(other: string): PropertyDecorator {
  const condition = (object: object, value: unknown) => value !== undefined || (object as Record<string, unknown>)[other] === undefined;
  optionalities.set(condition, { kind: 'required unless', other });
  return ValidateIf(condition);
}

/** What a ValidateIf condition of these rules means; undefined for any other condition. */
export const optionalityOf = (condition: unknown): Optionality | undefined => (typeof condition === 'function' ? optionalities.get(condition) : undefined);

/**
 * Several decorators as one, listed as they would be stacked above a field:
 * they apply bottom-up, like a stack, so the first constraint's message wins.
 */
export function Rules(...rules: PropertyDecorator[]): PropertyDecorator {
  return (target, key) => [...rules].reverse().forEach((rule) => rule(target, key));
}

/** Where a rule of our own keeps its RuleSchema: in its constraint's context, which the metadata storage keeps. */
const SCHEMA = 'ruleSchema';

/** The RuleSchema a constraint of these rules carries; undefined for any other constraint. */
export const ruleSchemaOf = (context: unknown): RuleSchema | undefined => (context as Record<string, RuleSchema | undefined> | undefined)?.[SCHEMA];

/** A constraint whose `problem` says what is wrong with a value, or undefined when it is fine; `accepts` is what the documents say it takes. */
export function Rule(name: string, accepts: RuleSchema, problem: (value: unknown) => string | undefined): PropertyDecorator {
  return ValidateBy(
    {
      name,
      validator: {
        validate: (value) => problem(value) === undefined,
        defaultMessage: (args) => `${args?.property} ${problem(args?.value) ?? 'is invalid'}`,
      },
    },
    { context: { [SCHEMA]: accepts } },
  );
}

/** What is wrong inside a field's value: `at` is the member at fault (`server_id`), when there is one. */
export interface NestedProblem {
  readonly at?: string;
  readonly problem: string;
}

/** A NestedRule's check, carried in its constraint's context so that the member at fault can be named from the refused value. */
const NESTED = 'nestedProblem';

/** The dotted path of a member at fault, e.g. `account_fields.server_id`; the field itself when no member is named. */
const nestedPath = (property: string, found: NestedProblem | undefined) => (found?.at === undefined ? property : `${property}.${found.at}`);

/**
 * A constraint on an object's members that names the member at fault: its
 * message starts with the dotted path (`account_fields.server_id must be a
 * string ...`), and nestedField gives that path for the reply's `field`.
 */
export function NestedRule(name: string, accepts: RuleSchema, problem: (value: unknown) => NestedProblem | undefined): PropertyDecorator {
  return ValidateBy(
    {
      name,
      validator: {
        validate: (value) => problem(value) === undefined,
        defaultMessage: (args) => {
          const found = problem(args?.value);
          return `${nestedPath(String(args?.property), found)} ${found?.problem ?? 'is invalid'}`;
        },
      },
    },
    { context: { [NESTED]: problem, [SCHEMA]: accepts } },
  );
}

/** The dotted path a NestedRule refusing this field names, worked out again from the refused value; undefined for other rules. */
export function nestedField(error: ValidationError): string | undefined {
  for (const context of Object.values(error.contexts ?? {})) {
    const problem = (context as Record<string, unknown> | undefined)?.[NESTED];
    if (typeof problem === 'function') return nestedPath(error.property, (problem as (value: unknown) => NestedProblem | undefined)(error.value));
  }
  return undefined;
}

export const IsIdentifier = () =>
  Rule('isIdentifier', { schema: { type: 'string', minLength: 1, maxLength: 64, pattern: IDENTIFIER.source, examples: ['A-1'] } }, (value) =>
    isIdentifier(value) ? undefined : `must be a string of ${IDENTIFIER_RULE}`,
  );

/** Text a person could have typed: well-formed Unicode without control, format or private-use characters. */
export function isPrintableText(value: unknown, maxCodePoints: number, minCodePoints = 1): value is string {
  if (typeof value !== 'string' || !value.isWellFormed()) return false;
  const length = [...value].length;
  return length >= minCodePoints && length <= maxCodePoints && !/\p{C}/u.test(value);
}

/**
 * The schema of isPrintableText: JSON Schema counts code points, as it does,
 * and its patterns are Unicode regular expressions, in which a lone
 * surrogate is a character of category C (Cs).
 */
export const printableTextSchema = (maxCodePoints: number): JsonSchema => ({ type: 'string', minLength: 1, maxLength: maxCodePoints, pattern: '^\\P{C}*$' });

export const IsPrintableText = (maxCodePoints: number) =>
  Rule('isPrintableText', { schema: printableTextSchema(maxCodePoints) }, (value) =>
    isPrintableText(value, maxCodePoints) ? undefined : `must be a string of 1-${maxCodePoints} printable characters`,
  );

/** What the API documents say about a field beyond its rules: what it is for, and values to show. */
export interface FieldDoc {
  readonly description?: string;
  readonly examples?: readonly unknown[];
}

const fieldDocs = new WeakMap<object, Map<string, FieldDoc>>();

/** Documents a DTO's field; it changes nothing in how the field is checked. */
export function Doc(doc: FieldDoc): PropertyDecorator {
  return (target, key) => {
    const docs = fieldDocs.get(target.constructor) ?? new Map<string, FieldDoc>();
    docs.set(String(key), doc);
    fieldDocs.set(target.constructor, docs);
  };
}

/** A field's Doc, if it has one. */
export const fieldDocOf = (dto: object, field: string): FieldDoc | undefined => fieldDocs.get(dto)?.get(field);
