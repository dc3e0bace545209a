import type { ApprovalKind, ApprovalView } from '../replies';

/** Approval requests in words: what each kind is, what it would move, and who may approve it. */

export const KIND_WORDS: Record<ApprovalKind, string> = {
  resolution: 'Resolution of an order',
  bulk_resolution: 'Bulk resolution',
  deposit: 'Deposit',
  adjustment: 'Wallet adjustment',
};

/** What would move, per currency: `5000.00 USD`, or `12.00 USD and 3.50 EUR`. */
export const amountsText = (a: ApprovalView) => a.amounts.map((m) => `${m.amount} ${m.currency}`).join(' and ') || 'no money';

/** A text field of what the requesting route recorded, or undefined. */
export const payloadText = (a: ApprovalView, key: string): string | undefined => {
  const value = a.payload[key];
  return typeof value === 'string' ? value : undefined;
};

const merchantOf = (a: ApprovalView) => (a.merchant_id === null ? 'several merchants' : (a.merchant_name ?? a.merchant_id));

/** What approving it does to the money, in words: said on the card and in the confirmation. */
export function effectOf(a: ApprovalView): string {
  const amount = amountsText(a);
  const merchant = merchantOf(a);
  const orderNo = payloadText(a, 'order_no');
  switch (a.kind) {
    case 'deposit':
      return `${amount} will be credited to the wallet of ${merchant}.`;
    case 'resolution':
      return payloadText(a, 'outcome') === 'success'
        ? `Order ${orderNo} succeeds: the ${amount} frozen for it is deducted from the wallet of ${merchant}.`
        : `Order ${orderNo} fails: the ${amount} frozen for it is released to the available balance of ${merchant}.`;
    case 'adjustment':
      return `${amount} will be ${payloadText(a, 'direction') === 'debit' ? 'debited from' : 'credited to'} the wallet of ${merchant} (${payloadText(a, 'reason')}${orderNo ? `, correcting order ${orderNo}` : ''}).`;
    case 'bulk_resolution':
      return `The orders in the request are resolved as proposed, each checked against its state when it is applied: ${amount} in all.`;
  }
}

/** Who may approve each kind (besides an administrator, who may approve any): the service decides, this only says it. */
export const APPROVERS: Record<ApprovalKind, string> = {
  resolution: 'another clerk or an administrator',
  bulk_resolution: 'another clerk or an administrator',
  deposit: 'another administrator',
  adjustment: 'an administrator other than you',
};
