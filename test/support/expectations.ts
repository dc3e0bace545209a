// Expectations written out independently of the code under test.

/**
 * A wallet's amounts folded from its events, written out here independently
 * of the ledger's own walletMovement, so tests check the one against the other.
 */
export function handFold(events: readonly { type: string; data: Record<string, unknown> }[]) {
  let balance = 0n;
  let frozen = 0n;
  for (const { type, data } of events) {
    const amount = BigInt((data.amount as string | undefined) ?? '0');
    if (type === 'FundsDeposited') balance += amount;
    if (type === 'FundsFrozen') frozen += amount;
    if (type === 'FrozenFundsDeducted') {
      balance -= amount;
      frozen -= amount;
    }
    if (type === 'FrozenFundsReleased') frozen -= amount;
    if (type === 'WalletAdjusted') balance += data.direction === 'credit' ? amount : -amount;
  }
  const money = (v: bigint) => `${v / 100n}.${(v % 100n).toString().padStart(2, '0')}`;
  return { balance: money(balance), frozen_balance: money(frozen), available_balance: money(balance - frozen) };
}

/** Every field of the contract's order object (CONTRACT §1), sorted. */
export const ORDER_KEYS = [
  'account_fields',
  'account_id',
  'amount',
  'completed_at',
  'created_at',
  'currency',
  'fail_code',
  'fail_reason',
  'order_no',
  'out_trade_no',
  'sku_id',
  'status',
];
