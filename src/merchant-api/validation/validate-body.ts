import { ValidateBy, validate, ValidationOptions } from 'class-validator';
import { ApiError } from '../../infrastructure/http/api-error';
import { missingField, unknownField } from '../../infrastructure/http/request-errors';
import { assertStorableText } from '../../infrastructure/http/storable-text';

export interface FieldSpec<T> {
  name: keyof T & string;
  required: boolean;
}

/**
 * Checks a parsed JSON object against a DTO class, field by field in the
 * given order, answering with the contract's codes: a missing field is 400
 * MISSING_REQUIRED_FIELD, a wrong type or format 422 VALIDATION_FAILED, and
 * then any field the endpoint does not know is 422 too; each names the field.
 * A NUL or lone surrogate anywhere in a field's value or keys is a wrong
 * format, named by its dotted path (`account_fields.server_id`).
 */
export async function validateBody<T extends object>(dto: new () => T, body: Record<string, unknown>, fields: readonly FieldSpec<T>[]): Promise<T> {
  const instance = new dto();
  // null counts as missing: it never reaches the DTO.
  for (const { name } of fields) if (body[name] !== undefined && body[name] !== null) (instance as Record<string, unknown>)[name] = body[name];
  const errors = new Map((await validate(instance, { stopAtFirstError: true })).map((e) => [e.property, e]));
  for (const { name, required } of fields) {
    const value = body[name];
    if (value === undefined || value === null) {
      if (required) throw missingField(name);
      continue;
    }
    assertStorableText(value, name);
    const error = errors.get(name);
    if (error) throw new ApiError(422, 'VALIDATION_FAILED', Object.values(error.constraints ?? {})[0] ?? `${name} is invalid`, name);
  }
  const known = new Set<string>(fields.map((f) => f.name));
  const unknown = Object.keys(body).find((key) => !known.has(key));
  if (unknown !== undefined) throw unknownField(unknown);
  return instance;
}

/** Text a person could have typed: well-formed Unicode without control, format or private-use characters. */
export function isPrintableText(value: unknown, maxCodePoints: number, minCodePoints = 1): value is string {
  if (typeof value !== 'string' || !value.isWellFormed()) return false;
  const length = [...value].length;
  return length >= minCodePoints && length <= maxCodePoints && !/\p{C}/u.test(value);
}

export function IsPrintableText(maxCodePoints: number, options?: ValidationOptions): PropertyDecorator {
  return ValidateBy(
    {
      name: 'isPrintableText',
      validator: {
        validate: (value) => isPrintableText(value, maxCodePoints),
        defaultMessage: (args) => `${args?.property} must be a string of 1-${maxCodePoints} printable characters`,
      },
    },
    options,
  );
}
