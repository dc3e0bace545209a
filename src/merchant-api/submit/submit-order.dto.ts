import { Doc, IsIdentifier, IsPrintableText, isPrintableText, NestedRule, printableTextSchema } from '../../infrastructure/http/field-rules';
import { MAX_ACCOUNT_FIELD_VALUES } from '../../shared/limits';

const ACCOUNT_FIELD_MAX = 128;

/** An object of at most 32 strings; a wrong value is named by its own path, `account_fields.server_id`. */
const IsAccountFields = () =>
  NestedRule(
    'isAccountFields',
    {
      schema: {
        type: 'object',
        maxProperties: MAX_ACCOUNT_FIELD_VALUES,
        additionalProperties: printableTextSchema(ACCOUNT_FIELD_MAX),
        examples: [{ server_id: '2001' }],
      },
    },
    (value) => {
      if (typeof value !== 'object' || value === null || Array.isArray(value)) return { problem: 'must be an object of strings' };
      if (Object.keys(value).length > MAX_ACCOUNT_FIELD_VALUES) return { problem: `must hold at most ${MAX_ACCOUNT_FIELD_VALUES} values` };
      const wrong = Object.entries(value).find(([, v]) => !isPrintableText(v, ACCOUNT_FIELD_MAX));
      return wrong && { at: wrong[0], problem: `must be a string of 1-${ACCOUNT_FIELD_MAX} printable characters` };
    },
  );

export class SubmitOrderDto {
  @Doc({ description: 'Your idempotency key', examples: ['A-1'] })
  @IsIdentifier()
  out_trade_no!: string;

  @Doc({ examples: ['mlbb-86'] })
  @IsIdentifier()
  sku_id!: string;

  @Doc({ examples: ['12345678'] })
  @IsPrintableText(64)
  account_id!: string;

  @Doc({
    description:
      "Exactly the SKU's required_account_fields, each value 1-128 printable characters. A wrong value is 422 VALIDATION_FAILED with `field` " +
      'naming it, e.g. `account_fields.server_id` and "account_fields.server_id must be a string of 1-128 printable characters"',
  })
  @IsAccountFields()
  account_fields!: Record<string, string>;
}
