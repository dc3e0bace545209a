import { ValidateBy, ValidateIf, ValidationError, ValidationOptions } from 'class-validator';
import { IDENTIFIER_RULE, isIdentifier } from '../../shared/limits';

/**
 * Property decorators that both APIs' DTOs use. Each rule names what is wrong
 * in its message, so one failing constraint is a complete answer to the caller.
 */

/** Absent is fine; present must validate. (class-validator's @IsOptional would also let null through.) */
export const Optional = () => ValidateIf((_object, value) => value !== undefined);

/** Absent or null is fine; anything else must validate. */
export const OptionalNullable = () => ValidateIf((_object, value) => value !== undefined && value !== null);

/**
 * Several decorators as one, listed as they would be stacked above a field:
 * they apply bottom-up, like a stack, so the first constraint's message wins.
 */
export function Rules(...rules: PropertyDecorator[]): PropertyDecorator {
  return (target, key) => [...rules].reverse().forEach((rule) => rule(target, key));
}

/** A constraint whose `problem` says what is wrong with a value, or undefined when it is fine. */
export function Rule(name: string, problem: (value: unknown) => string | undefined, options?: ValidationOptions): PropertyDecorator {
  return ValidateBy(
    {
      name,
      validator: {
        validate: (value) => problem(value) === undefined,
        defaultMessage: (args) => `${args?.property} ${problem(args?.value) ?? 'is invalid'}`,
      },
    },
    options,
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
export function NestedRule(name: string, problem: (value: unknown) => NestedProblem | undefined): PropertyDecorator {
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
    { context: { [NESTED]: problem } },
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

export const IsIdentifier = () => Rule('isIdentifier', (value) => (isIdentifier(value) ? undefined : `must be a string of ${IDENTIFIER_RULE}`));

/** Text a person could have typed: well-formed Unicode without control, format or private-use characters. */
export function isPrintableText(value: unknown, maxCodePoints: number, minCodePoints = 1): value is string {
  if (typeof value !== 'string' || !value.isWellFormed()) return false;
  const length = [...value].length;
  return length >= minCodePoints && length <= maxCodePoints && !/\p{C}/u.test(value);
}

export const IsPrintableText = (maxCodePoints: number) =>
  Rule('isPrintableText', (value) => (isPrintableText(value, maxCodePoints) ? undefined : `must be a string of 1-${maxCodePoints} printable characters`));
