import { IsObject, ValidateBy } from 'class-validator';
import { IsIdentifier, IsPrintableText, isPrintableText, Optional } from '../../infrastructure/http/field-rules';
import { MAX_ACCOUNT_FIELD_VALUES } from '../../shared/limits';

export class SubmitOrderDto {
  @IsIdentifier()
  out_trade_no!: string;

  @IsIdentifier()
  sku_id!: string;

  @IsPrintableText(64)
  account_id!: string;

  @IsObject({ message: 'account_fields must be an object of strings' })
  @ValidateBy({
    name: 'isAccountFields',
    validator: {
      validate: (value: unknown) =>
        typeof value === 'object' &&
        value !== null &&
        Object.keys(value).length <= MAX_ACCOUNT_FIELD_VALUES &&
        Object.values(value).every((v) => isPrintableText(v, 128)),
      defaultMessage: () => `account_fields must hold at most ${MAX_ACCOUNT_FIELD_VALUES} values, each 1-128 printable characters`,
    },
  })
  account_fields!: Record<string, string>;
}

export class QueryOrderDto {
  /**
   * Only text that cannot be an identifier at all is malformed (422). The
   * service's own format ("T" and 26 characters) is not enforced: any other
   * string names no order, which is 404, as an unknown order is.
   */
  @Optional()
  @IsPrintableText(64)
  order_no?: string;

  @Optional()
  @IsIdentifier()
  out_trade_no?: string;
}

/** For endpoints that take `{}`. */
export class EmptyDto {}
