import { ArgumentMetadata, PipeTransform } from '@nestjs/common';
import { BodyRules, validateBody } from './dto-body-validator';

export type DtoClass = new () => object;

/**
 * Validates a request body against the DTO class its parameter is typed
 * with, as `rules` read bodies. The route's DTO is so written in one place,
 * the handler's signature, where both the validation and the API documents
 * (which find the pipe on the parameter) read it.
 */
export class DtoBodyPipe implements PipeTransform {
  constructor(
    readonly rules: BodyRules,
    /** `{}`: the body may be left out, and reads as an empty object. */
    readonly emptyBody: 'refused' | '{}' = 'refused',
  ) {}

  transform(value: unknown, metadata: ArgumentMetadata): Promise<object> {
    const dto = metadata.metatype as DtoClass | undefined;
    if (typeof dto !== 'function' || dto === Object) throw new Error('A body pipe needs a parameter typed with a DTO class');
    return validateBody(dto, value === undefined && this.emptyBody === '{}' ? {} : value, this.rules);
  }
}
