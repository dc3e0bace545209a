import { Injectable } from '@nestjs/common';
import { DtoBodyPipe } from '../../infrastructure/http/dto-body-pipe';
import { BodyRules } from '../../infrastructure/http/dto-body-validator';

/**
 * How the back office reads a body (docs/back-office-api.md, "Order of
 * checks"): null is a value that a field must allow, and every missing field
 * is reported before any wrong one.
 */
export const BACK_OFFICE_BODY: BodyRules = { nullIs: 'a value', order: 'missing first' };

/** `@Body(BodyPipe) body: SomeDto`: validates against the parameter's DTO class. */
@Injectable()
export class BodyPipe extends DtoBodyPipe {
  constructor() {
    super(BACK_OFFICE_BODY);
  }
}

/** `@Body(OptionalBodyPipe) body: SomeDto`: the same, for a route whose body may be left out, which then reads as `{}`. */
@Injectable()
export class OptionalBodyPipe extends DtoBodyPipe {
  constructor() {
    super(BACK_OFFICE_BODY, '{}');
  }
}
