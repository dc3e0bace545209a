import { IsString, Matches } from 'class-validator';
import { FieldSpec, IsPrintableText } from '../validation/validate-body';

/** The merchant's order reference, as the spec allows it. */
export const OUT_TRADE_NO = /^[A-Za-z0-9\-_.:]{1,64}$/;

export class QueryOrderDto {
  /**
   * Only text that cannot be an identifier at all is malformed (422). The
   * service's own format ("T" and 26 characters) is not enforced: any other
   * string names no order, which is 404, as an unknown order is.
   */
  @IsPrintableText(64)
  order_no?: string;

  @IsString()
  @Matches(OUT_TRADE_NO, { message: 'out_trade_no must be 1-64 characters of A-Z a-z 0-9 - _ . :' })
  out_trade_no?: string;
}

export const QUERY_FIELDS: FieldSpec<QueryOrderDto>[] = [
  { name: 'order_no', required: false },
  { name: 'out_trade_no', required: false },
];

/** For endpoints that take `{}`. */
export class EmptyDto {}
