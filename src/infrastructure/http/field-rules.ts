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

export const IsIdentifier = () => Rule('isIdentifier', (value) => (isIdentifier(value) ? undefined : `must be a string of ${IDENTIFIER_RULE}`));

/** Text a person could have typed: well-formed Unicode without control, format or private-use characters. */
export function isPrintableText(value: unknown, maxCodePoints: number, minCodePoints = 1): value is string {
  if (typeof value !== 'string' || !value.isWellFormed()) return false;
  const length = [...value].length;
  return length >= minCodePoints && length <= maxCodePoints && !/\p{C}/u.test(value);
}

export const IsPrintableText = (maxCodePoints: number) =>
  Rule('isPrintableText', (value) => (isPrintableText(value, maxCodePoints) ? undefined : `must be a string of 1-${maxCodePoints} printable characters`));
