import type { DepositView } from '../merchants/deposit-funds.service';

/** A wallet adjustment as asked, with who asked and, under the four-eyes rule, who approved it. */
export interface AdjustmentView {
  reference: string;
  direction: 'credit' | 'debit';
  amount: string;
  currency: string;
  reason: string;
  note: string;
  /** The final order it corrects; null for a correction of another kind. */
  order_no: string | null;
  adjusted_by: string;
  adjusted_by_name: string | null;
  /** Null when no second person was needed. */
  approved_by: string | null;
  approved_by_name: string | null;
}

/** The reply to an adjustment: the wallet right after it (as a deposit's reply), and the adjustment. */
export interface AdjustedWalletView {
  wallet: DepositView;
  adjustment: AdjustmentView;
}
