import { ArgumentMetadata, Injectable, PipeTransform } from '@nestjs/common';
import { getMetadataStorage, validate, ValidationError } from 'class-validator';
import { ApiError } from '../../infrastructure/http/api-error';
import { invalidJson, missingField, unknownField } from '../../infrastructure/http/request-errors';
import { assertStorableText } from '../../infrastructure/http/storable-text';
import { EMPTY_BODY, NOT_AN_OBJECT } from '../../infrastructure/http/strict-json';

type Dto<T> = new () => T;
type DtoClass = Dto<object>;

/**
 * Runs class-validator on a JSON body and answers with the contract's codes:
 * not an object 400 INVALID_JSON; a required field absent 400
 * MISSING_REQUIRED_FIELD; a wrong type or format (null for a required field
 * included) 422 VALIDATION_FAILED; an unknown field 422 VALIDATION_FAILED.
 * Problems are reported in that order, each kind in the DTO's field order.
 * A NUL or lone surrogate anywhere in a field's value or keys is a wrong
 * format, named by its dotted path (`ip_whitelist.0`).
 */
export async function validateBody<T extends object>(dto: Dto<T>, body: unknown): Promise<T> {
  if (body === undefined) throw invalidJson(EMPTY_BODY);
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw invalidJson(NOT_AN_OBJECT);
  const declared = declaredFields(dto);
  const instance = copyInto(Object.create(dto.prototype) as T, body as Record<string, unknown>, declared);
  const errors = await validate(instance, { forbidUnknownValues: true });
  const missing = errors.find((e) => !Object.hasOwn(body, e.property));
  if (missing) throw missingField(missing.property);
  for (const field of declared) {
    if (!Object.hasOwn(body, field)) continue;
    assertStorableText((body as Record<string, unknown>)[field], field);
    const error = errors.find((e) => e.property === field);
    if (error) throw new ApiError(422, 'VALIDATION_FAILED', messageOf(error), field);
  }
  const unknown = Object.keys(body).find((key) => !declared.has(key));
  if (unknown !== undefined) throw unknownField(unknown);
  return instance;
}

/**
 * The DTO gets exactly the body's declared keys that are present. Its
 * constructor is not run, since class fields would add every declared property
 * as undefined. Undeclared keys are reported by validateBody itself rather than
 * by class-validator's forbidNonWhitelisted, which lets keys named like
 * Object.prototype members ("constructor", "__proto__") through; so they
 * never reach the instance.
 */
function copyInto<T extends object>(target: T, source: Record<string, unknown>, declared: ReadonlySet<string>): T {
  for (const key of Object.keys(source).filter((k) => declared.has(k))) {
    Object.defineProperty(target, key, { value: source[key], enumerable: true, writable: true, configurable: true });
  }
  return target;
}

const fieldsByDto = new WeakMap<DtoClass, ReadonlySet<string>>();

function declaredFields(dto: DtoClass): ReadonlySet<string> {
  let fields = fieldsByDto.get(dto);
  if (!fields) {
    fields = new Set(
      getMetadataStorage()
        .getTargetValidationMetadatas(dto, '', true, false)
        .map((m) => m.propertyName),
    );
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

/** `@Body(BodyPipe) body: SomeDto`: validates against the parameter's DTO class. */
@Injectable()
export class BodyPipe implements PipeTransform {
  transform(value: unknown, metadata: ArgumentMetadata): Promise<object> {
    const dto = metadata.metatype as Dto<object> | undefined;
    if (metadata.type !== 'body' || typeof dto !== 'function' || dto === Object) {
      throw new Error('BodyPipe needs a @Body() parameter typed with a DTO class');
    }
    return validateBody(dto, value);
  }
}
