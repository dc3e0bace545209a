import { CommandBus } from '@nestjs/cqrs';
import { DepositFunds, ReleaseFunds, SettleOrder, SubmitOrder } from '../../src/ledger/commands/ledger.commands';
import { orderInput } from './fixtures';

/**
 * Mixed movements on one wallet, 16 submits at a time: a 50.00 deposit every
 * 40 orders, and orders frozen, then deducted (one in three), released (one
 * in three) or left open. About two wallet events per order.
 */
export async function buildWalletHistory(commands: CommandBus, merchantId: string, orders: number, prefix: string): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: 16 }, async () => {
      for (;;) {
        const i = next++;
        if (i >= orders) return;
        if (i % 40 === 0) await commands.execute(new DepositFunds(merchantId, `${prefix}-top-up-${i}`, 5_000n, 'ops'));
        const result = await commands.execute(new SubmitOrder(orderInput(merchantId, `${prefix}-${i}`, { amount: BigInt(50 + (i % 70)) })));
        if (result.outcome !== 'accepted') continue;
        const orderNo = result.order.order!.orderNo;
        if (i % 3 === 0) await commands.execute(new SettleOrder(orderNo));
        if (i % 3 === 1) await commands.execute(new ReleaseFunds(orderNo, 'INVALID_ACCOUNT', 'no such account'));
      }
    }),
  );
}
