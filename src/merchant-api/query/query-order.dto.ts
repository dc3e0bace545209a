import { IsIdentifier, IsPrintableText, Optional } from '../../infrastructure/http/field-rules';

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
