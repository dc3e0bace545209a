import { IsIn, IsString, Length, Matches } from 'class-validator';
import { Doc, IsIdentifier, Optional } from '../../infrastructure/http/field-rules';
import { IsPositiveAmount, IsReference } from '../http/validators';

/** A reason is a code, as the statement shows it: UPSTREAM_REPORT_FAILED, DUPLICATE_DEPOSIT ... */
export const ADJUSTMENT_REASON = /^[A-Z][A-Z0-9_]{0,63}$/;

export class AdjustWalletDto {
  @IsIn(['credit', 'debit'], { message: 'direction must be "credit" or "debit"' })
  direction!: 'credit' | 'debit';

  @IsPositiveAmount()
  amount!: string;

  @Doc({ examples: ['UPSTREAM_REPORT_FAILED'] })
  @Matches(ADJUSTMENT_REASON, {
    message: 'reason must be a code of 1-64 capital letters, digits and underscores, starting with a letter, e.g. UPSTREAM_REPORT_FAILED',
  })
  reason!: string;

  /** Why: kept in the WalletAdjusted event, shown on the statement. */
  @IsString()
  @Length(1, 1000, { message: 'note must be 1-1000 characters' })
  note!: string;

  /** Makes the adjustment idempotent: the same adjustment again changes nothing. Scoped to the wallet. */
  @IsReference()
  reference!: string;

  /** The final order it corrects, at most once per order and reason. */
  @Doc({ examples: ['T01JD3ZQ4N6W8Y0A2C4E6G8J0K'] })
  @Optional()
  @IsIdentifier()
  order_no?: string;
}
