import { getMetadataStorage, validate, ValidationError } from 'class-validator';
import { ApiError } from './api-error';
import { nestedField, optionalityOf } from './field-rules';
import { invalidJson, missingField, unknownField } from './request-errors';
import { assertStorableText } from './storable-text';
import { EMPTY_BODY, NOT_AN_OBJECT } from './strict-json';

/**
 * Where the two APIs' contracts differ in reading a body; everything else
 * (codes, messages, the NUL and surrogate check, unknown fields last) is the
 * same on both.
 */
export interface BodyRules {
  /**
   * `absent`: a null field is a missing one (the merchant API, CONTRACT.md).
   * `a value`: null is checked like any other value, so a field that does not
   * allow it is a wrong type, 422 (the back office).
   */
  readonly nullIs: 'absent' | 'a value';
  /**
   * `field by field`: the first field at fault in the DTO's order, whether
   * missing or wrong (the merchant API: "fields are checked in the order of
   * the tables"). `missing first`: every missing field before any wrong one
   * (the back office: "missing, wrong, unknown").
   */
  readonly order: 'field by field' | 'missing first';
}

type Dto<T> = new () => T;

/**
 * Runs class-validator on a parsed JSON body and answers with the contract's
 * codes: not an object 400 INVALID_JSON; a required field absent 400
 * MISSING_REQUIRED_FIELD; a wrong type or format 422 VALIDATION_FAILED; then
 * a field the DTO does not declare 422 VALIDATION_FAILED. Each names its
 * field. A field is required unless its DTO marks it `@Optional()`. A NUL or
 * lone surrogate anywhere in a field's value or keys is a wrong format, named
 * by its dotted path (`account_fields.server_id`, `ip_whitelist.0`), as is a
 * wrong member a NestedRule finds.
 */
export async function validateBody<T extends object>(dto: Dto<T>, body: unknown, rules: BodyRules): Promise<T> {
  if (body === undefined) throw invalidJson(EMPTY_BODY);
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw invalidJson(NOT_AN_OBJECT);
  const fields = body as Record<string, unknown>;
  const declared = declaredFields(dto);
  const given = (field: string) => Object.hasOwn(fields, field) && !(rules.nullIs === 'absent' && fields[field] === null);
  const instance = copyInto(Object.create(dto.prototype) as T, fields, declared.filter(given));
  const errors = new Map((await validate(instance, { forbidUnknownValues: true })).map((e) => [e.property, e]));
  // A field left out is missing when its constraints refuse nothing at all: it was not optional.
  const missing = declared.find((field) => !given(field) && errors.has(field));
  for (const field of declared) {
    if (rules.order === 'missing first' && missing !== undefined) break;
    if (field === missing) break;
    if (!given(field)) continue;
    assertStorableText(fields[field], field);
    const error = errors.get(field);
    if (error) throw new ApiError(422, 'VALIDATION_FAILED', messageOf(error), nestedField(error) ?? field);
  }
  if (missing !== undefined) throw missingField(missing, alternativeTo(dto, missing));
  const unknown = Object.keys(fields).find((key) => !declared.includes(key));
  if (unknown !== undefined) throw unknownField(unknown);
  return instance;
}

/**
 * The DTO gets exactly the given fields. Its constructor is not run, since
 * class fields would add every declared property as undefined. Undeclared
 * keys never reach the instance: they are reported by validateBody itself
 * rather than by class-validator's forbidNonWhitelisted, which lets keys named
 * like Object.prototype members ("constructor", "__proto__") through.
 */
function copyInto<T extends object>(target: T, source: Record<string, unknown>, keys: readonly string[]): T {
  for (const key of keys) Object.defineProperty(target, key, { value: source[key], enumerable: true, writable: true, configurable: true });
  return target;
}

/** The field a RequiredUnless field may be left out for. */
function alternativeTo(dto: Dto<object>, field: string): string | undefined {
  const metadata = getMetadataStorage().getTargetValidationMetadatas(dto, '', true, false);
  for (const m of metadata) {
    const optionality = m.propertyName === field ? optionalityOf(m.constraints?.[0]) : undefined;
    if (optionality?.kind === 'required unless') return optionality.other;
  }
  return undefined;
}

const fieldsByDto = new WeakMap<Dto<object>, readonly string[]>();

/** The DTO's fields in the order they are declared. */
function declaredFields(dto: Dto<object>): readonly string[] {
  let fields = fieldsByDto.get(dto);
  if (!fields) {
    const metadata = getMetadataStorage().getTargetValidationMetadatas(dto, '', true, false);
    fields = [...new Set(metadata.map((m) => m.propertyName))];
    fieldsByDto.set(dto, fields);
  }
  return fields;
}

/**
 * Property decorators apply bottom-up, so the last constraint recorded is the
 * one written first in the DTO: usually the type check, the most useful message.
 */
function messageOf(error: ValidationError): string {
  const messages = Object.values(error.constraints ?? {});
  return messages[messages.length - 1] ?? `${error.property} is invalid`;
}
