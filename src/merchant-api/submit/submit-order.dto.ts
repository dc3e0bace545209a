import { IsObject, ValidateBy } from 'class-validator';
import { IsIdentifier, IsPrintableText, isPrintableText } from '../../infrastructure/http/field-rules';
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
