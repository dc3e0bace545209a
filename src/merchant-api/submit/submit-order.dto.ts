import { IsObject, IsString, Matches, ValidateBy } from 'class-validator';
import { OUT_TRADE_NO } from '../orders/order.dto';
import { FieldSpec, IsPrintableText, isPrintableText } from '../validation/validate-body';

const SKU_ID = /^[A-Za-z0-9\-_.:]{1,64}$/;
const MAX_ACCOUNT_FIELDS = 32;

export class SubmitOrderDto {
  @IsString()
  @Matches(OUT_TRADE_NO, { message: 'out_trade_no must be 1-64 characters of A-Z a-z 0-9 - _ . :' })
  out_trade_no!: string;

  @IsString()
  @Matches(SKU_ID, { message: 'sku_id must be 1-64 characters of A-Z a-z 0-9 - _ . :' })
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
        Object.keys(value).length <= MAX_ACCOUNT_FIELDS &&
        Object.values(value).every((v) => isPrintableText(v, 128)),
      defaultMessage: () => `account_fields must hold at most ${MAX_ACCOUNT_FIELDS} values, each 1-128 printable characters`,
    },
  })
  account_fields!: Record<string, string>;
}

export const SUBMIT_FIELDS: FieldSpec<SubmitOrderDto>[] = [
  { name: 'out_trade_no', required: true },
  { name: 'sku_id', required: true },
  { name: 'account_id', required: true },
  { name: 'account_fields', required: true },
];
