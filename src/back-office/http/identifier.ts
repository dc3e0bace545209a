import { Injectable, PipeTransform } from '@nestjs/common';
import { ApiError } from '../../infrastructure/http/api-error';
import { IDENTIFIER_RULE, isIdentifier } from '../../shared/limits';

/**
 * `@Param(PathIdsPipe) { merchant_id }: PathIds`: every path parameter must be
 * an id. All of them are checked by one pipe, in the order of the path, so a
 * request with two bad ids always names the first (separate pipes per
 * parameter run concurrently, last parameter first).
 */
@Injectable()
export class PathIdsPipe implements PipeTransform<Record<string, string>, Record<string, string>> {
  transform(params: Record<string, string>): Record<string, string> {
    for (const [name, value] of Object.entries(params)) {
      if (!isIdentifier(value)) {
        throw new ApiError(422, 'VALIDATION_FAILED', `${name} must be ${IDENTIFIER_RULE}`, name);
      }
    }
    return params;
  }
}

export type PathIds = Readonly<Record<string, string>>;
