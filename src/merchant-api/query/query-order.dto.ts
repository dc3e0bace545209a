import { Doc, IsIdentifier, IsPrintableText, Optional, RequiredUnless } from '../../infrastructure/http/field-rules';

/** One identifier or both; with neither, order_no is the missing field (400 MISSING_REQUIRED_FIELD, "order_no or out_trade_no is required"). */
export class QueryOrderDto {
  /**
   * Only text that cannot be an identifier at all is malformed (422). The
   * service's own format ("T" and 26 characters) is not enforced: any other
   * string names no order, which is 404, as an unknown order is.
   */
  @Doc({ examples: ['T01JD3ZQ4N6W8Y0A2C4E6G8J0K'] })
  @RequiredUnless('out_trade_no')
  @IsPrintableText(64)
  order_no?: string;

  @Optional()
  @IsIdentifier()
  out_trade_no?: string;
}
