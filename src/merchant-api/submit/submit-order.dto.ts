import { IsIdentifier, IsPrintableText, isPrintableText, NestedRule } from '../../infrastructure/http/field-rules';
import { MAX_ACCOUNT_FIELD_VALUES } from '../../shared/limits';

const ACCOUNT_FIELD_MAX = 128;

/** An object of at most 32 strings; a wrong value is named by its own path, `account_fields.server_id`. */
const IsAccountFields = () =>
  NestedRule('isAccountFields', (value) => {
    if (typeof value !== 'object' || value === null || Array.isArray(value)) return { problem: 'must be an object of strings' };
    if (Object.keys(value).length > MAX_ACCOUNT_FIELD_VALUES) return { problem: `must hold at most ${MAX_ACCOUNT_FIELD_VALUES} values` };
    const wrong = Object.entries(value).find(([, v]) => !isPrintableText(v, ACCOUNT_FIELD_MAX));
    return wrong && { at: wrong[0], problem: `must be a string of 1-${ACCOUNT_FIELD_MAX} printable characters` };
  });

export class SubmitOrderDto {
  @IsIdentifier()
  out_trade_no!: string;

  @IsIdentifier()
  sku_id!: string;

  @IsPrintableText(64)
  account_id!: string;

  @IsAccountFields()
  account_fields!: Record<string, string>;
}
