import { ArgumentMetadata, Injectable, PipeTransform } from '@nestjs/common';
import { BodyRules, validateBody } from '../../infrastructure/http/dto-body-validator';

/**
 * How the back office reads a body (docs/back-office-api.md, "Order of
 * checks"): null is a value that a field must allow, and every missing field
 * is reported before any wrong one.
 */
export const BACK_OFFICE_BODY: BodyRules = { nullIs: 'a value', order: 'missing first' };

/** `@Body(BodyPipe) body: SomeDto`: validates against the parameter's DTO class. */
@Injectable()
export class BodyPipe implements PipeTransform {
  transform(value: unknown, metadata: ArgumentMetadata): Promise<object> {
    const dto = metadata.metatype as (new () => object) | undefined;
    if (metadata.type !== 'body' || typeof dto !== 'function' || dto === Object) {
      throw new Error('BodyPipe needs a @Body() parameter typed with a DTO class');
    }
    return validateBody(dto, value, BACK_OFFICE_BODY);
  }
}
