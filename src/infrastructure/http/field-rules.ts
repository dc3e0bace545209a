import { ValidateBy, ValidateIf, ValidationOptions } from 'class-validator';
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

/** The dotted paths nested rules found at fault, by DTO instance and field: read by nestedField. */
const nestedPaths = new WeakMap<object, Map<string, string>>();

/**
 * A constraint on an object's members that names the member at fault: its
 * message starts with the dotted path (`account_fields.server_id must be a
 * string ...`), and nestedField gives that path for the reply's `field`.
 */
export function NestedRule(name: string, problem: (value: unknown) => NestedProblem | undefined): PropertyDecorator {
  return ValidateBy({
    name,
    validator: {
      validate: (value) => problem(value) === undefined,
      defaultMessage: (args) => {
        const found = problem(args?.value);
        const path = found?.at === undefined ? String(args?.property) : `${args?.property}.${found.at}`;
        if (args && typeof args.object === 'object') {
          const paths = nestedPaths.get(args.object) ?? new Map<string, string>();
          paths.set(args.property, path);
          nestedPaths.set(args.object, paths);
        }
        return `${path} ${found?.problem ?? 'is invalid'}`;
      },
    },
  });
}

/** The dotted path a NestedRule found at fault in this field of a validated DTO, if it found one. */
export function nestedField(dto: object, field: string): string | undefined {
  return nestedPaths.get(dto)?.get(field);
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
